"""Topic creation for the handler tests (data plane, configs, partitions, log dirs), through CreateTopics."""

from __future__ import annotations

from tests.handlers.harness import Connection

CREATE_TOPICS = 19


def create_topic(conn: Connection, name: str, partitions: int = 1, configs: dict[str, str] | None = None) -> None:
    body = {"topics": [{"name": name, "num_partitions": partitions, "replication_factor": 1,
                        "configs": [{"name": k, "value": v} for k, v in (configs or {}).items()]}],
            "timeout_ms": 5000}
    [result] = conn.request(CREATE_TOPICS, 7, body)["topics"]
    assert result["error_code"] == 0, result
