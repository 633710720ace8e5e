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


def test_share_group_apis_advertised_as_their_handlers_come(conn: Connection) -> None:
    """Keys 76-79 (KIP-932) have wire declarations; ShareGroupHeartbeat and ShareGroupDescribe (76, 77) have
    handlers and are advertised at Kafka 4.3's v1; ShareFetch and ShareAcknowledge (78, 79) have none yet, so
    ApiVersions leaves them out and a request for one closes the connection, as an unknown key does."""
    from kemu.wire.apis import get_api

    assert all(get_api(key) is not None for key in (76, 77, 78, 79))
    body = conn.request(KEY, 4, SOFTWARE)
    advertised = {entry["api_key"]: (entry["min_version"], entry["max_version"]) for entry in body["api_keys"]}
    assert advertised[76] == (1, 1) and advertised[77] == (1, 1)
    assert not {78, 79} & advertised.keys()
    conn.send(78, 1, {"member_id": "m", "share_session_epoch": 0, "max_wait_ms": 0, "min_bytes": 1,
                      "max_records": 1, "batch_size": 1, "topics": [], "forgotten_topics_data": []})
    assert conn.closed_by_peer()
