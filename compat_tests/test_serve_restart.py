"""`kemu serve --data-dir` across a clean restart and across a SIGKILL: topics a client created
are still there, on the same address, as they would be on a real broker."""

from __future__ import annotations

from confluent_kafka.admin import AdminClient, NewTopic

from compat_tests.kemu_process import KemuServeProcess
from compat_tests.polling import wait_for

PARTITIONS = 3

def _create_topic(server: KemuServeProcess, name: str) -> None:
    admin = AdminClient({"bootstrap.servers": server.bootstrap})
    futures = admin.create_topics([NewTopic(name, num_partitions=PARTITIONS)], operation_timeout=10)
    futures[name].result(timeout=15)


def _led_partition_ids(server: KemuServeProcess, name: str) -> list[int]:
    admin = AdminClient({"bootstrap.servers": server.bootstrap})

    def led() -> list[int]:
        topic = admin.list_topics(timeout=10).topics.get(name)
        if topic is None or topic.error is not None:
            return []
        if any(p.leader < 0 or p.error is not None for p in topic.partitions.values()):
            return []
        return sorted(topic.partitions)

    # The server printed its banner, so it is answering: a short wait suffices, as for a restarted broker.
    return wait_for(led, what=f"{name} with led partitions at {server.bootstrap}", timeout=5)


def test_topic_survives_clean_restart(fresh_kemu_server: KemuServeProcess, topic_name: str) -> None:
    _create_topic(fresh_kemu_server, topic_name)
    bootstrap = fresh_kemu_server.bootstrap
    first_pid = fresh_kemu_server.pid

    fresh_kemu_server.restart()

    assert fresh_kemu_server.pid != first_pid
    assert fresh_kemu_server.bootstrap == bootstrap
    assert _led_partition_ids(fresh_kemu_server, topic_name) == list(range(PARTITIONS))


def test_topic_survives_kill_9(fresh_kemu_server: KemuServeProcess, topic_name: str) -> None:
    _create_topic(fresh_kemu_server, topic_name)
    assert _led_partition_ids(fresh_kemu_server, topic_name) == list(range(PARTITIONS))
    bootstrap = fresh_kemu_server.bootstrap

    fresh_kemu_server.kill()
    assert not fresh_kemu_server.is_running()
    fresh_kemu_server.start()

    assert fresh_kemu_server.bootstrap == bootstrap
    assert _led_partition_ids(fresh_kemu_server, topic_name) == list(range(PARTITIONS))
