// Kafka Streams 4.3 applications (KIP-1071's "streams" group protocol, or the classic one), for compat_tests/java.
//
//   StreamsApps <bootstrap> wordcount <application id> <input> <output> <instances> <group protocol>
//               <processing guarantee> <line>...
//       produces the lines to <input> (no keys), then runs <instances> KafkaStreams instances of a word count
//       in this JVM (each its own state directory): split each line into words, re-key by word (a repartition
//       topic), count in a state store (a changelog topic), write every new count to <output>. The record cache
//       is off, so each word occurrence gives one output record. Waits until a read_committed reader of <output>
//       has seen each word's final count, meanwhile describing the streams group (Admin.describeStreamsGroups)
//       until it is Stable with every member holding active tasks; closes the instances (they leave the group)
//       and describes it again.
//       Reports {"counts": {word: [count, ...] in output order}, "group": {...}, "closed": {...}}.
//
//   StreamsApps <bootstrap> standby <application id> <input> <output> <processing guarantee> <line>...
//       the same word count, streams protocol only, with standby tasks taking over: sets the group config
//       streams.num.standby.replicas=1 on the group (the broker assigns standbys; the client's own
//       num.standby.replicas is ignored under this protocol), produces the first half of the lines, runs two
//       instances until the broker's assignment (Admin.describeStreamsGroups) and both instances' own view
//       (metadataForLocalThreads) agree: every task active on one member, every stateful task a standby on the
//       other, and the first half counted; then closes (leaving the group) the instance holding active stateful
//       tasks, produces the second half, and waits until the survivor holds every task, has restored the stateful
//       ones it took over, and the whole input is counted. Closes the survivor and reads the output to its end
//       (read_committed).
//       Reports {"counts": {word: [count, ...]}, "before": {...}, "moved": [task, ...], "after": {...},
//                "survivor": {"standby": {task: {"from", "read_to", "suspended"}}, "restore": {task: {"from",
//                "restored"}}}, "closed": {...}}: the survivor's standby updates and restores, by task.
//
//   StreamsApps <bootstrap> pause <application id> <input> <output> <instances> <guarantee> <paused file>
//               <resume file> <line>...
//       the word count (streams protocol) with a pause in the middle for the test to restart the broker: produces
//       the first third of the lines, runs the instances until the group is Stable with every member holding
//       active tasks and the first third is counted; produces the second third, writes <paused file> at once and
//       waits for <resume file> to exist (the instances, a read_committed reader assigned the output's partitions
//       and the admin client keep running meanwhile); then produces the last third with a new producer and waits
//       until the whole input is counted and the group is Stable again with every member holding active tasks.
//       Closes the instances and reads the output to its end.
//       Reports {"counts": {word: [count, ...]}, "before": {...}, "after": {...}, "closed": {...}}.
//
// Prints one JSON line: {"ok": <result>} or {"error": {"class", "message", "cause"}}.

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.StreamsGroupDescription;
import org.apache.kafka.clients.admin.StreamsGroupMemberAssignment;
import org.apache.kafka.clients.admin.StreamsGroupMemberDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.StandbyUpdateListener;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.TaskMetadata;

public final class StreamsApps {
    private static final long RUN_TIMEOUT_MS = 120_000;
    // How long `pause` waits for the test to restart the broker: a reference Kafka's controlled shutdown and its
    // JVM's start again take their time on a loaded machine.
    private static final long RESUME_TIMEOUT_MS = 300_000;

    private StreamsApps() {}

    public static void main(String[] argv) {
        Common.main("StreamsApps", argv, operations());
    }

    static Map<String, Common.Operation> operations() {
        Map<String, Common.Operation> operations = new LinkedHashMap<>();
        operations.put("wordcount", StreamsApps::wordCount);
        operations.put("standby", StreamsApps::standbyTakeover);
        operations.put("pause", StreamsApps::pausedWordCount);
        return operations;
    }

    static Object wordCount(String bootstrap, List<String> args) throws Exception {
        Common.need(args, 6, "<application id> <input> <output> <instances> <group protocol> <guarantee> <line>...");
        String applicationId = args.get(0);
        String input = args.get(1);
        String output = args.get(2);
        int instances = Integer.parseInt(args.get(3));
        String protocol = args.get(4);
        String guarantee = args.get(5);
        List<String> lines = args.subList(6, args.size());
        Map<String, Integer> expected = new TreeMap<>();
        for (String line : lines) {
            for (String word : words(line)) expected.merge(word, 1, Integer::sum);
        }

        try (KafkaProducer<String, String> producer = Common.producer(bootstrap, Map.of())) {
            for (String line : lines) producer.send(new ProducerRecord<>(input, null, line));
            producer.flush();
        }

        List<KafkaStreams> running = new ArrayList<>();
        List<Path> stateDirs = new ArrayList<>();
        Map<String, Object> result = new LinkedHashMap<>();
        try (Admin admin = Common.admin(bootstrap);
             KafkaConsumer<String, String> reader = Common.consumer(bootstrap, Map.of(
                 "isolation.level", "read_committed", "group.id", applicationId + "-reader"))) {
            for (int i = 0; i < instances; i++) {
                running.add(started(bootstrap, applicationId, protocol, guarantee, input, output, stateDirs, null));
            }
            reader.subscribe(List.of(output));
            Map<String, List<Long>> counts = new TreeMap<>();
            Map<String, Object> group = null;
            long deadline = System.currentTimeMillis() + RUN_TIMEOUT_MS;
            while (!complete(counts, expected) || (group == null && "streams".equals(protocol))) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("word count not complete: " + counts + ", group " + group
                        + ", states " + states(running));
                }
                for (ConsumerRecord<String, String> record : reader.poll(Common.POLL)) {
                    counts.computeIfAbsent(record.key(), k -> new ArrayList<>()).add(Long.parseLong(record.value()));
                }
                if (group == null && "streams".equals(protocol)) group = settled(admin, applicationId, instances);
            }
            result.put("counts", counts);
            result.put("group", group);
            for (KafkaStreams streams : running) streams.close(Duration.ofSeconds(30));
            running.clear();
            if ("streams".equals(protocol)) result.put("closed", describe(admin, applicationId));
        } finally {
            cleanUp(running, stateDirs);
        }
        return result;
    }

    /** What one instance did with the state of its stateful tasks ("<sub-topology>_<partition>"): as standbys
     *  (StandbyUpdateListener: the changelog offset each began at, and the offset it had read when suspended, with
     *  why), and as active tasks (StateRestoreListener: the offset each restore began at, and how many records it
     *  restored). */
    static final class StateLog implements StandbyUpdateListener, StateRestoreListener {
        final Map<String, Map<String, Object>> standby = new TreeMap<>();
        final Map<String, Map<String, Object>> restore = new TreeMap<>();
        final String changelog;

        StateLog(String changelog) {
            this.changelog = changelog;
        }

        String task(TopicPartition partition) {
            // The one stateful sub-topology (1) owns the changelog: its task of partition p is 1_p.
            return changelog.equals(partition.topic()) ? "1_" + partition.partition() : partition.toString();
        }

        synchronized void put(Map<String, Map<String, Object>> into, TopicPartition partition, String key,
                              Object value) {
            into.computeIfAbsent(task(partition), t -> new TreeMap<>()).put(key, value);
        }

        @Override
        public void onUpdateStart(TopicPartition partition, String store, long startingOffset) {
            put(standby, partition, "from", startingOffset);
        }

        @Override
        public void onBatchLoaded(TopicPartition partition, String store, TaskId taskId, long batchEndOffset,
                                  long batchSize, long currentEndOffset) {}

        @Override
        public void onUpdateSuspended(TopicPartition partition, String store, long storeOffset,
                                      long currentEndOffset, SuspendReason reason) {
            put(standby, partition, "read_to", storeOffset);
            put(standby, partition, "suspended", reason.toString());
        }

        @Override
        public void onRestoreStart(TopicPartition partition, String store, long startingOffset, long endingOffset) {
            put(restore, partition, "from", startingOffset);
        }

        @Override
        public void onBatchRestored(TopicPartition partition, String store, long batchEndOffset, long numRestored) {}

        @Override
        public void onRestoreEnd(TopicPartition partition, String store, long totalRestored) {
            put(restore, partition, "restored", totalRestored);
        }

        synchronized boolean restored(List<String> tasks) {
            return tasks.stream().allMatch(t -> restore.containsKey(t) && restore.get(t).containsKey("restored"));
        }

        synchronized Map<String, Object> snapshot() {
            Map<String, Object> copy = new LinkedHashMap<>();
            copy.put("standby", copyOf(standby));
            copy.put("restore", copyOf(restore));
            return copy;
        }

        static Map<String, Object> copyOf(Map<String, Map<String, Object>> tasks) {
            Map<String, Object> copy = new TreeMap<>();
            for (Map.Entry<String, Map<String, Object>> entry : tasks.entrySet()) {
                copy.put(entry.getKey(), new TreeMap<>(entry.getValue()));
            }
            return copy;
        }
    }

    static Object standbyTakeover(String bootstrap, List<String> args) throws Exception {
        Common.need(args, 4, "<application id> <input> <output> <guarantee> <line>...");
        String applicationId = args.get(0);
        String input = args.get(1);
        String output = args.get(2);
        String guarantee = args.get(3);
        List<String> lines = args.subList(4, args.size());
        List<String> first = lines.subList(0, lines.size() / 2);
        String changelog = applicationId + "-counts-changelog";
        List<String> allTasks = new ArrayList<>();
        int partitions;

        List<KafkaStreams> running = new ArrayList<>();
        List<StateLog> logs = new ArrayList<>();
        List<Path> stateDirs = new ArrayList<>();
        Map<String, Object> result = new LinkedHashMap<>();
        try (Admin admin = Common.admin(bootstrap);
             KafkaProducer<String, String> producer = Common.producer(bootstrap, Map.of());
             KafkaConsumer<String, String> reader = Common.consumer(bootstrap, Map.of(
                 "isolation.level", "read_committed", "group.id", applicationId + "-reader"))) {
            partitions = admin.describeTopics(List.of(input)).allTopicNames().get().get(input).partitions().size();
            for (int s = 0; s < 2; s++) {
                for (int p = 0; p < partitions; p++) allTasks.add(s + "_" + p);
            }
            ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, applicationId);
            admin.incrementalAlterConfigs(Map.of(group, List.of(new AlterConfigOp(
                new ConfigEntry("streams.num.standby.replicas", "1"), AlterConfigOp.OpType.SET)))).all().get();
            for (String line : first) producer.send(new ProducerRecord<>(input, null, line));
            producer.flush();
            for (int i = 0; i < 2; i++) {
                StateLog log = new StateLog(changelog);
                running.add(started(bootstrap, applicationId, "streams", guarantee, input, output, stateDirs, log));
                logs.add(log);
            }
            reader.subscribe(List.of(output));
            Map<String, List<Long>> counts = new TreeMap<>();
            long deadline = System.currentTimeMillis() + RUN_TIMEOUT_MS;

            // Both instances running their share: the broker's and the instances' views agree, and each instance
            // has begun updating its standbys from their changelogs.
            Map<String, Object> before = null;
            while (before == null || !complete(counts, expected(first)) || !updatingStandbys(running, logs)) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("no standby assignment settled: " + counts + ", group "
                        + describeTasks(admin, applicationId) + ", local " + local(running) + ", state "
                        + logs.stream().map(StateLog::snapshot).toList());
                }
                poll(reader, counts);
                if (before == null) before = withStandbys(admin, applicationId, running, allTasks, partitions);
            }
            result.put("before", before);

            // Stop the instance holding active stateful tasks: its standby on the other must take them over.
            int stopped = -1;
            List<String> moved = new ArrayList<>();
            for (int i = 0; i < running.size() && stopped < 0; i++) {
                for (String task : localTasks(running.get(i), true)) {
                    if (task.startsWith("1_")) moved.add(task);
                }
                if (!moved.isEmpty()) stopped = i;
            }
            if (stopped < 0) throw new IllegalStateException("no instance holds a stateful task: " + local(running));
            result.put("moved", moved);
            StateLog survivorLog = logs.get(1 - stopped);
            running.get(stopped).close(CloseOptions.groupMembershipOperation(
                CloseOptions.GroupMembershipOperation.LEAVE_GROUP).withTimeout(Duration.ofSeconds(60)));
            running.remove(stopped);

            for (String line : lines.subList(first.size(), lines.size())) {
                producer.send(new ProducerRecord<>(input, null, line));
            }
            producer.flush();
            Map<String, Object> after = null;
            deadline = System.currentTimeMillis() + RUN_TIMEOUT_MS;
            // A task taken over restores (from where its standby had read to) before it runs: once the survivor
            // runs every task, its listener has seen those restores begin and end.
            while (after == null || !complete(counts, expected(lines)) || !survivorLog.restored(moved)) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("the survivor did not take over: " + counts + ", group "
                        + describeTasks(admin, applicationId) + ", local " + local(running) + ", state "
                        + survivorLog.snapshot());
                }
                poll(reader, counts);
                if (after == null) after = withStandbys(admin, applicationId, running, allTasks, partitions);
            }
            result.put("after", after);
            result.put("survivor", survivorLog.snapshot());
            finish(result, admin, applicationId, running, reader, counts);
        } finally {
            cleanUp(running, stateDirs);
        }
        return result;
    }

    static Object pausedWordCount(String bootstrap, List<String> args) throws Exception {
        Common.need(args, 7, "<application id> <input> <output> <instances> <guarantee> <paused file> "
                    + "<resume file> <line>...");
        String applicationId = args.get(0);
        String input = args.get(1);
        String output = args.get(2);
        int instances = Integer.parseInt(args.get(3));
        String guarantee = args.get(4);
        Path paused = Path.of(args.get(5));
        Path resume = Path.of(args.get(6));
        List<String> lines = args.subList(7, args.size());
        List<String> first = lines.subList(0, lines.size() / 3);
        int second = 2 * lines.size() / 3;

        List<KafkaStreams> running = new ArrayList<>();
        List<Path> stateDirs = new ArrayList<>();
        Map<String, Object> result = new LinkedHashMap<>();
        // The reader is assigned the output's partitions rather than a group member: a member may rejoin after
        // the broker's restart and, having committed nothing, read the output again from its beginning.
        try (Admin admin = Common.admin(bootstrap);
             KafkaConsumer<String, String> reader = Common.consumer(bootstrap, Map.of(
                 "isolation.level", "read_committed"))) {
            int partitions = admin.describeTopics(List.of(output)).allTopicNames().get().get(output)
                .partitions().size();
            reader.assign(Common.partitions(output, partitions));
            reader.seekToBeginning(reader.assignment());
            produce(bootstrap, input, first);
            for (int i = 0; i < instances; i++) {
                running.add(started(bootstrap, applicationId, "streams", guarantee, input, output, stateDirs, null));
            }
            Map<String, List<Long>> counts = new TreeMap<>();
            result.put("before", countedAndSettled(admin, applicationId, instances, reader, counts,
                                                   expected(first), running));
            // The second third is being processed as the broker stops; the last is produced after it is back.
            produce(bootstrap, input, lines.subList(first.size(), second));
            Files.writeString(paused, "paused");
            long deadline = System.currentTimeMillis() + RESUME_TIMEOUT_MS;
            while (!Files.exists(resume)) {
                if (System.currentTimeMillis() > deadline) throw new IllegalStateException("never resumed");
                poll(reader, counts);
            }
            produce(bootstrap, input, lines.subList(second, lines.size()));
            result.put("after", countedAndSettled(admin, applicationId, instances, reader, counts,
                                                  expected(lines), running));
            finish(result, admin, applicationId, running, reader, counts);
        } finally {
            cleanUp(running, stateDirs);
        }
        return result;
    }

    /** A word count instance started, its state in a new directory added to `stateDirs`; `log` (if any) told of
     *  its standby updates and restores. */
    static KafkaStreams started(String bootstrap, String applicationId, String protocol, String guarantee,
                                String input, String output, List<Path> stateDirs, StateLog log) throws Exception {
        Path stateDir = Files.createTempDirectory("kemu-streams-");
        stateDirs.add(stateDir);
        KafkaStreams streams = new KafkaStreams(topology(input, output),
            settings(bootstrap, applicationId, protocol, guarantee, stateDir));
        if (log != null) {
            streams.setStandbyUpdateListener(log);
            streams.setGlobalStateRestoreListener(log);
        }
        streams.start();
        return streams;
    }

    /** Closes the instances still running (they leave the group), reads everything the application committed
     *  to the end of the output, and reports the counts and the group described once they are gone. */
    static void finish(Map<String, Object> result, Admin admin, String applicationId, List<KafkaStreams> running,
                       KafkaConsumer<String, String> reader, Map<String, List<Long>> counts) throws Exception {
        for (KafkaStreams streams : running) streams.close(Duration.ofSeconds(60));
        running.clear();
        readToEnd(reader, counts);
        result.put("counts", counts);
        result.put("closed", describe(admin, applicationId));
    }

    static void cleanUp(List<KafkaStreams> running, List<Path> stateDirs) throws Exception {
        for (KafkaStreams streams : running) streams.close(Duration.ofSeconds(30));
        for (Path stateDir : stateDirs) deleteTree(stateDir);
    }

    static void produce(String bootstrap, String topic, List<String> lines) {
        try (KafkaProducer<String, String> producer = Common.producer(bootstrap, Map.of())) {
            for (String line : lines) producer.send(new ProducerRecord<>(topic, null, line));
            producer.flush();
        }
    }

    /** Polls `reader` into `counts` until the expected counts are reached and the group is settled (Stable, every
     *  member holding active tasks); returns the group then. */
    static Map<String, Object> countedAndSettled(Admin admin, String groupId, int instances,
                                                 KafkaConsumer<String, String> reader, Map<String, List<Long>> counts,
                                                 Map<String, Integer> expected, List<KafkaStreams> running)
            throws Exception {
        long deadline = System.currentTimeMillis() + RUN_TIMEOUT_MS;
        Map<String, Object> group = null;
        while (group == null || !complete(counts, expected)) {
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("word count not complete: " + counts + ", group "
                    + describe(admin, groupId) + ", states " + states(running));
            }
            poll(reader, counts);
            if (group == null) group = settled(admin, groupId, instances);
        }
        return group;
    }

    /** Everything committed to the reader's partitions, to their ends (read_committed: the last stable offsets). */
    static void readToEnd(KafkaConsumer<String, String> reader, Map<String, List<Long>> counts) {
        Map<TopicPartition, Long> ends = reader.endOffsets(reader.assignment());
        long deadline = System.currentTimeMillis() + RUN_TIMEOUT_MS;
        while (ends.entrySet().stream().anyMatch(e -> reader.position(e.getKey()) < e.getValue())) {
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("the output not read to its end " + ends + ": " + counts);
            }
            poll(reader, counts);
        }
    }

    /** Whether every standby task of each instance has had its changelog registered (onUpdateStart). */
    static boolean updatingStandbys(List<KafkaStreams> running, List<StateLog> logs) {
        for (int i = 0; i < running.size(); i++) {
            StateLog log = logs.get(i);
            synchronized (log) {
                if (!log.standby.keySet().containsAll(localTasks(running.get(i), false))) return false;
            }
        }
        return true;
    }

    static Map<String, Integer> expected(List<String> lines) {
        Map<String, Integer> expected = new TreeMap<>();
        for (String line : lines) {
            for (String word : words(line)) expected.merge(word, 1, Integer::sum);
        }
        return expected;
    }

    static void poll(KafkaConsumer<String, String> reader, Map<String, List<Long>> counts) {
        for (ConsumerRecord<String, String> record : reader.poll(Common.POLL)) {
            counts.computeIfAbsent(record.key(), k -> new ArrayList<>()).add(Long.parseLong(record.value()));
        }
    }

    /** The group once the broker's current assignment is its target, every task of `allTasks` active on one
     *  member, every stateful task (sub-topology 1) a standby on a member not holding it active, and each running
     *  instance's own view the same as some member's; else null. With one instance left, it has no standbys. */
    static Map<String, Object> withStandbys(Admin admin, String groupId, List<KafkaStreams> running,
                                            List<String> allTasks, int partitions) throws Exception {
        Map<String, Object> described = describeTasks(admin, groupId);
        if (!"Stable".equals(described.get("state"))) return null;
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> members = (List<Map<String, Object>>) described.get("members");
        if (members.size() != running.size()) return null;
        List<String> active = new ArrayList<>();
        List<String> standby = new ArrayList<>();
        for (Map<String, Object> member : members) {
            if (!Boolean.TRUE.equals(member.get("reconciled"))) return null;
            @SuppressWarnings("unchecked")
            List<String> own = (List<String>) member.get("active");
            @SuppressWarnings("unchecked")
            List<String> standbys = (List<String>) member.get("standby");
            if (own.isEmpty() || standbys.stream().anyMatch(own::contains)) return null;
            active.addAll(own);
            standby.addAll(standbys);
        }
        active.sort(null);
        standby.sort(null);
        List<String> stateful = new ArrayList<>();
        if (running.size() > 1) {
            for (int p = 0; p < partitions; p++) stateful.add("1_" + p);
        }
        if (!active.equals(allTasks) || !standby.equals(stateful)) return null;
        List<Map<String, Object>> views = new ArrayList<>();
        for (Map<String, Object> member : members) {
            views.add(Common.obj("active", member.get("active"), "standby", member.get("standby")));
        }
        for (KafkaStreams streams : running) {
            if (streams.state() != KafkaStreams.State.RUNNING) return null;
            Map<String, Object> view = Common.obj("active", localTasks(streams, true), "standby",
                                                  localTasks(streams, false));
            if (!views.contains(view)) return null;
        }
        return described;
    }

    /** The group's state and each member's current tasks (sorted by its active tasks), and whether its current
     *  assignment is its target. */
    static Map<String, Object> describeTasks(Admin admin, String groupId) throws Exception {
        StreamsGroupDescription group = described(admin, groupId);
        Map<String, Object> described = stateOf(group);
        if (group == null) return described;
        List<Map<String, Object>> members = new ArrayList<>();
        for (StreamsGroupMemberDescription member : group.members()) {
            StreamsGroupMemberAssignment current = member.assignment();
            StreamsGroupMemberAssignment target = member.targetAssignment();
            members.add(Common.obj(
                "active", tasks(current.activeTasks()), "standby", tasks(current.standbyTasks()),
                "warmup", tasks(current.warmupTasks()),
                "reconciled", tasks(current.activeTasks()).equals(tasks(target.activeTasks()))
                    && tasks(current.standbyTasks()).equals(tasks(target.standbyTasks()))
                    && tasks(current.warmupTasks()).equals(tasks(target.warmupTasks()))));
        }
        members.sort((a, b) -> String.valueOf(a.get("active")).compareTo(String.valueOf(b.get("active"))));
        described.put("members", members);
        return described;
    }

    /** An instance's own active (or standby) tasks, "<sub-topology>_<partition>", sorted. */
    static List<String> localTasks(KafkaStreams streams, boolean active) {
        TreeSet<String> tasks = new TreeSet<>();
        for (ThreadMetadata thread : streams.metadataForLocalThreads()) {
            for (TaskMetadata task : active ? thread.activeTasks() : thread.standbyTasks()) {
                tasks.add(task.taskId().subtopology() + "_" + task.taskId().partition());
            }
        }
        return new ArrayList<>(tasks);
    }

    static List<Object> local(List<KafkaStreams> running) {
        List<Object> views = new ArrayList<>();
        for (KafkaStreams streams : running) {
            views.add(Common.obj("state", streams.state().toString(), "active", localTasks(streams, true),
                                 "standby", localTasks(streams, false)));
        }
        return views;
    }

    static List<String> words(String line) {
        List<String> words = new ArrayList<>();
        for (String word : line.toLowerCase(Locale.ROOT).split("\\W+")) {
            if (!word.isEmpty()) words.add(word);
        }
        return words;
    }

    static org.apache.kafka.streams.Topology topology(String input, String output) {
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
            .flatMapValues(StreamsApps::words)
            .groupBy((key, word) -> word, Grouped.with("words", Serdes.String(), Serdes.String()))
            .count(Materialized.as("counts"))
            .toStream()
            .mapValues(String::valueOf)
            .to(output, Produced.with(Serdes.String(), Serdes.String()));
        return builder.build();
    }

    static Properties settings(String bootstrap, String applicationId, String protocol, String guarantee,
                               Path stateDir) {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, protocol);
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, guarantee);
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        // Every count is written: no record cache to fold updates of one word together.
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, "0");
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "100");
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, "1");
        props.put(StreamsConfig.consumerPrefix("fetch.max.wait.ms"), "100");
        props.put(StreamsConfig.RETRY_BACKOFF_MS_CONFIG, "100");
        return props;
    }

    static boolean complete(Map<String, List<Long>> counts, Map<String, Integer> expected) {
        for (Map.Entry<String, Integer> entry : expected.entrySet()) {
            List<Long> seen = counts.get(entry.getKey());
            if (seen == null || seen.isEmpty() || seen.get(seen.size() - 1) < entry.getValue()) return false;
        }
        return true;
    }

    /** The group once it is Stable with every member holding active tasks, else null (not there yet). */
    static Map<String, Object> settled(Admin admin, String groupId, int instances) throws Exception {
        Map<String, Object> described = describe(admin, groupId);
        @SuppressWarnings("unchecked")
        List<List<String>> active = (List<List<String>>) described.get("active_tasks");
        if (active == null) return null;  // the group is not there yet
        boolean everyMember = active.size() == instances && active.stream().noneMatch(List::isEmpty);
        return "Stable".equals(described.get("state")) && everyMember ? described : null;
    }

    /** Admin.describeStreamsGroups of one group; null when there is none. */
    static StreamsGroupDescription described(Admin admin, String groupId) throws Exception {
        try {
            return admin.describeStreamsGroups(List.of(groupId)).all().get().get(groupId);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof GroupIdNotFoundException) return null;
            throw e;
        }
    }

    static Map<String, Object> stateOf(StreamsGroupDescription group) {
        Map<String, Object> described = new LinkedHashMap<>();
        described.put("state", group == null ? "not found" : group.groupState().toString());
        return described;
    }

    static Map<String, Object> describe(Admin admin, String groupId) throws Exception {
        StreamsGroupDescription group = described(admin, groupId);
        Map<String, Object> described = stateOf(group);
        if (group == null) return described;
        described.put("members", group.members().size());
        described.put("subtopologies", group.subtopologies().size());
        List<List<String>> active = new ArrayList<>();
        TreeSet<String> all = new TreeSet<>();
        for (StreamsGroupMemberDescription member : group.members()) {
            List<String> tasks = tasks(member.assignment().activeTasks());
            active.add(tasks);
            all.addAll(tasks);
        }
        active.sort((a, b) -> String.join(",", a).compareTo(String.join(",", b)));
        described.put("active_tasks", active);
        described.put("all_active_tasks", new ArrayList<>(all));
        return described;
    }

    static List<String> tasks(Collection<StreamsGroupMemberAssignment.TaskIds> taskIds) {
        TreeSet<String> tasks = new TreeSet<>();
        for (StreamsGroupMemberAssignment.TaskIds ids : taskIds) {
            for (int partition : ids.partitions()) tasks.add(ids.subtopologyId() + "_" + partition);
        }
        return new ArrayList<>(tasks);
    }

    static List<String> states(List<KafkaStreams> running) {
        List<String> states = new ArrayList<>();
        for (KafkaStreams streams : running) states.add(streams.state().toString());
        return states;
    }

    static void deleteTree(Path root) throws Exception {
        if (!Files.exists(root)) return;
        try (var paths = Files.walk(root)) {
            for (Path path : (Iterable<Path>) paths.sorted((a, b) -> b.compareTo(a))::iterator) {
                Files.deleteIfExists(path);
            }
        }
    }
}
