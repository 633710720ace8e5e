// The Java producer's idempotence and transactions, and the read_committed consumer, for compat_tests/java.
//
//   Transactions <bootstrap> idempotent <topic> <perPartition> <compression>...
//       for each compression type one idempotent producer (acks=all, 5 in flight) writes "v-<p>-<n>" and
//       then "end" to partition p; reports the offsets the sends were given, what a consumer reads back and
//       each partition's producers as the admin's describeProducers sees them.
//   Transactions <bootstrap> commit-abort <topic> <partitions> <transactionalId>
//       one transaction writing "committed-<p>" to every partition is committed, a second writing
//       "aborted-<p>" is aborted, then "end" goes to every partition outside any transaction; reports what a
//       read_committed and a read_uncommitted consumer read up to the end records.
//   Transactions <bootstrap> zombie <topic> <transactionalIdA> <transactionalIdB>
//       for each id: a producer writes in a transaction; a second producer with the same transactional id
//       starts, which fences the first, and commits "from-<id>"; reports what the first one's commit and a
//       further send throw (A: commit first, B: send first), and what read_committed reads.
//   Transactions <bootstrap> consume-transform-produce <source> <sink> <group> <transactionalId> <count>
//       a read_committed consumer in <group> reads <source>; each poll's records go upper-cased to the same
//       partition of <sink> in a transaction that also commits the consumed offsets
//       (sendOffsetsToTransaction). The first such transaction is aborted and the consumer rewound to the
//       group's committed offsets, as an exactly-once loop does after a failure. Ends after <count> records
//       were committed; reports the group's committed offsets as the admin lists them.
//   Transactions <bootstrap> lso <topic> <transactionalIdA> <transactionalIdB>
//       on partition 0: 3 plain records, an aborted transaction of 2 (by A), a transaction of 2 left open
//       (by B), 2 plain records, a committed transaction of 1 (by A). A read_committed consumer reads up to
//       the LSO and stops there; then B commits and the consumer reads on to the end. Reports both reads,
//       the end offsets each isolation level's consumer is told, and the consumer's position at each stop.
//   Transactions <bootstrap> epochs <topic> <partitions> <transactionalId> <group>
//       one producer runs four transactions, committed, committed, aborted, committed, each writing
//       "<n>-<p>" to every partition, the second and the fourth also committing offsets of <group>
//       (sendOffsetsToTransaction with the group's metadata, no member); after initTransactions and after
//       each end the admin's describeTransactions gives the producer id, epoch and state. Reports those,
//       what read_committed reads up to the end records and the group's committed offsets: under
//       transactions version 2 the epoch goes up by one at every end, under version 1 it stays.
//
// Prints one JSON line: {"ok": <result>} or {"error": {"class", "message", "cause"}}.

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Future;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.DescribeProducersResult.PartitionProducerState;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;

public final class Transactions {
    private static final Map<String, String> READ_COMMITTED = Map.of("isolation.level", "read_committed");
    private static final Map<String, String> READ_UNCOMMITTED = Map.of("isolation.level", "read_uncommitted");

    private Transactions() {}

    public static void main(String[] argv) {
        Common.main("Transactions", argv, operations());
    }

    static Map<String, Common.Operation> operations() {
        Map<String, Common.Operation> operations = new LinkedHashMap<>();
        operations.put("idempotent", Transactions::idempotent);
        operations.put("commit-abort", Transactions::commitAbort);
        operations.put("zombie", Transactions::zombie);
        operations.put("consume-transform-produce", Transactions::consumeTransformProduce);
        operations.put("lso", Transactions::lso);
        operations.put("epochs", Transactions::epochs);
        return operations;
    }

    static Object idempotent(String bootstrap, List<String> args) throws Exception {
        Common.need(args, 3, "<topic> <perPartition> <compression>...");
        String topic = args.get(0);
        int perPartition = Integer.parseInt(args.get(1));
        List<String> compressions = args.subList(2, args.size());
        List<List<Long>> offsets = new ArrayList<>();
        List<KafkaProducer<String, String>> producers = new ArrayList<>();
        try {
            List<List<Future<RecordMetadata>>> sent = new ArrayList<>();
            for (int p = 0; p < compressions.size(); p++) {
                KafkaProducer<String, String> producer = Common.producer(bootstrap, Map.of(
                    "enable.idempotence", "true", "acks", "all", "max.in.flight.requests.per.connection", "5",
                    "compression.type", compressions.get(p)));
                producers.add(producer);
                List<Future<RecordMetadata>> these = new ArrayList<>();
                for (int n = 0; n < perPartition; n++) {
                    these.add(producer.send(new ProducerRecord<>(topic, p, "k" + n, "v-" + p + "-" + n)));
                }
                these.add(producer.send(new ProducerRecord<>(topic, p, null, Common.END)));
                sent.add(these);
            }
            for (List<Future<RecordMetadata>> these : sent) {
                List<Long> got = new ArrayList<>();
                for (Future<RecordMetadata> future : these) got.add(future.get().offset());
                offsets.add(got);
            }
        } finally {
            for (KafkaProducer<String, String> producer : producers) producer.close();
        }
        List<TopicPartition> all = Common.partitions(topic, compressions.size());
        List<List<Object>> read;
        try (KafkaConsumer<String, String> consumer = Common.consumer(bootstrap, READ_COMMITTED)) {
            read = Common.readUntilEnd(consumer, all);
        }
        List<Object> states = new ArrayList<>();
        try (Admin admin = Common.admin(bootstrap)) {
            Map<TopicPartition, PartitionProducerState> described = admin.describeProducers(all).all().get();
            for (TopicPartition tp : all) {
                List<Object> active = new ArrayList<>();
                for (ProducerState state : described.get(tp).activeProducers()) {
                    active.add(Common.obj("producerId", state.producerId(), "epoch", state.producerEpoch(),
                        "lastSequence", state.lastSequence(), "transactionStart",
                        state.currentTransactionStartOffset().isPresent()
                            ? state.currentTransactionStartOffset().getAsLong() : null));
                }
                states.add(active);
            }
        }
        return Common.obj("offsets", offsets, "read", read, "producers", states);
    }

    static Object commitAbort(String bootstrap, List<String> args) throws Exception {
        Common.need(args, 3, "<topic> <partitions> <transactionalId>");
        String topic = args.get(0);
        int partitions = Integer.parseInt(args.get(1));
        try (KafkaProducer<String, String> producer = Common.transactional(bootstrap, args.get(2))) {
            for (String outcome : List.of("committed", "aborted")) {
                producer.beginTransaction();
                for (int p = 0; p < partitions; p++) producer.send(new ProducerRecord<>(topic, p, null, outcome + "-" + p));
                // abortTransaction drops what is still unsent: flush, so that the aborted records are in the log.
                producer.flush();
                if (outcome.equals("committed")) producer.commitTransaction();
                else producer.abortTransaction();
            }
        }
        writeEnds(bootstrap, topic, partitions);
        List<TopicPartition> all = Common.partitions(topic, partitions);
        try (KafkaConsumer<String, String> committed = Common.consumer(bootstrap, READ_COMMITTED);
             KafkaConsumer<String, String> uncommitted = Common.consumer(bootstrap, READ_UNCOMMITTED)) {
            return Common.obj("readCommitted", Common.readUntilEnd(committed, all),
                "readUncommitted", Common.readUntilEnd(uncommitted, all));
        }
    }

    static Object zombie(String bootstrap, List<String> args) throws Exception {
        Common.need(args, 3, "<topic> <transactionalIdA> <transactionalIdB>");
        String topic = args.get(0);
        Map<String, Object> outcome = new LinkedHashMap<>();
        outcome.put("commitFirst", fenced(bootstrap, topic, args.get(1), true));
        outcome.put("sendFirst", fenced(bootstrap, topic, args.get(2), false));
        writeEnds(bootstrap, topic, 1);
        try (KafkaConsumer<String, String> consumer = Common.consumer(bootstrap, READ_COMMITTED)) {
            outcome.put("readCommitted", Common.readUntilEnd(consumer, Common.partitions(topic, 1)));
        }
        return outcome;
    }

    /** A zombie's transaction, fenced by a successor with its transactional id that commits "from-<id>";
     *  what the zombie's commit and a further send then throw, in the order asked. */
    private static Map<String, Object> fenced(String bootstrap, String topic, String transactionalId,
                                              boolean commitFirst) throws Exception {
        Map<String, Object> thrown = new LinkedHashMap<>();
        try (KafkaProducer<String, String> zombie = Common.transactional(bootstrap, transactionalId)) {
            zombie.beginTransaction();
            zombie.send(new ProducerRecord<>(topic, 0, null, "from-the-zombie")).get();
            try (KafkaProducer<String, String> successor = Common.transactional(bootstrap, transactionalId)) {
                successor.beginTransaction();
                successor.send(new ProducerRecord<>(topic, 0, null, "from-" + transactionalId)).get();
                successor.commitTransaction();
            }
            Common.Callable send = () -> zombie.send(new ProducerRecord<>(topic, 0, null, "zombie-again")).get();
            if (commitFirst) thrown.put("commit", Common.thrown(zombie::commitTransaction));
            thrown.put("send", Common.thrown(send));
            if (!commitFirst) thrown.put("commit", Common.thrown(zombie::commitTransaction));
        }
        return thrown;
    }

    static Object consumeTransformProduce(String bootstrap, List<String> args) throws Exception {
        Common.need(args, 5, "<source> <sink> <group> <transactionalId> <count>");
        String source = args.get(0);
        String sink = args.get(1);
        String group = args.get(2);
        int count = Integer.parseInt(args.get(4));
        int committed = 0;
        int aborted = 0;
        Map<String, String> settings = new HashMap<>(READ_COMMITTED);
        settings.put("group.id", group);
        settings.put("max.poll.records", String.valueOf(Math.max(1, count / 4)));
        try (KafkaProducer<String, String> producer = Common.transactional(bootstrap, args.get(3));
             KafkaConsumer<String, String> consumer = Common.consumer(bootstrap, settings)) {
            consumer.subscribe(List.of(source));
            long deadline = System.currentTimeMillis() + Common.READ_TIMEOUT_MS;
            while (committed < count) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("only " + committed + " of " + count + " processed");
                }
                ConsumerRecords<String, String> records = consumer.poll(Common.POLL);
                if (records.isEmpty()) continue;
                Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();
                producer.beginTransaction();
                for (ConsumerRecord<String, String> record : records) {
                    producer.send(new ProducerRecord<>(sink, record.partition(), record.key(),
                        record.value().toUpperCase()));
                    next.put(new TopicPartition(record.topic(), record.partition()),
                        new OffsetAndMetadata(record.offset() + 1));
                }
                producer.sendOffsetsToTransaction(next, consumer.groupMetadata());
                if (aborted == 0) {
                    // As a transaction that failed after its records went out: they are in the log, aborted.
                    producer.flush();
                    producer.abortTransaction();
                    aborted = records.count();
                    rewindToCommitted(consumer);
                } else {
                    producer.commitTransaction();
                    committed += records.count();
                }
            }
            // Kafka makes a transaction's offsets visible when it writes its markers, after it answered EndTxn:
            // the read_committed consumer's committed() asks for stable offsets (OffsetFetch require_stable) and
            // waits out UNSTABLE_OFFSET_COMMIT, so that the admin below lists what was committed.
            consumer.committed(consumer.assignment());
        }
        Map<String, Object> offsets = new LinkedHashMap<>();
        try (Admin admin = Common.admin(bootstrap)) {
            admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get()
                .forEach((tp, offset) -> offsets.put(String.valueOf(tp.partition()), offset.offset()));
        }
        return Common.obj("committed", committed, "aborted", aborted, "offsets", offsets);
    }

    /** After an aborted transaction, the consumer starts again from what the group committed. */
    private static void rewindToCommitted(KafkaConsumer<String, String> consumer) {
        Set<TopicPartition> assigned = consumer.assignment();
        Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(assigned);
        for (TopicPartition tp : assigned) {
            OffsetAndMetadata offset = committed.get(tp);
            if (offset == null) consumer.seekToBeginning(List.of(tp));
            else consumer.seek(tp, offset.offset());
        }
    }

    static Object lso(String bootstrap, List<String> args) throws Exception {
        Common.need(args, 3, "<topic> <transactionalIdA> <transactionalIdB>");
        String topic = args.get(0);
        TopicPartition p0 = new TopicPartition(topic, 0);
        Map<String, Object> result = new LinkedHashMap<>();
        try (KafkaProducer<String, String> plain = Common.producer(bootstrap, Map.of("enable.idempotence", "true"));
             KafkaProducer<String, String> a = Common.transactional(bootstrap, args.get(1));
             KafkaProducer<String, String> b = Common.transactional(bootstrap, args.get(2));
             KafkaConsumer<String, String> committed = Common.consumer(bootstrap, READ_COMMITTED);
             KafkaConsumer<String, String> uncommitted = Common.consumer(bootstrap, READ_UNCOMMITTED)) {
            for (int n = 0; n < 3; n++) plain.send(new ProducerRecord<>(topic, 0, null, "before-" + n));
            plain.flush();
            a.beginTransaction();
            for (int n = 0; n < 2; n++) a.send(new ProducerRecord<>(topic, 0, null, "aborted-" + n));
            a.flush();
            a.abortTransaction();
            b.beginTransaction();
            for (int n = 0; n < 2; n++) b.send(new ProducerRecord<>(topic, 0, null, "open-" + n));
            b.flush();
            for (int n = 0; n < 2; n++) plain.send(new ProducerRecord<>(topic, 0, null, "after-" + n));
            plain.flush();
            a.beginTransaction();
            a.send(new ProducerRecord<>(topic, 0, null, "committed-0"));
            a.commitTransaction();

            committed.assign(List.of(p0));
            committed.seekToBeginning(List.of(p0));
            long stable = committed.endOffsets(List.of(p0)).get(p0);
            result.put("endOffsetReadCommitted", stable);
            result.put("endOffsetReadUncommitted", uncommitted.endOffsets(List.of(p0)).get(p0));
            result.put("beforeCommit", readUpTo(committed, p0, stable));
            // Having reached the LSO, the consumer gets nothing more however long it polls: one more poll
            // round must leave its position where it was.
            for (ConsumerRecord<String, String> record : committed.poll(Common.POLL.multipliedBy(3))) {
                throw new IllegalStateException("read past the LSO: " + Common.row(record));
            }
            result.put("positionAtLso", committed.position(p0));

            b.commitTransaction();
            long end = stableOffsetPast(committed, p0, stable);
            result.put("endOffsetAfterCommit", end);
            result.put("afterCommit", readUpTo(committed, p0, end));
            result.put("positionAtEnd", committed.position(p0));
        }
        return result;
    }

    static Object epochs(String bootstrap, List<String> args) throws Exception {
        Common.need(args, 4, "<topic> <partitions> <transactionalId> <group>");
        String topic = args.get(0);
        int partitions = Integer.parseInt(args.get(1));
        String transactionalId = args.get(2);
        String group = args.get(3);
        List<Object> seen = new ArrayList<>();
        try (KafkaProducer<String, String> producer = Common.transactional(bootstrap, transactionalId);
             Admin admin = Common.admin(bootstrap)) {
            seen.add(described(admin, transactionalId, "init"));
            List<String> outcomes = List.of("commit", "commit", "abort", "commit");
            for (int n = 0; n < outcomes.size(); n++) {
                producer.beginTransaction();
                for (int p = 0; p < partitions; p++) producer.send(new ProducerRecord<>(topic, p, null, n + "-" + p));
                if (n % 2 == 1) {
                    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                    for (int p = 0; p < partitions; p++) offsets.put(new TopicPartition(topic, p), new OffsetAndMetadata(n));
                    producer.sendOffsetsToTransaction(offsets, new ConsumerGroupMetadata(group));
                }
                producer.flush();
                if (outcomes.get(n).equals("commit")) producer.commitTransaction();
                else producer.abortTransaction();
                seen.add(described(admin, transactionalId, outcomes.get(n)));
            }
        }
        writeEnds(bootstrap, topic, partitions);
        Map<String, Object> offsets = new LinkedHashMap<>();
        try (Admin admin = Common.admin(bootstrap);
             KafkaConsumer<String, String> consumer = Common.consumer(bootstrap, READ_COMMITTED)) {
            List<List<Object>> read = Common.readUntilEnd(consumer, Common.partitions(topic, partitions));
            admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get()
                .forEach((tp, offset) -> offsets.put(String.valueOf(tp.partition()), offset.offset()));
            return Common.obj("transactions", seen, "readCommitted", read, "offsets", offsets);
        }
    }

    /** The transactional id as the admin describes it once its last transaction is complete (the markers are
     *  written after EndTxn is answered). */
    private static Map<String, Object> described(Admin admin, String transactionalId, String after)
            throws Exception {
        long deadline = System.currentTimeMillis() + Common.READ_TIMEOUT_MS;
        while (true) {
            TransactionDescription description = admin.describeTransactions(List.of(transactionalId))
                .description(transactionalId).get();
            String state = description.state().toString();
            if (!state.startsWith("Prepare") || System.currentTimeMillis() > deadline) {
                return Common.obj("after", after, "producerId", description.producerId(),
                    "epoch", (int) description.producerEpoch(), "state", state);
            }
            Thread.sleep(Common.POLL.toMillis() / 4);
        }
    }

    /** The partition's end offset for the (read_committed) consumer once it has moved past `before`: Kafka
     *  writes a transaction's markers after it answered EndTxn, so the LSO moves a moment after the commit. */
    private static long stableOffsetPast(KafkaConsumer<String, String> consumer, TopicPartition tp, long before)
            throws InterruptedException {
        long deadline = System.currentTimeMillis() + Common.READ_TIMEOUT_MS;
        for (long end = consumer.endOffsets(List.of(tp)).get(tp); ; end = consumer.endOffsets(List.of(tp)).get(tp)) {
            if (end > before) return end;
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("the stable offset stayed at " + end + " after the commit");
            }
            Thread.sleep(Common.POLL.toMillis() / 4);
        }
    }

    /** What the consumer reads until its position reaches `end`. */
    private static List<List<Object>> readUpTo(KafkaConsumer<String, String> consumer, TopicPartition tp, long end) {
        List<List<Object>> seen = new ArrayList<>();
        long deadline = System.currentTimeMillis() + Common.READ_TIMEOUT_MS;
        while (consumer.position(tp) < end) {
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("position " + consumer.position(tp) + " never reached " + end);
            }
            for (ConsumerRecord<String, String> record : consumer.poll(Common.POLL)) seen.add(Common.row(record));
        }
        return seen;
    }

    private static void writeEnds(String bootstrap, String topic, int partitions) throws Exception {
        try (KafkaProducer<String, String> plain = Common.producer(bootstrap, Map.of())) {
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int p = 0; p < partitions; p++) sent.add(plain.send(new ProducerRecord<>(topic, p, null, Common.END)));
            for (Future<RecordMetadata> future : sent) future.get();
        }
    }
}
