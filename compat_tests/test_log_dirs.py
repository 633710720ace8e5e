"""DescribeLogDirs with kafka-python (confluent-kafka, aiokafka and kafkajs have no call for it): the data
directory as the broker's one log dir, each partition's size growing with what was produced, the topics
filter, and the volume's sizes."""

from __future__ import annotations

from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic

from compat_tests.kemu_process import KemuServeProcess
from compat_tests.polling import wait_for

TIMEOUT_S = 15


def test_kafka_python_describe_log_dirs(kemu_server: KemuServeProcess, topic_name: str) -> None:
    admin = KafkaAdminClient(bootstrap_servers=kemu_server.bootstrap, client_id="kemu-compat-kafka-python")
    producer = KafkaProducer(bootstrap_servers=kemu_server.bootstrap, client_id="kemu-compat-kafka-python")
    try:
        admin.create_topics([NewTopic(topic_name, 2, 1)])
        producer.send(topic_name, b"a record for the log", partition=1).get(timeout=TIMEOUT_S)

        [broker] = admin.describe_log_dirs({topic_name: [0, 1]})
        [log_dir] = broker["log_dirs"]
        assert log_dir["error_code"] == 0 and log_dir["log_dir"] == str(kemu_server.data_dir.absolute())
        assert log_dir["total_bytes"] >= log_dir["usable_bytes"] > 0
        [topic] = log_dir["topics"]
        sizes = {p["partition_index"]: p["partition_size"] for p in topic["partitions"]}
        assert sizes[0] == 0 and sizes[1] > 0
        assert {(p["offset_lag"], p["is_future_key"]) for p in topic["partitions"]} == {(0, False)}

        def everything() -> list[str]:
            [whole] = admin.describe_log_dirs()
            return [t["name"] for t in whole["log_dirs"][0]["topics"]]

        # Asking for every partition lists this topic among the others the session's tests created.
        wait_for(lambda: topic_name in everything(), what=f"{topic_name} among all log dirs")
    finally:
        producer.close()
        admin.close()
