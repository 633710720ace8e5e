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
import org.apache.kafka.clients.admin.StreamsGroupDescription;
import org.apache.kafka.clients.admin.StreamsGroupMemberAssignment;
import org.apache.kafka.clients.admin.StreamsGroupMemberDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

public final class StreamsApps {
    private static final long RUN_TIMEOUT_MS = 120_000;

    private StreamsApps() {}

    public static void main(String[] argv) {
        Common.main("StreamsApps", argv, operations());
    }

    static Map<String, Common.Operation> operations() {
        Map<String, Common.Operation> operations = new LinkedHashMap<>();
        operations.put("wordcount", StreamsApps::wordCount);
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
                Path stateDir = Files.createTempDirectory("kemu-streams-");
                stateDirs.add(stateDir);
                KafkaStreams streams = new KafkaStreams(topology(input, output),
                    settings(bootstrap, applicationId, protocol, guarantee, stateDir));
                streams.start();
                running.add(streams);
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
            for (KafkaStreams streams : running) streams.close(Duration.ofSeconds(30));
            for (Path stateDir : stateDirs) deleteTree(stateDir);
        }
        return result;
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

    static Map<String, Object> describe(Admin admin, String groupId) throws Exception {
        Map<String, Object> described = new LinkedHashMap<>();
        StreamsGroupDescription group;
        try {
            group = admin.describeStreamsGroups(List.of(groupId)).all().get().get(groupId);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof GroupIdNotFoundException) {
                described.put("state", "not found");
                return described;
            }
            throw e;
        }
        described.put("state", group.groupState().toString());
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
