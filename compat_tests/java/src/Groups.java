// Java consumer groups, classic and KIP-848 (group.protocol=consumer), for compat_tests/java.
//
//   Groups <bootstrap> share <topic> <group> <classic|consumer> <records>
//       two consumers of the group, polled in turn from this thread, read the topic until together they
//       have <records> records, committing after each poll and when partitions are revoked; then the second one leaves and the first polls
//       until it owns every partition. Reports each one's assignment and records, the group as the admin
//       describes it while both are in, the first one's assignment after the second left, and the
//       group's committed offsets.
//
// Prints one JSON line: {"ok": <result>} or {"error": {"class", "message", "cause"}}.

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;

public final class Groups {
    private Groups() {}

    public static void main(String[] argv) {
        Common.main("Groups", argv, operations());
    }

    static Map<String, Common.Operation> operations() {
        Map<String, Common.Operation> operations = new LinkedHashMap<>();
        operations.put("share", Groups::share);
        return operations;
    }

    static Object share(String bootstrap, List<String> args) throws Exception {
        Common.need(args, 4, "<topic> <group> <classic|consumer> <records>");
        String topic = args.get(0);
        String group = args.get(1);
        int expected = Integer.parseInt(args.get(3));
        boolean consumerProtocol = args.get(2).equals("consumer");
        Map<String, String> settings = new HashMap<>(Map.of("group.id", group, "group.protocol", args.get(2)));
        // A classic member learns of a rebalance at its next heartbeat; a consumer-protocol member heartbeats
        // at the interval the broker gives it (and may not set one).
        if (!consumerProtocol) settings.put("heartbeat.interval.ms", "500");
        Map<String, Object> result = new LinkedHashMap<>();
        try (Admin admin = Common.admin(bootstrap)) {
            KafkaConsumer<String, String> first = Common.consumer(bootstrap, settings);
            KafkaConsumer<String, String> second = Common.consumer(bootstrap, settings);
            try {
                first.subscribe(List.of(topic), committingOnRevoke(first));
                second.subscribe(List.of(topic), committingOnRevoke(second));
                List<List<List<Object>>> read = List.of(new ArrayList<>(), new ArrayList<>());
                List<KafkaConsumer<String, String>> both = List.of(first, second);
                long deadline = System.currentTimeMillis() + Common.READ_TIMEOUT_MS;
                // Both must own partitions before the last record is counted, or one may read everything
                // before the other ever joins.
                while (read.get(0).size() + read.get(1).size() < expected
                        || first.assignment().isEmpty() || second.assignment().isEmpty()) {
                    if (System.currentTimeMillis() > deadline) {
                        throw new IllegalStateException("read " + read.get(0).size() + " + " + read.get(1).size()
                            + " of " + expected + "; assignments " + first.assignment() + " " + second.assignment());
                    }
                    for (int i = 0; i < 2; i++) {
                        ConsumerRecords<String, String> records = both.get(i).poll(Common.POLL);
                        for (ConsumerRecord<String, String> record : records) read.get(i).add(Common.row(record));
                        if (records.isEmpty()) continue;
                        try {
                            both.get(i).commitSync();
                        } catch (RebalanceInProgressException e) {
                            // The revocation that comes with the rebalance commits these positions.
                        } catch (CommitFailedException e) {
                            // A consumer-protocol commit built just before a revocation completed carries the
                            // epoch from before, which kemu refuses (STALE_MEMBER_EPOCH) where Kafka 4.3 takes
                            // it for the partitions kept (KIP-1251; test_java_groups.py has the xfail case).
                            // The next poll's commit, or the revocation's, commits these positions.
                            if (!consumerProtocol) throw e;
                        }
                    }
                }
                result.put("assignments", List.of(indexes(first.assignment()), indexes(second.assignment())));
                result.put("read", read);
                result.put("group", described(admin, group));
                second.close();
                while (first.assignment().size() != partitionsOf(first, topic)) {
                    if (System.currentTimeMillis() > deadline) {
                        throw new IllegalStateException("after the second left, still " + first.assignment());
                    }
                    for (ConsumerRecord<String, String> record : first.poll(Common.POLL)) {
                        throw new IllegalStateException("read again after the rebalance: " + Common.row(record));
                    }
                }
                result.put("afterLeave", indexes(first.assignment()));
            } finally {
                first.close();
                second.close();
            }
            Map<String, Object> offsets = new TreeMap<>();
            admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get()
                .forEach((tp, offset) -> offsets.put(String.valueOf(tp.partition()), offset.offset()));
            result.put("offsets", offsets);
        }
        return result;
    }

    /** What a member has read is committed before its partitions go to another one, so none is read twice. */
    private static ConsumerRebalanceListener committingOnRevoke(KafkaConsumer<String, String> consumer) {
        return new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                if (!partitions.isEmpty()) consumer.commitSync();
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {}
        };
    }

    private static int partitionsOf(KafkaConsumer<String, String> consumer, String topic) {
        return consumer.partitionsFor(topic).size();
    }

    private static List<Integer> indexes(java.util.Set<TopicPartition> assignment) {
        TreeSet<Integer> sorted = new TreeSet<>();
        for (TopicPartition tp : assignment) sorted.add(tp.partition());
        return new ArrayList<>(sorted);
    }

    // state(): 3.9 has no groupState() (4.0 added it, and marked state() for removal).
    @SuppressWarnings("removal")
    private static Map<String, Object> described(Admin admin, String group) throws Exception {
        ConsumerGroupDescription description = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
        List<Object> members = new ArrayList<>();
        for (MemberDescription member : description.members()) {
            members.add(Common.obj("clientId", member.clientId(),
                "partitions", indexes(member.assignment().topicPartitions())));
        }
        return Common.obj("state", description.state().toString(), "type", description.type().toString(),
            "members", members);
    }
}
