// The admin calls Spark's Kafka source makes (KafkaOffsetReaderAdmin), for compat_tests/java.
//
//   AdminCalls <bootstrap> describe-topics <partitionSizeLimitPerResponse> <topic>...
//       describeTopics by name (the client pages through DescribeTopicPartitions, asking for at most that
//       many partitions per answer, when the broker offers it, and for the authorized operations); reports
//       each topic's description, or the exception its future failed with, and the topic ids' own
//       describeTopics by id.
//   AdminCalls <bootstrap> cluster
//       describeCluster: the cluster id, the controller, the nodes and the authorized operations.
//   AdminCalls <bootstrap> list-offsets <topic> <partitions> <timestamp>...
//       listOffsets for every partition by OffsetSpec: earliest, latest (read_uncommitted and
//       read_committed, as Spark asks with kafka.isolation.level), maxTimestamp and forTimestamp(each).
//   AdminCalls <bootstrap> delete-records <topic> <partition> <timestamp> <beforeOffset>...
//       deleteRecords before each offset in turn; reports, for each, the low watermark (or the exception)
//       and what listOffsets earliest and forTimestamp(<timestamp>) answer afterwards.
//   AdminCalls <bootstrap> quorum
//       describeMetadataQuorum (DescribeQuorum): the leader, its epoch, the voters' and observers' ids, and
//       whether each replica's log end offset is the high watermark.
//   AdminCalls <bootstrap> config-resources <prefix> <type>...
//       listConfigResources of those ConfigResource.Type names (ListConfigResources v1; kafka-clients 4.1+,
//       called by reflection so the program still compiles against 3.9): each [type, name], topics and groups
//       only those whose name starts with <prefix> (other tests' stay out), sorted.
//   AdminCalls <bootstrap> update-feature <feature> <level> <upgrade|safe-downgrade|unsafe-downgrade>
//       updateFeatures as kafka-features upgrade/downgrade does it, then describeFeatures: reports the
//       exception the update failed with (or null) and the feature's finalized and supported ranges after.
//
// Prints one JSON line: {"ok": <result>} or {"error": {"class", "message", "cause"}}.

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.clients.admin.FinalizedVersionRange;
import org.apache.kafka.clients.admin.SupportedVersionRange;
import org.apache.kafka.clients.admin.UpdateFeaturesOptions;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.QuorumInfo;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicCollection;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.config.ConfigResource;

public final class AdminCalls {
    private AdminCalls() {}

    public static void main(String[] argv) {
        Common.main("AdminCalls", argv, operations());
    }

    static Map<String, Common.Operation> operations() {
        Map<String, Common.Operation> operations = new LinkedHashMap<>();
        operations.put("describe-topics", AdminCalls::describeTopics);
        operations.put("cluster", AdminCalls::cluster);
        operations.put("list-offsets", AdminCalls::listOffsets);
        operations.put("delete-records", AdminCalls::deleteRecords);
        operations.put("quorum", AdminCalls::quorum);
        operations.put("config-resources", AdminCalls::configResources);
        operations.put("update-feature", AdminCalls::updateFeature);
        return operations;
    }

    static Object updateFeature(String bootstrap, List<String> args) throws Exception {
        Common.need(args, 3, "<feature> <level> <upgrade|safe-downgrade|unsafe-downgrade>");
        String feature = args.get(0);
        FeatureUpdate.UpgradeType type = switch (args.get(2)) {
            case "upgrade" -> FeatureUpdate.UpgradeType.UPGRADE;
            case "safe-downgrade" -> FeatureUpdate.UpgradeType.SAFE_DOWNGRADE;
            case "unsafe-downgrade" -> FeatureUpdate.UpgradeType.UNSAFE_DOWNGRADE;
            default -> throw new Common.UsageError("unknown upgrade type " + args.get(2));
        };
        try (Admin admin = Common.admin(bootstrap)) {
            String failed = Common.thrown(() -> admin.updateFeatures(
                Map.of(feature, new FeatureUpdate(Short.parseShort(args.get(1)), type)),
                new UpdateFeaturesOptions()).all().get());
            FeatureMetadata described = admin.describeFeatures().featureMetadata().get();
            FinalizedVersionRange finalized = described.finalizedFeatures().get(feature);
            SupportedVersionRange supported = described.supportedFeatures().get(feature);
            return Common.obj("failed", failed,
                "finalized", finalized == null ? null : List.of((int) finalized.minVersionLevel(),
                                                                (int) finalized.maxVersionLevel()),
                "supported", supported == null ? null : List.of((int) supported.minVersion(),
                                                                (int) supported.maxVersion()),
                "epochKnown", described.finalizedFeaturesEpoch().isPresent());
        }
    }

    static Object describeTopics(String bootstrap, List<String> args) throws Exception {
        Common.need(args, 2, "<partitionSizeLimitPerResponse> <topic>...");
        DescribeTopicsOptions options = new DescribeTopicsOptions()
            .partitionSizeLimitPerResponse(Integer.parseInt(args.get(0))).includeAuthorizedOperations(true);
        List<String> names = args.subList(1, args.size());
        Map<String, Object> byName = new LinkedHashMap<>();
        Map<String, Object> byId = new LinkedHashMap<>();
        try (Admin admin = Common.admin(bootstrap)) {
            List<Uuid> ids = new ArrayList<>();
            for (Map.Entry<String, KafkaFuture<TopicDescription>> entry
                    : admin.describeTopics(TopicCollection.ofTopicNames(names), options).topicNameValues().entrySet()) {
                try {
                    TopicDescription description = entry.getValue().get();
                    byName.put(entry.getKey(), topic(description));
                    ids.add(description.topicId());
                } catch (Exception e) {
                    byName.put(entry.getKey(), Common.obj("error", Common.unwrap(e).getClass().getName()));
                }
            }
            if (!ids.isEmpty()) {
                admin.describeTopics(TopicCollection.ofTopicIds(ids)).allTopicIds().get()
                    .forEach((id, description) -> byId.put(id.toString(), description.name()));
            }
        }
        return Common.obj("byName", byName, "byId", byId);
    }

    private static Map<String, Object> topic(TopicDescription description) {
        List<Object> partitions = new ArrayList<>();
        for (TopicPartitionInfo info : description.partitions()) {
            partitions.add(Common.obj("partition", info.partition(),
                "leader", info.leader() == null ? null : info.leader().id(),
                "replicas", ids(info.replicas()), "isr", ids(info.isr())));
        }
        return Common.obj("name", description.name(), "id", description.topicId().toString(),
            "internal", description.isInternal(), "partitions", partitions, "authorizedOperations", names(description.authorizedOperations()));
    }

    private static List<String> names(Set<AclOperation> operations) {
        List<String> names = new ArrayList<>();
        for (AclOperation operation : operations) names.add(operation.name());
        Collections.sort(names);
        return names;
    }

    private static List<Integer> ids(List<Node> nodes) {
        List<Integer> ids = new ArrayList<>();
        for (Node node : nodes) ids.add(node.id());
        return ids;
    }

    static Object cluster(String bootstrap, List<String> args) throws Exception {
        try (Admin admin = Common.admin(bootstrap)) {
            DescribeClusterResult cluster = admin.describeCluster(
                new DescribeClusterOptions().includeAuthorizedOperations(true));
            List<Object> nodes = new ArrayList<>();
            for (Node node : cluster.nodes().get()) {
                nodes.add(Common.obj("id", node.id(), "host", node.host(), "port", node.port()));
            }
            return Common.obj("clusterId", cluster.clusterId().get(), "controller", cluster.controller().get().id(),
                "nodes", nodes, "authorizedOperations", names(cluster.authorizedOperations().get()));
        }
    }

    static Object quorum(String bootstrap, List<String> args) throws Exception {
        try (Admin admin = Common.admin(bootstrap)) {
            QuorumInfo quorum = admin.describeMetadataQuorum().quorumInfo().get();
            List<Object> voters = new ArrayList<>();
            List<Object> observers = new ArrayList<>();
            boolean caughtUp = true;
            for (QuorumInfo.ReplicaState voter : quorum.voters()) {
                voters.add(voter.replicaId());
                caughtUp &= voter.logEndOffset() == quorum.highWatermark();
            }
            for (QuorumInfo.ReplicaState observer : quorum.observers()) {
                observers.add(observer.replicaId());
                caughtUp &= observer.logEndOffset() == quorum.highWatermark();
            }
            return Common.obj("leaderId", quorum.leaderId(), "leaderEpoch", quorum.leaderEpoch(),
                "highWatermarkKnown", quorum.highWatermark() >= 0, "voters", voters, "observers", observers,
                "allCaughtUp", caughtUp);
        }
    }

    static Object configResources(String bootstrap, List<String> args) throws Exception {
        Common.need(args, 1, "<prefix> <type>...");
        String prefix = args.get(0);
        Set<ConfigResource.Type> types = new HashSet<>();
        for (String type : args.subList(1, args.size())) types.add(ConfigResource.Type.valueOf(type));
        Class<?> options = Class.forName("org.apache.kafka.clients.admin.ListConfigResourcesOptions");
        try (Admin admin = Common.admin(bootstrap)) {
            Object result = Admin.class.getMethod("listConfigResources", Set.class, options)
                .invoke(admin, types, options.getConstructor().newInstance());
            @SuppressWarnings("unchecked")
            KafkaFuture<Collection<ConfigResource>> all =
                (KafkaFuture<Collection<ConfigResource>>) result.getClass().getMethod("all").invoke(result);
            List<List<String>> listed = new ArrayList<>();
            for (ConfigResource resource : all.get()) {
                String kind = resource.type().name();  // by name: 3.9 has no Type.GROUP
                boolean named = kind.equals("TOPIC") || kind.equals("GROUP");
                if (named && !resource.name().startsWith(prefix)) continue;
                listed.add(List.of(resource.type().name(), resource.name()));
            }
            listed.sort(Comparator.comparing((List<String> entry) -> entry.get(0)).thenComparing(entry -> entry.get(1)));
            return listed;
        }
    }

    static Object listOffsets(String bootstrap, List<String> args) throws Exception {
        Common.need(args, 2, "<topic> <partitions> <timestamp>...");
        List<TopicPartition> all = Common.partitions(args.get(0), Integer.parseInt(args.get(1)));
        Map<String, OffsetSpec> specs = new LinkedHashMap<>();
        specs.put("earliest", OffsetSpec.earliest());
        specs.put("latest", OffsetSpec.latest());
        specs.put("maxTimestamp", OffsetSpec.maxTimestamp());
        for (String timestamp : args.subList(2, args.size())) {
            specs.put("forTimestamp:" + timestamp, OffsetSpec.forTimestamp(Long.parseLong(timestamp)));
        }
        Map<String, Map<String, Object>> result = new LinkedHashMap<>();
        try (Admin admin = Common.admin(bootstrap)) {
            for (TopicPartition tp : all) result.put(String.valueOf(tp.partition()), new LinkedHashMap<>());
            for (Map.Entry<String, OffsetSpec> spec : specs.entrySet()) {
                put(result, spec.getKey(), ask(admin, all, spec.getValue(), IsolationLevel.READ_UNCOMMITTED));
            }
            put(result, "latest:read_committed", ask(admin, all, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED));
        }
        return result;
    }

    private static Map<TopicPartition, ListOffsetsResultInfo> ask(Admin admin, List<TopicPartition> partitions,
                                                                  OffsetSpec spec, IsolationLevel isolation)
            throws Exception {
        Map<TopicPartition, OffsetSpec> request = new LinkedHashMap<>();
        for (TopicPartition tp : partitions) request.put(tp, spec);
        return admin.listOffsets(request, new ListOffsetsOptions(isolation)).all().get();
    }

    private static void put(Map<String, Map<String, Object>> result, String spec,
                            Map<TopicPartition, ListOffsetsResultInfo> answers) {
        answers.forEach((tp, info) -> result.get(String.valueOf(tp.partition())).put(spec, Common.obj(
            "offset", info.offset(), "timestamp", info.timestamp(), "leaderEpoch", info.leaderEpoch().orElse(null))));
    }

    static Object deleteRecords(String bootstrap, List<String> args) throws Exception {
        Common.need(args, 4, "<topic> <partition> <timestamp> <beforeOffset>...");
        TopicPartition tp = new TopicPartition(args.get(0), Integer.parseInt(args.get(1)));
        OffsetSpec timestamp = OffsetSpec.forTimestamp(Long.parseLong(args.get(2)));
        List<Object> steps = new ArrayList<>();
        try (Admin admin = Common.admin(bootstrap)) {
            for (String before : args.subList(3, args.size())) {
                Map<String, Object> step = new LinkedHashMap<>();
                try {
                    step.put("lowWatermark", admin.deleteRecords(Map.of(tp,
                        RecordsToDelete.beforeOffset(Long.parseLong(before)))).lowWatermarks().get(tp).get()
                        .lowWatermark());
                } catch (Exception e) {
                    step.put("error", Common.unwrap(e).getClass().getName());
                }
                step.put("earliest", ask(admin, List.of(tp), OffsetSpec.earliest(), IsolationLevel.READ_UNCOMMITTED)
                    .get(tp).offset());
                ListOffsetsResultInfo found = ask(admin, List.of(tp), timestamp, IsolationLevel.READ_UNCOMMITTED).get(tp);
                step.put("forTimestamp", Common.obj("offset", found.offset(), "timestamp", found.timestamp()));
                steps.add(step);
            }
        }
        return steps;
    }
}
