// The operator's admin calls, for compat_tests/java: moving replicas between log directories, unregistering a
// broker, changing the metadata quorum's voters (kafka-reassign-partitions --reassignment-json-file with log
// dirs, kafka-cluster unregister, kafka-metadata-quorum add-controller / remove-controller make them). 4.x only:
// the cluster id of a voter change is an option of kafka-clients 4.0+.
//
//   Operations <bootstrap> log-dirs <topic>
//       describeLogDirs of the first node for its log dir, then alterReplicaLogDirs of one replica at a time of
//       that node: <topic>-0 to that dir, to an unknown one, <topic>-9 and a missing topic's partition to that
//       dir; reports each outcome (null, or the exception class).
//   Operations <bootstrap> unregister <brokerId>
//       unregisterBroker: null, or the exception class and message.
//   Operations <bootstrap> raft-voters
//       addRaftVoter and removeRaftVoter: of voter 2 with the CONTROLLER endpoint and of voter 1, each with a
//       fresh directory id; with another cluster's id; without a directory id; addRaftVoter with no CONTROLLER
//       endpoint. Reports each outcome (null, or the exception class and, where it holds no cluster id, message).
//
// Prints one JSON line: {"ok": <result>} or {"error": {"class", "message", "cause"}}.

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.clients.admin.AddRaftVoterOptions;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.RaftVoterEndpoint;
import org.apache.kafka.clients.admin.RemoveRaftVoterOptions;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionReplica;
import org.apache.kafka.common.Uuid;

public final class Operations {
    private Operations() {}

    public static void main(String[] argv) {
        Common.main("Operations", argv, operations());
    }

    static Map<String, Common.Operation> operations() {
        Map<String, Common.Operation> operations = new LinkedHashMap<>();
        operations.put("log-dirs", Operations::logDirs);
        operations.put("unregister", Operations::unregister);
        operations.put("raft-voters", Operations::raftVoters);
        return operations;
    }

    /** null when the call succeeded, else the exception it failed with: its class, and its message if asked. */
    static Object outcome(KafkaFuture<Void> future, boolean withMessage) {
        try {
            future.get();
            return null;
        } catch (Exception e) {
            Throwable shown = Common.unwrap(e);
            return withMessage ? Common.obj("class", shown.getClass().getName(), "message", shown.getMessage())
                : shown.getClass().getName();
        }
    }

    static Object logDirs(String bootstrap, List<String> args) throws Exception {
        Common.need(args, 1, "<topic>");
        String topic = args.get(0);
        try (Admin admin = Common.admin(bootstrap)) {
            Node node = admin.describeCluster().nodes().get().iterator().next();
            Set<String> dirs = admin.describeLogDirs(List.of(node.id())).allDescriptions().get().get(node.id())
                .keySet();
            String own = dirs.iterator().next();
            Map<String, Object> outcomes = new LinkedHashMap<>();
            outcomes.put("dirs", dirs.size());
            outcomes.put("to its own dir", moved(admin, new TopicPartitionReplica(topic, 0, node.id()), own));
            outcomes.put("to an unknown dir",
                moved(admin, new TopicPartitionReplica(topic, 0, node.id()), "/nonexistent/kemu-log-dir"));
            outcomes.put("unknown partition", moved(admin, new TopicPartitionReplica(topic, 9, node.id()), own));
            outcomes.put("unknown topic",
                moved(admin, new TopicPartitionReplica(topic + "-missing", 0, node.id()), own));
            return outcomes;
        }
    }

    static Object moved(Admin admin, TopicPartitionReplica replica, String dir) {
        return outcome(admin.alterReplicaLogDirs(Map.of(replica, dir)).values().get(replica), false);
    }

    static Object unregister(String bootstrap, List<String> args) throws Exception {
        Common.need(args, 1, "<brokerId>");
        try (Admin admin = Common.admin(bootstrap)) {
            return outcome(admin.unregisterBroker(Integer.parseInt(args.get(0))).all(), true);
        }
    }

    static Object raftVoters(String bootstrap, List<String> args) throws Exception {
        Set<RaftVoterEndpoint> controller = Set.of(new RaftVoterEndpoint("CONTROLLER", "localhost", 19093));
        Set<RaftVoterEndpoint> plaintext = Set.of(new RaftVoterEndpoint("PLAINTEXT", "localhost", 19092));
        Optional<String> other = Optional.of("kemu-other-cluster");
        try (Admin admin = Common.admin(bootstrap)) {
            Map<String, Object> outcomes = new LinkedHashMap<>();
            outcomes.put("add", outcome(admin.addRaftVoter(2, Uuid.randomUuid(), controller).all(), true));
            outcomes.put("remove", outcome(admin.removeRaftVoter(1, Uuid.randomUuid()).all(), true));
            outcomes.put("add to another cluster", outcome(admin.addRaftVoter(2, Uuid.randomUuid(), controller,
                new AddRaftVoterOptions().setClusterId(other)).all(), false));
            outcomes.put("remove from another cluster", outcome(admin.removeRaftVoter(1, Uuid.randomUuid(),
                new RemoveRaftVoterOptions().setClusterId(other)).all(), false));
            outcomes.put("add without a directory",
                outcome(admin.addRaftVoter(2, Uuid.ZERO_UUID, controller).all(), true));
            outcomes.put("remove without a directory", outcome(admin.removeRaftVoter(1, Uuid.ZERO_UUID).all(), true));
            outcomes.put("add without the controller endpoint",
                outcome(admin.addRaftVoter(2, Uuid.randomUuid(), plaintext).all(), true));
            return outcomes;
        }
    }
}
