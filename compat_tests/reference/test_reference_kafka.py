"""The reference Kafka itself: it starts as a KRaft cluster of the asked size, with the cluster id it was
formatted with, and `python -m compat_tests.reference` serves one until SIGTERM."""

from __future__ import annotations

import signal
import subprocess
import sys

from compat_tests.reference.kafka import ReferenceKafka, metadata_brokers
from tests.server.kafka_socket import KafkaSocket

METADATA = 3


def test_single_node(reference_kafka: ReferenceKafka) -> None:
    assert metadata_brokers(reference_kafka.addresses[0]) == {1}
    with KafkaSocket(reference_kafka.addresses[0]) as connection:
        answer = connection.request(METADATA, 12, {"topics": [], "allow_auto_topic_creation": False,
                                                   "include_topic_authorized_operations": False})
    assert answer["cluster_id"] == reference_kafka.cluster_id
    assert answer["controller_id"] == 1


def test_three_nodes(reference_kafka_cluster: ReferenceKafka) -> None:
    for address in reference_kafka_cluster.addresses:
        assert metadata_brokers(address) == {1, 2, 3}


def test_module_serves_until_sigterm() -> None:
    process = subprocess.Popen([sys.executable, "-m", "compat_tests.reference"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    try:
        assert process.stdout is not None
        banner = process.stdout.readline()
        assert banner.startswith("reference kafka serving on 127.0.0.1:"), banner + process.stdout.read()
        port = int(banner.rsplit(":", 1)[1])
        assert metadata_brokers(("127.0.0.1", port)) == {1}
        process.send_signal(signal.SIGTERM)
        assert process.wait(60) == 0
    finally:
        if process.poll() is None:
            process.kill()
