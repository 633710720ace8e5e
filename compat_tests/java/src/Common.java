// Shared plumbing for the Java client programs of compat_tests/java: the client settings every program
// starts from, reading until the end records, a JSON writer (the JDK has none), and the {"ok"} / {"error"}
// envelope of one JSON line on stdout. The client's own log goes to stderr through slf4j's no-op binding.
//
//   java -cp <classes>:<kafka-clients and friends> <Program> <bootstrap> <operation> [args...]
//
// runs one operation by hand; the tests send theirs to one Runner per client line instead (Runner.java).

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

final class Common {
    static final int USAGE_EXIT_CODE = 2;
    static final String END = "end";
    static final Duration POLL = Duration.ofMillis(200);
    static final long READ_TIMEOUT_MS = 30_000;

    private Common() {}

    interface Operation {
        Object run(String bootstrap, List<String> args) throws Exception;
    }

    static final class UsageError extends RuntimeException {
        private static final long serialVersionUID = 1L;

        UsageError(String message) { super(message); }
    }

    /** One program run by hand: `java <Program> <bootstrap> <operation> [args...]`, one answer, then exit. */
    static void main(String program, String[] argv, Map<String, Operation> operations) {
        if (argv.length < 2 || !operations.containsKey(argv[1])) {
            System.err.println("usage: " + program + " <bootstrap> (" + String.join("|", operations.keySet())
                + ") [args...]");
            System.exit(USAGE_EXIT_CODE);
        }
        String out;
        try {
            out = answer(operations.get(argv[1]), argv[0], List.of(argv).subList(2, argv.length));
        } catch (UsageError e) {
            System.err.println("usage: " + program + " <bootstrap> " + argv[1] + " " + e.getMessage());
            System.exit(USAGE_EXIT_CODE);
            return;
        }
        System.out.println(out);
        System.out.flush();
        // Client threads (a producer's sender, an admin's network thread) left by a failed run must not keep
        // the JVM alive.
        System.exit(0);
    }

    /** The operation's JSON line: {"ok": result}, or {"error": ...} for what the client threw. A UsageError
     *  (the arguments are wrong, a bug of the caller's) is thrown on. */
    static String answer(Operation operation, String bootstrap, List<String> args) {
        try {
            return json(obj("ok", operation.run(bootstrap, args)));
        } catch (UsageError e) {
            throw e;
        } catch (Exception e) {
            return json(obj("error", describe(e)));
        }
    }

    static void need(List<String> args, int count, String usage) {
        if (args.size() < count) throw new UsageError(usage);
    }

    /** The exception behind a future's ExecutionException, as the caller of a blocking call would see it. */
    static Throwable unwrap(Throwable error) {
        return error instanceof ExecutionException && error.getCause() != null ? error.getCause() : error;
    }

    static Map<String, Object> describe(Throwable error) {
        Throwable shown = unwrap(error);
        Map<String, Object> described = new LinkedHashMap<>();
        described.put("class", shown.getClass().getName());
        described.put("message", shown.getMessage());
        if (shown.getCause() != null && shown.getCause() != shown) described.put("cause", describe(shown.getCause()));
        return described;
    }

    /** The exception class a call threw (through its future), or null when it succeeded. */
    static String thrown(Callable call) {
        try {
            call.call();
            return null;
        } catch (Exception e) {
            return unwrap(e).getClass().getName();
        }
    }

    interface Callable {
        void call() throws Exception;
    }

    // --- client settings ---------------------------------------------------------------------------

    static Properties client(String bootstrap) {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("client.id", "kemu-compat-java");
        // Quick retries and bounded blocking: a broker bug should surface as an exception well inside the
        // test's timeout, not as a hang.
        props.put("reconnect.backoff.ms", "50");
        props.put("reconnect.backoff.max.ms", "1000");
        props.put("retry.backoff.ms", "50");
        props.put("retry.backoff.max.ms", "1000");
        props.put("request.timeout.ms", "15000");
        props.put("default.api.timeout.ms", "30000");
        return props;
    }

    static KafkaProducer<String, String> producer(String bootstrap, Map<String, String> settings) {
        Properties props = client(bootstrap);
        props.put("linger.ms", "5");
        props.put("max.block.ms", "30000");
        props.put("delivery.timeout.ms", "30000");
        props.putAll(settings);
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }

    static KafkaProducer<String, String> transactional(String bootstrap, String transactionalId) {
        KafkaProducer<String, String> producer = producer(bootstrap, Map.of("transactional.id", transactionalId));
        producer.initTransactions();
        return producer;
    }

    static KafkaConsumer<String, String> consumer(String bootstrap, Map<String, String> settings) {
        Properties props = client(bootstrap);
        props.put("enable.auto.commit", "false");
        props.put("auto.offset.reset", "earliest");
        props.put("fetch.max.wait.ms", "100");
        props.putAll(settings);
        return new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer());
    }

    static Admin admin(String bootstrap) {
        return Admin.create(client(bootstrap));
    }

    static List<TopicPartition> partitions(String topic, int count) {
        List<TopicPartition> all = new ArrayList<>();
        for (int p = 0; p < count; p++) all.add(new TopicPartition(topic, p));
        return all;
    }

    /** [topic, partition, offset, value] of each record, up to the END record of every partition given;
     *  the consumer is assigned those partitions from their beginning. */
    static List<List<Object>> readUntilEnd(KafkaConsumer<String, String> consumer, Collection<TopicPartition> from) {
        consumer.assign(from);
        consumer.seekToBeginning(from);
        List<List<Object>> seen = new ArrayList<>();
        List<TopicPartition> ended = new ArrayList<>();
        long deadline = System.currentTimeMillis() + READ_TIMEOUT_MS;
        while (ended.size() < from.size()) {
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("end records not all read: only " + ended + " after " + seen);
            }
            for (ConsumerRecord<String, String> record : consumer.poll(POLL)) {
                TopicPartition where = new TopicPartition(record.topic(), record.partition());
                if (END.equals(record.value())) ended.add(where);
                else seen.add(row(record));
            }
        }
        return seen;
    }

    static List<Object> row(ConsumerRecord<String, String> record) {
        return List.of(record.topic(), record.partition(), record.offset(), record.value());
    }

    // --- JSON --------------------------------------------------------------------------------------

    static <V> Map<String, V> obj(Object... keysAndValues) {
        Map<String, V> map = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            @SuppressWarnings("unchecked") V value = (V) keysAndValues[i + 1];
            map.put((String) keysAndValues[i], value);
        }
        return map;
    }

    static String json(Object value) {
        StringBuilder out = new StringBuilder();
        write(out, value);
        return out.toString();
    }

    private static void write(StringBuilder out, Object value) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String) {
            string(out, (String) value);
        } else if (value instanceof Number || value instanceof Boolean) {
            out.append(value);
        } else if (value instanceof Map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> entry : ((Map<?, ?>) value).entrySet()) {
                if (!first) out.append(',');
                first = false;
                string(out, String.valueOf(entry.getKey()));
                out.append(':');
                write(out, entry.getValue());
            }
            out.append('}');
        } else if (value instanceof Collection) {
            out.append('[');
            boolean first = true;
            for (Object item : (Collection<?>) value) {
                if (!first) out.append(',');
                first = false;
                write(out, item);
            }
            out.append(']');
        } else {
            string(out, value.toString());
        }
    }

    private static void string(StringBuilder out, String text) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"': out.append("\\\""); break;
                case '\\': out.append("\\\\"); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                case '\t': out.append("\\t"); break;
                default:
                    if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
                    else out.append(c);
            }
        }
        out.append('"');
    }
}
