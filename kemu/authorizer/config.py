"""Which authorizer a broker's settings turn on (`authorizer.class.name`), and building it. Kept apart from
the ACLs and the StandardAuthorizer so that a broker without an authorizer (Kafka's default) checks the
setting and starts without importing them."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from kemu.kafka_defaults import str_setting

if TYPE_CHECKING:
    from kemu.authorizer.standard import StandardAuthorizer

AUTHORIZER_CLASSES = frozenset({
    "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "kafka.security.authorizer.AclAuthorizer",
})


def super_users(value: str | None) -> list[str]:
    """`super.users`: principals separated by semicolons."""
    return [item.strip() for item in (value or "").split(";") if item.strip()]


def build_authorizer(properties: Mapping[str, str], data_dir: Path) -> StandardAuthorizer | None:
    """The authorizer `authorizer.class.name` turns on (None when it is empty, as in Kafka), configured by
    `super.users` and `allow.everyone.if.no.acl.found`."""
    if not str_setting(properties, "authorizer.class.name").strip():
        return None
    from kemu.authorizer.standard import StandardAuthorizer
    from kemu.authorizer.store import AclStore

    allow = str_setting(properties, "allow.everyone.if.no.acl.found").strip().lower() == "true"
    return StandardAuthorizer(AclStore(data_dir), super_users(properties.get("super.users")), allow)
