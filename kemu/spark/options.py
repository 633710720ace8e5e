"""Spark's Kafka options as both connectors take them, and their translation into a librdkafka configuration."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

FORMAT = "kemu-kafka"
"""The format name the Python data source registers under: `spark.readStream.format("kemu-kafka")`."""

CLIENT_PREFIX = "kafka."
# librdkafka warns about, and ignores, a consumer setting given to a producer; these are the ones a pipeline's
# kafka.* options routinely carry for its reads.
_CONSUMER_ONLY = frozenset({"isolation.level", "auto.offset.reset", "group.id", "enable.auto.commit",
                            "enable.partition.eof", "fetch.min.bytes", "fetch.max.bytes",
                            "max.partition.fetch.bytes", "session.timeout.ms", "max.poll.interval.ms"})


@runtime_checkable
class HasBootstrapServers(Protocol):
    """kemu.testing.Broker and anything else that carries its address as `bootstrap_servers`."""

    @property
    def bootstrap_servers(self) -> str: ...


@runtime_checkable
class HasGetBootstrapServer(Protocol):
    """testcontainers' KafkaContainer and kemu.testcontainers.KemuContainer."""

    def get_bootstrap_server(self) -> str: ...


Broker = str | HasBootstrapServers | HasGetBootstrapServer


def bootstrap_servers(broker: Broker) -> str:
    if isinstance(broker, str):
        return broker
    if isinstance(broker, HasBootstrapServers):
        return broker.bootstrap_servers
    if isinstance(broker, HasGetBootstrapServer):
        return broker.get_bootstrap_server()
    raise TypeError(f"no bootstrap address in {broker!r}: pass 'host:port', a kemu broker or a Kafka container")


def spark_kafka_options(broker: Broker, *, read_committed: bool = True) -> dict[str, str]:
    """The options that point a Spark Kafka source or sink at `broker`.

    Spark's own source reads with the Java client's default, read_uncommitted, which hands a pipeline aborted
    and still-open transactional records; these options ask for read_committed unless told otherwise.
    """
    return {
        "kafka.bootstrap.servers": bootstrap_servers(broker),
        "kafka.isolation.level": "read_committed" if read_committed else "read_uncommitted",
    }


def client_config(options: Mapping[str, str]) -> dict[str, str]:
    """The kafka.* options without their prefix: what a client is configured with."""
    return {key[len(CLIENT_PREFIX):]: value for key, value in options.items()
            if key.lower().startswith(CLIENT_PREFIX)}


def consumer_config(options: Mapping[str, str]) -> dict[str, str]:
    """A consumer reading read_committed unless kafka.isolation.level says otherwise."""
    config = client_config(options)
    config.setdefault("isolation.level", "read_committed")
    if "bootstrap.servers" not in config:
        raise ValueError("option 'kafka.bootstrap.servers' must be specified for the Kafka source and sink")
    return config


def producer_config(options: Mapping[str, str]) -> dict[str, str]:
    config = {key: value for key, value in client_config(options).items() if key not in _CONSUMER_ONLY}
    if "bootstrap.servers" not in config:
        raise ValueError("option 'kafka.bootstrap.servers' must be specified for the Kafka source and sink")
    return config


def option(options: Mapping[str, str], name: str) -> str | None:
    """Spark hands a data source its options with lower-cased keys; a mapping from elsewhere may not."""
    lowered = name.lower()
    for key, value in options.items():
        if key.lower() == lowered:
            return value
    return None


def flag(options: Mapping[str, str], name: str, default: bool) -> bool:
    value = option(options, name)
    if value is None:
        return default
    if value.strip().lower() not in ("true", "false"):
        raise ValueError(f"option {name!r} must be 'true' or 'false', not {value!r}")
    return value.strip().lower() == "true"


def number(options: Mapping[str, str], name: str, default: int | None = None) -> int | None:
    value = option(options, name)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"option {name!r} must be a whole number, not {value!r}") from None
