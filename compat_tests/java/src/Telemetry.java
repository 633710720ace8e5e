// Client telemetry (KIP-714) from the Java client, for compat_tests/java (kafka-clients 4.x: listConfigResources).
//
//   Telemetry <bootstrap> subscribe <name> <metrics> <intervalMs> <match>
//       incrementalAlterConfigs of a CLIENT_METRICS resource (SET metrics, interval.ms and match, in one
//       request), then describeConfigs of it: each config's [value, source], and the CLIENT_METRICS resources
//       listConfigResources lists.
//   Telemetry <bootstrap> produce <topic> <count> <waitMs>
//       a producer with enable.metrics.push (its default, set anyway) and client.id kemu-compat-java-telemetry:
//       sends <count> records, asks its clientInstanceId (GetTelemetrySubscriptions), lets <waitMs> pass for its
//       pushes, and closes (its terminating push); reports the instance id's text, or the exception
//       clientInstanceId threw.
//
// Prints one JSON line: {"ok": <result>} or {"error": {"class", "message", "cause"}}.
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListConfigResourcesOptions;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;

public final class Telemetry {
    private Telemetry() {}

    public static void main(String[] argv) {
        Common.main("Telemetry", argv, operations());
    }

    static Map<String, Common.Operation> operations() {
        Map<String, Common.Operation> operations = new LinkedHashMap<>();
        operations.put("subscribe", Telemetry::subscribe);
        operations.put("produce", Telemetry::produce);
        return operations;
    }

    static Object subscribe(String bootstrap, List<String> args) throws Exception {
        Common.need(args, 4, "<name> <metrics> <intervalMs> <match>");
        ConfigResource resource = new ConfigResource(ConfigResource.Type.CLIENT_METRICS, args.get(0));
        List<AlterConfigOp> changes = List.of(
            new AlterConfigOp(new ConfigEntry("metrics", args.get(1)), AlterConfigOp.OpType.SET),
            new AlterConfigOp(new ConfigEntry("interval.ms", args.get(2)), AlterConfigOp.OpType.SET),
            new AlterConfigOp(new ConfigEntry("match", args.get(3)), AlterConfigOp.OpType.SET));
        try (Admin admin = Common.admin(bootstrap)) {
            admin.incrementalAlterConfigs(Map.of(resource, changes)).all().get();
            // The broker learns the subscription from its metadata log a moment after the controller wrote it.
            Map<String, List<String>> described = new TreeMap<>();
            for (int attempt = 0; attempt < 50 && !args.get(1).equals(value(described, "metrics")); attempt++) {
                Config config = admin.describeConfigs(List.of(resource)).all().get().get(resource);
                described.clear();
                for (ConfigEntry entry : config.entries()) {
                    described.put(entry.name(), List.of(String.valueOf(entry.value()), entry.source().name()));
                }
                if (!args.get(1).equals(value(described, "metrics"))) Thread.sleep(100);
            }
            Collection<ConfigResource> listed = admin.listConfigResources(
                Set.of(ConfigResource.Type.CLIENT_METRICS), new ListConfigResourcesOptions()).all().get();
            List<String> names = new ArrayList<>();
            for (ConfigResource found : listed) names.add(found.name());
            names.sort(null);
            return Common.obj("described", described, "listed", names);
        }
    }

    private static String value(Map<String, List<String>> described, String name) {
        List<String> entry = described.get(name);
        return entry == null ? null : entry.get(0);
    }

    static Object produce(String bootstrap, List<String> args) throws Exception {
        Common.need(args, 3, "<topic> <count> <waitMs>");
        int count = Integer.parseInt(args.get(1));
        try (KafkaProducer<String, String> producer = Common.producer(bootstrap,
                Map.of("enable.metrics.push", "true", "client.id", "kemu-compat-java-telemetry"))) {
            for (int n = 0; n < count; n++) producer.send(new ProducerRecord<>(args.get(0), "k" + n, "v" + n)).get();
            String instance;
            try {
                instance = producer.clientInstanceId(Duration.ofSeconds(20)).toString();
            } catch (Exception e) {
                return Common.obj("instance", null, "thrown", Common.unwrap(e).getClass().getName());
            }
            Thread.sleep(Long.parseLong(args.get(2)));
            return Common.obj("instance", instance, "thrown", null);
        }
    }
}
