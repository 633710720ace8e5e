"""The cluster's feature levels (KIP-584) as ApiVersions v3+ reports them: what this broker supports, and what
the cluster finalized.

A new Kafka 4.3 single-node KRaft cluster supports and finalizes (ApiVersions v4, read off the reference
Kafka; the order is that of Kafka's hash maps):

    supported   group.version 0-1, kraft.version 0-1, metadata.version 7-30, share.version 0-1,
                streams.version 0-1, transaction.version 0-2, eligible.leader.replicas.version 0-1
    finalized   group.version 1, streams.version 1, transaction.version 2,
                eligible.leader.replicas.version 1, share.version 1, metadata.version 30

A feature finalized at level 0 is not listed (kraft.version, with a static quorum), and below v4 the
supported features whose minimum is 0 are left out (KAFKA-17492: older clients fail to read them), which
leaves metadata.version alone.

kemu reports the same, except for the two features of protocols it does not serve: share groups (KIP-932,
share.version) and streams groups (KIP-1071, streams.version). It supports them only at level 0 and
finalizes neither, as a 4.3 cluster with them off would — so that an application or tool that asks the
features whether share or streams groups are on is told the truth. (The clients themselves decide by the
API keys: the Java consumer, Admin and Streams ask for ShareGroupHeartbeat / StreamsGroupHeartbeat, which kemu
does not advertise; only transaction.version is read by a client to choose a protocol, the Java producer's
transactions version 2.)

`transaction.version` may be set with `kemu.features` (kemu's own setting, in kafka-storage format's
--feature syntax: `transaction.version=1`): 2 is Kafka 4.x's default (KIP-890 part 2), 1 and 0 make clients
run transactions the version-1 way (0 also journals TransactionLogValue v0, as before Kafka 4.0). The
finalized features epoch is Kafka's metadata offset of the image the broker last loaded, different from
one Kafka start to the next; kemu's is a constant.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

TRANSACTION_VERSION = "transaction.version"
SETTING = "kemu.features"

# name -> (min, max), in the order Kafka 4.3 lists them.
SUPPORTED: Final[Mapping[str, tuple[int, int]]] = MappingProxyType({
    "group.version": (0, 1),
    "kraft.version": (0, 1),
    "metadata.version": (7, 30),
    "share.version": (0, 0),  # Kafka: 0-1; share groups are issue 32
    "streams.version": (0, 0),  # Kafka: 0-1; streams groups are issue 33
    "transaction.version": (0, 2),
    "eligible.leader.replicas.version": (0, 1),
})
# The levels of a new cluster, in the order Kafka 4.3 lists its finalized features (0: not listed).
DEFAULT_FINALIZED: Final[Mapping[str, int]] = MappingProxyType({
    "group.version": 1,
    "streams.version": 0,  # Kafka: 1
    "transaction.version": 2,
    "eligible.leader.replicas.version": 1,
    "share.version": 0,  # Kafka: 1
    "metadata.version": 30,
    "kraft.version": 0,
})
SETTABLE: Final = frozenset({TRANSACTION_VERSION})
FINALIZED_EPOCH = 1


class FeatureSettingError(ValueError):
    """A `kemu.features` value kemu cannot take; the message says why."""


def parse_levels(text: str) -> dict[str, int]:
    """`kemu.features`: NAME=LEVEL, comma-separated, as kafka-storage format's --feature takes them."""
    levels: dict[str, int] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, sep, raw = item.partition("=")
        name = name.strip()
        if not sep:
            raise FeatureSettingError(f"{item!r} is not NAME=LEVEL")
        try:
            level = int(raw.strip())
        except ValueError:
            raise FeatureSettingError(f"{name}: {raw.strip()!r} is not a feature level") from None
        if name not in SUPPORTED:
            raise FeatureSettingError(f"unknown feature {name!r}")
        if name not in SETTABLE:
            raise FeatureSettingError(f"{name} stays at {DEFAULT_FINALIZED[name]}: kemu sets only "
                                      f"{', '.join(sorted(SETTABLE))}")
        low, high = SUPPORTED[name]
        if not low <= level <= high:
            raise FeatureSettingError(f"{name}={level}: kemu supports levels {low}-{high}")
        levels[name] = level
    return levels


@dataclass(slots=True)
class Features:
    finalized: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_FINALIZED))
    epoch: int = FINALIZED_EPOCH

    @classmethod
    def from_properties(cls, properties: Mapping[str, str]) -> Features:
        features = cls()
        features.finalized.update(parse_levels(properties.get(SETTING, "")))
        return features

    @property
    def transaction_version(self) -> int:
        return self.finalized[TRANSACTION_VERSION]

    def supported_keys(self, version: int) -> list[dict[str, Any]]:
        """ApiVersions' SupportedFeatures at `version`: below v4 without the features whose minimum is 0."""
        return [{"name": name, "min_version": low, "max_version": high}
                for name, (low, high) in SUPPORTED.items() if version >= 4 or low != 0]

    def finalized_keys(self) -> list[dict[str, Any]]:
        return [{"name": name, "max_version_level": level, "min_version_level": level}
                for name, level in self.finalized.items() if level != 0]
