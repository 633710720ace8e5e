"""kemu.hashing: where Kafka's answers depend on Java's hashing (String.hashCode, Uuid.hashCode, HashMap and
HashSet order), checked against what Java itself printed."""

from __future__ import annotations

import base64
import uuid

import pytest

from kemu.hashing import (
    java_hash_map_order,
    java_hash_order,
    java_hash_set_order,
    java_string_hash,
    java_uuid_hash,
    partition_for,
)


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


# The orders are what `new HashMap<String, Integer>()`, filled in the given order, iterated on Java 17.
@pytest.mark.parametrize("keys, java_order", [
    ("sticky range roundrobin cooperative-sticky", "sticky range roundrobin cooperative-sticky"),
    # "Aa" and "BB" have the same hashCode: one bucket, in insertion order.
    ("BB Aa range", "BB Aa range"),
    ("Aa BB range", "Aa BB range"),
    # 20 keys: the table grew to 32 buckets.
    ("t00 t01 t02 t03 t04 t05 t06 t07 t08 t09 t10 t11 t12 t13 t14 t15 t16 t17 t18 t19",
     "t10 t01 t12 t00 t11 t03 t14 t02 t13 t05 t16 t04 t15 t07 t18 t06 t17 t09 t08 t19"),
])
def test_hash_map_order_is_javas(keys: str, java_order: str) -> None:
    assert java_hash_map_order(keys.split()) == java_order.split()


def _uuid(base64_id: str) -> uuid.UUID:
    return uuid.UUID(bytes=base64.urlsafe_b64decode(base64_id + "=="))


def test_hash_set_of_kafka_uuids_is_javas() -> None:
    # What `new HashSet<>(List.of(Uuid...))` iterated on Java 17, the ids given in this order.
    given = ("AAAAAAAAAAAAAAAAAAAAAQ AAAAAAAAAAAAAAAAAAAAAg AAAAAAAAAAAAAAAAAAAAEA AAAAAAAAAAAAAAAAAAABAA "
             "3n7Zk2gRS3i2rFhyf5kqyw Q0iwWCKUTD2XiBDNFCpKQA IZzotxNHR5mkppfWY3Yzgw").split()
    java = ("AAAAAAAAAAAAAAAAAAAAEA AAAAAAAAAAAAAAAAAAABAA IZzotxNHR5mkppfWY3Yzgw AAAAAAAAAAAAAAAAAAAAAQ "
            "AAAAAAAAAAAAAAAAAAAAAg Q0iwWCKUTD2XiBDNFCpKQA 3n7Zk2gRS3i2rFhyf5kqyw").split()
    ordered = java_hash_order([_uuid(u) for u in given], java_uuid_hash, copied=True)
    assert ordered == [_uuid(u) for u in java]


def test_a_map_made_with_a_capacity_starts_at_its_power_of_two() -> None:
    """`new HashMap<>(n)` (Kafka's Endpoints.fromAddVoterRequest sizes its map so): the table starts at the
    power of two of at least n, 1 for 0, and grows from there; the orders are what Java 17's jshell printed."""
    assert java_hash_order(["PLAINTEXT", "SSL"], java_string_hash, sized=2) == ["SSL", "PLAINTEXT"]
    assert java_hash_order(["CONTROLLER_X", "PLAINTEXT", "SSL", "SASL_SSL", "EXTERNAL"], java_string_hash,
                           sized=5) == ["SASL_SSL", "PLAINTEXT", "EXTERNAL", "SSL", "CONTROLLER_X"]
    assert java_hash_order(["INTERNAL", "EXTERNAL", "REPLICATION"], java_string_hash, sized=0) == [
        "INTERNAL", "EXTERNAL", "REPLICATION"]
