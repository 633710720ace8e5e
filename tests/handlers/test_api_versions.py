from __future__ import annotations

import pytest

from tests.handlers.harness import Connection

KEY = 18
SOFTWARE = {"client_software_name": "kemu-tests", "client_software_version": "1.0.0"}


@pytest.mark.real_socket
@pytest.mark.parametrize("version", range(5))
def test_every_version(conn: Connection, version: int) -> None:
    body = conn.request(KEY, version, SOFTWARE)
    assert body["error_code"] == 0
    keys = {entry["api_key"]: (entry["min_version"], entry["max_version"]) for entry in body["api_keys"]}
    assert keys[18] == (0, 4)
    assert {3, 18, 19, 20, 60} <= set(keys)
    # The features are in tagged fields of v3+ (tests/handlers/test_transactions_v2.py has their values); over
    # a real socket an older version's response has none of them.
    if version >= 3:
        assert "metadata.version" in {f["name"] for f in body["supported_features"]}
        assert {"transaction.version": 2}.items() <= {
            f["name"]: f["max_version_level"] for f in body["finalized_features"]}.items()
    else:
        assert body["supported_features"] == [] and body["finalized_features"] == []


@pytest.mark.parametrize(("name", "version"), [
    ("", "1"), ("kemu", ""), ("-kemu", "1"), ("kemu-", "1"), ("ke mu", "1"), ("kemu", "1.0_beta"),
])
def test_bad_software_name_or_version_is_invalid_request(conn: Connection, name: str, version: str) -> None:
    body = conn.request(KEY, 3, {"client_software_name": name, "client_software_version": version})
    assert body["error_code"] == 42 and body["api_keys"] == []


@pytest.mark.parametrize(("name", "version"), [("a", "1"), ("confluent-kafka-python", "2.6.1-rdkafka-2.6.1"),
                                               ("kafka-python", "2.2.0"), ("apache-kafka-java", "4.0.0")])
def test_real_client_names_are_accepted(conn: Connection, name: str, version: str) -> None:
    body = conn.request(KEY, 4, {"client_software_name": name, "client_software_version": version})
    assert body["error_code"] == 0


# Kafka 4.0 removed these versions (KIP-896); a Kafka 4.3 broker closes the connection on them.
@pytest.mark.parametrize(("key", "version"), [(8, 0), (8, 1), (9, 0), (19, 0), (19, 1), (20, 0), (27, 0), (32, 0),
                                              (35, 0)])
def test_versions_kafka_4_removed_close_the_connection(conn: Connection, key: int, version: int) -> None:
    conn.send(key, version, {})
    assert conn.closed_by_peer()


def test_share_group_apis(conn: Connection) -> None:
    """Keys 76-79 (KIP-932) are served at Kafka 4.3's ranges: ShareGroupHeartbeat and ShareGroupDescribe at v1,
    ShareFetch and ShareAcknowledge at v1-2."""
    body = conn.request(KEY, 4, SOFTWARE)
    advertised = {entry["api_key"]: (entry["min_version"], entry["max_version"]) for entry in body["api_keys"]}
    assert [advertised.get(key) for key in (76, 77, 78, 79)] == [(1, 1), (1, 1), (1, 2), (1, 2)]
