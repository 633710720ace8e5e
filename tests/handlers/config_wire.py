"""Topic creation for the handler tests (data plane, configs, partitions, log dirs), through a real socket."""

from __future__ import annotations

from tests.server.kafka_socket import KafkaSocket

CREATE_TOPICS = 19


def create_topic(conn: KafkaSocket, name: str, partitions: int = 1, configs: dict[str, str] | None = None) -> None:
    body = {"topics": [{"name": name, "num_partitions": partitions, "replication_factor": 1,
                        "configs": [{"name": k, "value": v} for k, v in (configs or {}).items()]}],
            "timeout_ms": 5000}
    [result] = conn.request(CREATE_TOPICS, 7, body)["topics"]
    assert result["error_code"] == 0, result
