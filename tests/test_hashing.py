"""kemu.hashing: where Kafka's answers depend on Java's String.hashCode, checked against what Java itself printed."""

from __future__ import annotations

from kemu.hashing import java_hash_map_order, java_hash_set_order, partition_for


def test_mechanisms_in_java_hash_set_order() -> None:
    """Kafka's SaslServerAuthenticator lists its mechanisms as `new ArrayList<>(new HashSet<>(enabled))`;
    the orders here are what Java 17's jshell printed for those sets."""
    assert java_hash_set_order(["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]) == ["PLAIN", "SCRAM-SHA-512",
                                                                                "SCRAM-SHA-256"]
    assert java_hash_set_order(["SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN", "OAUTHBEARER"]) == [
        "SCRAM-SHA-512", "PLAIN", "SCRAM-SHA-256", "OAUTHBEARER"]
    assert java_hash_set_order(["OAUTHBEARER", "PLAIN", "PLAIN"]) == ["PLAIN", "OAUTHBEARER"]


def test_ids_are_placed_with_kafkas_utils_abs() -> None:
    """GroupCoordinatorService / TransactionStateManager.partitionFor: Utils.abs(id.hashCode()) % partitions,
    Math.abs (not a bit mask) for a negative hash; the partitions are what Java 17's jshell printed."""
    assert [partition_for(key, 50) for key in ("cluster-coordinator-1", "cluster-coordinator-3", "my-txn", "g")] == [
        33, 31, 45, 3]


def test_hash_map_order_grows_its_table_as_javas_does() -> None:
    """Fifteen keys outgrow a table of 16 (Java 17's jshell printed this HashMap's keySet())."""
    keys = "scram-user,scram-i,alice,bob,u1,u2,u3,u4,u5,u6,u7,u8,u9,u10,user-with-a-long-name".split(",")
    assert java_hash_map_order(keys) == ["u5", "u6", "scram-user", "u7", "u8", "u9", "alice", "bob", "u10",
                                         "scram-i", "u1", "user-with-a-long-name", "u2", "u3", "u4"]
    assert java_hash_map_order(["scram-user", "scram-i", "alice"]) == ["scram-user", "alice", "scram-i"]
