"""Consumer groups with kafkajs (compat_tests/js/groups.mjs): two members split the partitions and one
takes over, committed offsets survive a restart, and the admin client lists, describes, fetches offsets and
deletes. kafkajs has no static membership (group.instance.id), so that scenario is not run with it."""

from __future__ import annotations

from confluent_kafka import Producer

from compat_tests.external_clients import Kafkajs
from compat_tests.groups_support import (
    PARTITIONS,
    PER_PARTITION,
    assert_disjoint_cover,
    create_topic_with_messages,
    group_name,
    message_values,
)
from compat_tests.kemu_process import KemuServeProcess

SCRIPT = "groups"
TIMEOUT_S = 90.0
MESSAGES = str(PARTITIONS * PER_PARTITION)


def test_two_members_split_the_partitions_and_one_takes_over(kemu_server: KemuServeProcess, kafkajs: Kafkajs,
                                                             topic_name: str) -> None:
    create_topic_with_messages(kemu_server.bootstrap, topic_name)
    seen = kafkajs.run(SCRIPT, kemu_server.bootstrap, "split", topic_name, group_name(), MESSAGES, timeout=TIMEOUT_S)
    assert_disjoint_cover([set(a) for a in seen["assignments"]])
    assert seen["consumed"] == PARTITIONS * PER_PARTITION
    assert seen["takeover"] == list(range(PARTITIONS))
    assert seen["committed"] == {str(p): PER_PARTITION for p in range(PARTITIONS)}


def test_committed_offsets_survive_a_restart(fresh_kemu_server: KemuServeProcess, kafkajs: Kafkajs,
                                             topic_name: str) -> None:
    bootstrap = fresh_kemu_server.bootstrap
    create_topic_with_messages(bootstrap, topic_name)
    group = group_name()
    first = kafkajs.run(SCRIPT, bootstrap, "consume", topic_name, group, MESSAGES, timeout=TIMEOUT_S)
    assert set(first["values"]) == message_values()
    assert first["after"] == {str(p): PER_PARTITION for p in range(PARTITIONS)}

    fresh_kemu_server.restart()

    producer = Producer({"bootstrap.servers": bootstrap})
    producer.produce(topic_name, value=b"after-restart", partition=0)
    assert producer.flush(10) == 0
    again = kafkajs.run(SCRIPT, bootstrap, "consume", topic_name, group, "1", timeout=TIMEOUT_S)
    assert again["before"] == {str(p): PER_PARTITION for p in range(PARTITIONS)}
    assert again["values"] == ["after-restart"]
    assert again["after"]["0"] == PER_PARTITION + 1


def test_admin_lists_describes_and_deletes_groups(kemu_server: KemuServeProcess, kafkajs: Kafkajs,
                                                  topic_name: str) -> None:
    create_topic_with_messages(kemu_server.bootstrap, topic_name)
    group = group_name()
    seen = kafkajs.run(SCRIPT, kemu_server.bootstrap, "admin", topic_name, group, MESSAGES, timeout=TIMEOUT_S)
    assert seen["listed"] == [{"groupId": group, "protocolType": "consumer"}]
    described = seen["described"]
    assert (described["groupId"], described["state"], described["protocolType"]) == (group, "Stable", "consumer")
    assert described["protocol"] == "RoundRobinAssigner"
    assert sorted(m["memberId"] for m in described["members"]) == seen["memberIds"]
    assert {m["clientHost"] for m in described["members"]} == {"/127.0.0.1"}
    assert seen["offsets"] == {str(p): PER_PARTITION for p in range(PARTITIONS)}
    assert seen["deleted"] == [{"groupId": group, "errorCode": 0}]
    assert seen["listedAfter"] == []
