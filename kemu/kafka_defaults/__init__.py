"""Kafka's broker configs and their defaults, in one table (`broker_keys.py`, generated from the reference
Kafka): every default kemu gives a Kafka setting is read from here, so none is written twice and none
drifts from Kafka's. A leaf room: the broker's config tables, the group coordinator's settings and the
security settings all read it."""

from __future__ import annotations

from collections.abc import Mapping

from kemu.kafka_defaults.broker_keys import KAFKA_BROKER_KEYS

__all__ = ["KAFKA_BROKER_KEYS", "OWN_KEYS", "bool_default", "int_default", "kafka_default",
           "kafka_type", "int_setting", "str_default", "str_setting"]

# Broker settings Kafka's DescribeConfigs does not list (kemu's own, the authorizer's, and one internal Kafka
# setting), in the same form: (name, type, default, dynamic, validator).
OWN_KEYS: tuple[tuple[str, str, str | None, bool, tuple[str, ...] | None], ...] = (
    ("allow.everyone.if.no.acl.found", "BOOLEAN", "false", False, None),  # StandardAuthorizer's
    ("super.users", "STRING", None, False, None),  # StandardAuthorizer's
    ("producer.id.expiration.check.interval.ms", "INT", "600000", False, None),  # Kafka's, internal
    ("kemu.features", "STRING", "", False, None),
    ("kemu.client.telemetry.enable", "BOOLEAN", "false", False, None),
    ("kemu.scram.credentials", "PASSWORD", None, False, None),
)

_BY_NAME = {key[0]: key for key in (*KAFKA_BROKER_KEYS, *OWN_KEYS)}


def kafka_default(name: str) -> str | None:
    """The default of a broker config as Kafka's DescribeConfigs prints it (None: it has none); of one of
    OWN_KEYS, kemu's. A name neither defines is a KeyError: a typo in kemu, not a setting without a default."""
    return _BY_NAME[name][2]


def kafka_type(name: str) -> str:
    return _BY_NAME[name][1]


def int_default(name: str) -> int:
    """Kafka's default of an INT, SHORT or LONG broker config."""
    default = kafka_default(name)
    if default is None or kafka_type(name) not in ("INT", "SHORT", "LONG"):
        raise TypeError(f"{name} has no integer default in Kafka ({kafka_type(name)} {default!r})")
    return int(default)


def str_default(name: str) -> str:
    """Kafka's default of a STRING or LIST broker config that has one."""
    default = kafka_default(name)
    if default is None:
        raise TypeError(f"{name} has no default in Kafka")
    return default


def bool_default(name: str) -> bool:
    """Kafka's default of a BOOLEAN broker config."""
    if kafka_type(name) != "BOOLEAN":
        raise TypeError(f"{name} is no BOOLEAN in Kafka ({kafka_type(name)})")
    return kafka_default(name) == "true"


def int_setting(properties: Mapping[str, str], name: str) -> int:
    """An integer setting as given in server.properties (kemu's `properties`), else Kafka's default."""
    value = properties.get(name)
    return int_default(name) if value is None else int(value.strip())


def str_setting(properties: Mapping[str, str], name: str) -> str:
    """A setting as given in server.properties, else Kafka's default (which it must have)."""
    value = properties.get(name)
    return str_default(name) if value is None else value
