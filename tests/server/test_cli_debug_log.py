"""`kemu serve --log-level DEBUG` says what INFO does not: each connection opened and closed, each request
(API, version, correlation id, client id) and each topic created."""

from __future__ import annotations

from tests.server.kafka_socket import KafkaSocket
from tests.server.test_cli import kemu_serve

CREATE_TOPICS = 19


def test_debug_names_connections_requests_and_topics() -> None:
    with kemu_serve("--log-level", "DEBUG") as (process, host, port):
        with KafkaSocket((host, port), client_id="debug-test") as connection:
            answer = connection.request(CREATE_TOPICS, 7, {"topics": [
                {"name": "logged", "num_partitions": 2, "replication_factor": 1}], "timeout_ms": 10000})
            assert answer["topics"][0]["error_code"] == 0
        process.terminate()
        assert process.wait(30) == 0
        assert process.stderr is not None
        log = process.stderr.read()
    assert "DEBUG kemu.server: connection from 127.0.0.1:" in log
    assert "DEBUG kemu.server: CreateTopics v7 (correlation id 1, client id 'debug-test') from 127.0.0.1:" in log
    assert "DEBUG kemu.broker: created topic logged: 2 partitions, id " in log
    assert " closed" in log.split("CreateTopics v7", 1)[1]


def test_info_does_not() -> None:
    with kemu_serve() as (process, host, port):
        with KafkaSocket((host, port)) as connection:
            connection.request(18, 3, {"client_software_name": "x", "client_software_version": "1"})
        process.terminate()
        assert process.wait(30) == 0
        assert process.stderr is not None
        log = process.stderr.read()
    assert "DEBUG" not in log and "ApiVersions v3" not in log
