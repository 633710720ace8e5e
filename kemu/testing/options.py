"""What `kemu serve` is asked to run (`ServeOptions`), and how a handle's or a process's settings become a
core's config. Kept apart from the handle (`kemu.testing.broker`) so that `kemu serve` without a control
endpoint or transcript, which serves a core without the handle, never imports it."""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import NamedTuple

from kemu.broker.broker import BrokerCore
from kemu.broker.broker_configs import apply_properties
from kemu.broker.config import BrokerConfig


# A NamedTuple, not a frozen dataclass: kemu serve imports this module to start, and a dataclass definition
# compiles its generated methods (~0.5 ms on a slow machine).
class ServeOptions(NamedTuple):
    host: str
    port: int
    data_dir: str
    settings: Mapping[str, str] = MappingProxyType({})
    advertised_host: str | None = None
    advertised_port: int | None = None
    node_id: int = 1
    brokers: int = 1
    racks: tuple[str | None, ...] = ()
    control_port: int | None = None
    temporary_data_dir: bool = False  # said in the start-up log line
    transcript_file: bool = False  # a transcript file is written (it reads the handle's transcript)

    @property
    def observed(self) -> bool:
        """Whether anything can read the transcript or the checker: the control endpoint or the file."""
        return self.control_port is not None or self.transcript_file


# What Kafka's shipped config/server.properties sets for a development broker, where it differs from the
# broker's own defaults and kemu does not already set it (a one-node broker's internal-topic replication is
# in the core's static layer): no wait before a new group's first rebalance ("a better out-of-the-box
# experience for development and testing", as the file says). Every broker the fixtures, `kemu serve` and the
# image start has it unless a setting says otherwise, as a static setting (DescribeConfigs says
# STATIC_BROKER_CONFIG, as Kafka does for the file's); the README lists it.
DEVELOPMENT_SETTINGS: Mapping[str, str] = MappingProxyType({"group.initial.rebalance.delay.ms": "0"})


def cluster_settings(settings: Mapping[str, str], brokers: int) -> dict[str, str]:
    """`settings` over the development settings above, with a cluster's internal topics replicated as a Kafka
    cluster of that size has them (3, its default, or every broker when there are fewer), so their
    coordinators can move."""
    completed = {**DEVELOPMENT_SETTINGS, **settings}
    for name in ("offsets.topic.replication.factor", "transaction.state.log.replication.factor"):
        if brokers > 1:
            completed.setdefault(name, str(min(3, brokers)))
    return completed


def unknown_settings(settings: Mapping[str, str]) -> tuple[str, ...]:
    """The names among `settings` that no broker config is (Kafka warns of them), once the settings are checked
    as a broker's start checks them (a bad value raises Kafka's InvalidConfigError)."""
    return _unknown_settings(tuple(settings.items()))


@functools.lru_cache(maxsize=64)
def _unknown_settings(settings: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    # Every test's broker of a suite has the same settings: checked once (a refusal, which raises, is not kept).
    return tuple(apply_properties(BrokerConfig(), dict(settings)))


def broker_config(settings: Mapping[str, str], data_dir: str | Path, *, node_id: int, host: str, port: int,
                  brokers: int, racks: Sequence[str | None]) -> BrokerConfig:
    made = _configured(tuple(settings.items()), node_id, host, port, brokers, tuple(racks))
    # A copy of its own, with what a broker's config may change in place (its dynamic settings) its own too.
    config = copy.copy(made)
    config.data_dir = str(data_dir)
    config.properties = dict(made.properties)
    config.settings_given = set(made.settings_given)
    return config


@functools.lru_cache(maxsize=64)
def _configured(settings: tuple[tuple[str, str], ...], node_id: int, host: str, port: int, brokers: int,
                racks: tuple[str | None, ...]) -> BrokerConfig:
    # Every test's broker of a suite is made with the same: parsed and checked once (the data directory, which
    # no setting reads, set on each copy).
    config = BrokerConfig(node_id=node_id, host=host, port=port, data_dir="", brokers=brokers, racks=racks)
    apply_properties(config, dict(settings))
    return config


def address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def bootstrap_servers(core: BrokerCore) -> str:
    """Every broker of the cluster at the address it advertises, comma-separated: the banner's list."""
    return ",".join(address(*core.advertised_endpoint(node.node_id)) for node in core.cluster)
