// Java share groups (KIP-932: KafkaShareConsumer, kafka-clients 4.3), for compat_tests/java.
//
//   ShareGroups <bootstrap> consume <topic> <group> <records>
//       sets the group's share.auto.offset.reset to earliest (Admin, resource type GROUP), then one
//       KafkaShareConsumer in explicit acknowledgement mode reads the topic: the first record it sees it
//       releases once, every other delivery it accepts, until <records> records are accepted. Reports each
//       delivery [value, delivery count] in order, and the group as the admin describes it meanwhile.
//
// Prints one JSON line: {"ok": <result>} or {"error": {"class", "message", "cause"}}.

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;

public final class ShareGroups {
    private ShareGroups() {}

    public static void main(String[] argv) {
        Common.main("ShareGroups", argv, operations());
    }

    static Map<String, Common.Operation> operations() {
        Map<String, Common.Operation> operations = new LinkedHashMap<>();
        operations.put("consume", ShareGroups::consume);
        return operations;
    }

    static Object consume(String bootstrap, List<String> args) throws Exception {
        Common.need(args, 3, "<topic> <group> <records>");
        String topic = args.get(0);
        String group = args.get(1);
        int expected = Integer.parseInt(args.get(2));
        Map<String, Object> result = new LinkedHashMap<>();
        try (Admin admin = Common.admin(bootstrap)) {
            ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
            Collection<AlterConfigOp> ops = List.of(new AlterConfigOp(
                new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET));
            admin.incrementalAlterConfigs(Map.of(resource, ops)).all().get();
            Properties props = Common.client(bootstrap);
            props.put("group.id", group);
            props.put("share.acknowledgement.mode", "explicit");
            List<List<Object>> deliveries = new ArrayList<>();
            Set<String> accepted = new HashSet<>();
            String released = null;
            try (KafkaShareConsumer<String, String> consumer =
                     new KafkaShareConsumer<>(props, new StringDeserializer(), new StringDeserializer())) {
                consumer.subscribe(List.of(topic));
                long deadline = System.currentTimeMillis() + Common.READ_TIMEOUT_MS;
                while (accepted.size() < expected) {
                    if (System.currentTimeMillis() > deadline) {
                        throw new IllegalStateException("accepted " + accepted.size() + " of " + expected);
                    }
                    for (ConsumerRecord<String, String> record : consumer.poll(Common.POLL)) {
                        deliveries.add(List.of(record.value(), (int) record.deliveryCount().orElse((short) -1)));
                        if (released == null) {
                            released = record.value();
                            consumer.acknowledge(record, AcknowledgeType.RELEASE);
                        } else {
                            accepted.add(record.value());
                            consumer.acknowledge(record, AcknowledgeType.ACCEPT);
                        }
                    }
                    consumer.commitSync();
                }
                ShareGroupDescription described = admin.describeShareGroups(List.of(group)).all().get().get(group);
                result.put("group", Common.obj("state", described.groupState().toString(),
                                               "members", described.members().size()));
            }
            result.put("deliveries", deliveries);
        }
        return result;
    }
}
