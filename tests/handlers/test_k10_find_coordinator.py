"""FindCoordinator: every version, group and transaction keys, batching, errors."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kemu.broker.topic_names import GROUP_METADATA_TOPIC, SHARE_GROUP_STATE_TOPIC, TRANSACTION_STATE_TOPIC
from kemu.handlers.k10_find_coordinator import share_coordinator_key
from tests.handlers.group_wire import FIND_COORDINATOR, find_coordinator, group_config
from tests.handlers.harness import Broker, Connection, MakeBroker

KEY = FIND_COORDINATOR
COORDINATOR_NOT_AVAILABLE, INVALID_REQUEST = 15, 42


@pytest.fixture
def broker(make_broker: MakeBroker) -> Iterator[Broker]:
    with make_broker(group_config()) as running:
        yield running


@pytest.mark.real_socket
@pytest.mark.parametrize("version", range(4))
def test_group_coordinator_single_key(broker: Broker, conn: Connection, version: int) -> None:
    assert GROUP_METADATA_TOPIC not in broker.broker.topics
    body = find_coordinator(conn, "my-group", version=version)
    assert (body["error_code"], body["node_id"], body["host"], body["port"]) == (0, 1, "127.0.0.1", broker.port)
    # Kafka puts Errors.NONE.message() there: the enum's name.
    if version >= 1:
        assert body["error_message"] == "NONE"
    topic = broker.broker.topics.get(GROUP_METADATA_TOPIC)
    assert topic is not None and len(topic.partitions) == broker.config.offsets_topic_num_partitions
    assert topic.is_internal


@pytest.mark.parametrize("version", range(4, 7))
def test_batched_keys_of_both_kinds(broker: Broker, conn: Connection, version: int) -> None:
    for key_type, topic_name in ((0, GROUP_METADATA_TOPIC), (1, TRANSACTION_STATE_TOPIC)):
        body = conn.request(KEY, version, {"key_type": key_type, "coordinator_keys": ["a", "b", ""]})
        assert [(c["key"], c["error_code"], c["node_id"], c["host"], c["port"], c["error_message"])
                for c in body["coordinators"]] == [(k, 0, 1, "127.0.0.1", broker.port, "") for k in ("a", "b", "")]
        assert topic_name in broker.broker.topics


@pytest.mark.parametrize("version", range(1, 4))
def test_transaction_coordinator_creates_the_transaction_state_topic(broker: Broker, conn: Connection,
                                                                     version: int) -> None:
    body = find_coordinator(conn, "my-transactional-id", key_type=1, version=version)
    assert (body["error_code"], body["node_id"]) == (0, 1)
    topic = broker.broker.topics.get(TRANSACTION_STATE_TOPIC)
    assert topic is not None and len(topic.partitions) == broker.config.transaction_state_log_num_partitions
    assert GROUP_METADATA_TOPIC not in broker.broker.topics


def test_share_key_type(broker: Broker, conn: Connection) -> None:
    below = conn.request(KEY, 5, {"key_type": 2, "coordinator_keys": ["g:topic:0"]})
    assert [(c["error_code"], c["node_id"], c["host"], c["port"]) for c in below["coordinators"]] == [
        (INVALID_REQUEST, -1, "", -1)]
    # From v6 a share-partition key finds the leader of its __share_group_state partition (made by the first
    # lookup); a key SharePartitionKey cannot parse is INVALID_REQUEST.
    keys = ["g:AAAAAAAAAAAAAAAAAAAAAQ:0", "g:topic:0", "g:AAAAAAAAAAAAAAAAAAAAAQ", " :AAAAAAAAAAAAAAAAAAAAAQ:0",
            "g:AAAAAAAAAAAAAAAAAAAAAQ:x"]
    at_six = conn.request(KEY, 6, {"key_type": 2, "coordinator_keys": keys})
    assert [(c["key"], c["error_code"], c["node_id"]) for c in at_six["coordinators"]] == [
        (keys[0], 0, 1), *((key, INVALID_REQUEST, -1) for key in keys[1:])]
    state = broker.broker.topics.get(SHARE_GROUP_STATE_TOPIC)
    assert state is not None and len(state.partitions) == 50 and state.is_internal


def test_share_keys_hash_in_their_canonical_form() -> None:
    """asCoordinatorKey writes the topic id and partition back canonically (a sign, a padded id)."""
    assert share_coordinator_key("a:b:AAAAAAAAAAAAAAAAAAAAAB==:+7") == "a:b:AAAAAAAAAAAAAAAAAAAAAA:7"
    assert share_coordinator_key("g:AAAAAAAAAAAAAAAAAAAAAQ:0::") == "g:AAAAAAAAAAAAAAAAAAAAAQ:0"
    for malformed in ("", "g:AAAAAAAAAAAAAAAAAAAAAQ:2147483648", "g:AAAAAAAAAAAAAAAAAAAAAQ=:0",
                      "\t:AAAAAAAAAAAAAAAAAAAAAQ:0", "g:AAAAAAAAAAAAAAAAAAAAAQAA:0"):
        assert share_coordinator_key(malformed) is None, malformed


def test_share_key_below_v4(conn: Connection) -> None:
    single = conn.request(KEY, 3, {"key": "g", "key_type": 2})
    assert (single["error_code"], single["node_id"], single["host"], single["port"]) == (INVALID_REQUEST, -1, "", -1)
    assert single["error_message"].startswith("This most likely occurs because of a request being malformed")


@pytest.mark.parametrize("version", [1, 3, 4, 6])
def test_unknown_key_type_refuses_the_request(conn: Connection, version: int) -> None:
    body = find_coordinator(conn, "g", key_type=7, version=version)
    if version >= 4:
        assert [(c["key"], c["error_code"], c["node_id"]) for c in body["coordinators"]] == [("g", INVALID_REQUEST, -1)]
    else:
        assert (body["error_code"], body["node_id"], body["host"], body["port"]) == (INVALID_REQUEST, -1, "", -1)
    # The connection stays usable.
    assert find_coordinator(conn, "g", version=3)["error_code"] == 0
