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

kemu reports the same. Share groups (KIP-932) and streams groups (KIP-1071) are served: share.version and
streams.version are finalized at 1 and stay there (Kafka Streams with group.protocol=streams asks for
StreamsGroupHeartbeat, which kemu advertises; only transaction.version is read by a client to choose a
protocol, the Java producer's transactions version 2).

`transaction.version` may be set with `kemu.features` (kemu's own setting, in kafka-storage format's
--feature syntax: `transaction.version=1`): 2 is Kafka 4.x's default (KIP-890 part 2), 1 and 0 make clients
run transactions the version-1 way (0 also journals TransactionLogValue v0, as before Kafka 4.0). And as
`kafka-features upgrade/downgrade` does, UpdateFeatures (key 57) changes the finalized levels, checked as
Kafka's FeatureControlManager checks them (`update`): transaction.version 0-2 and kraft.version (an
upgrade to 1; informational here) change; metadata.version stays at 30 (a downgrade is refused with
Kafka's messages, as Kafka refuses those that could lose metadata); group.version and
eligible.leader.replicas.version stay at 1, their protocols being always on in kemu. The levels and the
epoch are kept in the data directory (`kemu-features.json`, once they are not a new cluster's: a directory
without the file has those); `kemu.features`, when given, sets its features again at every start.

The finalized features epoch is Kafka's metadata offset of the image the broker last loaded, different from
one Kafka start to the next and moving with every record; kemu's starts at 1 and goes up by one with every
change.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from kemu.wire.messages.k18_api_versions import (
        ApiVersionsResponseFinalizedFeatures,
        ApiVersionsResponseSupportedFeatures,
    )

TRANSACTION_VERSION = "transaction.version"
SETTING = "kemu.features"

# name -> (min, max), in the order Kafka 4.3 lists them.
SUPPORTED: Final[Mapping[str, tuple[int, int]]] = MappingProxyType({
    "group.version": (0, 1),
    "kraft.version": (0, 1),
    "metadata.version": (7, 30),
    "share.version": (0, 1),
    "streams.version": (0, 1),
    "transaction.version": (0, 2),
    "eligible.leader.replicas.version": (0, 1),
})
# The levels of a new cluster, in the order Kafka 4.3 lists its finalized features (0: not listed).
DEFAULT_FINALIZED: Final[Mapping[str, int]] = MappingProxyType({
    "group.version": 1,
    "streams.version": 1,
    "transaction.version": 2,
    "eligible.leader.replicas.version": 1,
    "share.version": 1,
    "metadata.version": 30,
    "kraft.version": 0,
})
SETTABLE: Final = frozenset({TRANSACTION_VERSION})
FINALIZED_EPOCH = 1
FILE = "kemu-features.json"
METADATA_VERSION, KRAFT_VERSION = "metadata.version", "kraft.version"
# Features whose protocols kemu always serves: they stay at their level.
FIXED: Final = frozenset({"group.version", "eligible.leader.replicas.version", "share.version",
                          "streams.version"})
# UpdateFeatures' upgrade types (FeatureUpdate.UpgradeType).
UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3


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
    """The finalized feature levels (UpdateFeatures, ApiVersions v3+), kept under the data directory."""

    finalized: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_FINALIZED))
    epoch: int = FINALIZED_EPOCH
    path: Path | None = None  # where the levels are kept; None: nowhere (a test's)
    # Called after every change (the transaction coordinator follows transaction.version).
    listeners: list[Callable[[Features], None]] = field(default_factory=list)

    @classmethod
    def from_properties(cls, properties: Mapping[str, str], data_dir: Path | None = None) -> Features:
        """The levels kept in `data_dir` (a new cluster's where none are), then `kemu.features` over them."""
        path = None if data_dir is None else data_dir / FILE
        features = cls(path=path)
        kept = None
        if path is not None and path.exists():
            import json  # a new cluster at the default levels keeps no file, and start-up needs no json

            kept = json.loads(path.read_text())
        if kept is not None:
            # A fixed feature is at its level whatever an older kemu kept (share.version and streams.version
            # were 0 before share and streams groups were served).
            features.finalized.update({name: int(level) for name, level in kept.get("finalized", {}).items()
                                       if name in SUPPORTED and name not in FIXED})
            features.epoch = int(kept.get("epoch", FINALIZED_EPOCH))
        given = parse_levels(properties.get(SETTING, ""))
        if any(features.finalized[name] != level for name, level in given.items()):
            features.finalized.update(given)
            features.epoch += 1
        if kept is not None or features.finalized != DEFAULT_FINALIZED or features.epoch != FINALIZED_EPOCH:
            # A new cluster at the default levels keeps no file: reading none gives it those levels again
            # (writing it was a quarter of what making a test's broker cost).
            features._persist()
        return features

    def _persist(self) -> None:
        if self.path is None:
            return
        import json

        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"finalized": self.finalized, "epoch": self.epoch}, indent=1) + "\n")
        os.replace(tmp, self.path)

    def update(self, updates: Sequence[tuple[str, int, int]], validate_only: bool,
               controller_id: int) -> str | None:
        """UpdateFeatures' (feature, level, upgrade type)s, all or none, as Kafka's
        FeatureControlManager.updateFeatures: None when they are taken (and, unless `validate_only`, made),
        else the message of the first refused one (INVALID_UPDATE_VERSION). A level of 0 removes a feature
        from the finalized list. Every update made moves the epoch on, whether or not the level changed (as
        each is a record in Kafka's metadata log), but for a kraft.version left as it is."""
        proposed: dict[str, int] = {}
        written = False
        for name, level, upgrade_type in updates:
            refused = self._refusal(name, level, upgrade_type, controller_id)
            if refused is not None:
                return refused
            proposed[name] = level
            written = written or name != KRAFT_VERSION or level != self.finalized[name]
        if validate_only or not written:
            return None
        self.finalized.update(proposed)
        self.epoch += 1
        self._persist()
        for listener in self.listeners:
            listener(self)
        return None

    def _refusal(self, name: str, level: int, upgrade_type: int, controller_id: int) -> str | None:
        def invalid(why: str) -> str:
            return f"Invalid update version {level} for feature {name}. {why}"

        if upgrade_type not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
            return invalid("The controller does not support the given upgrade type.")
        current = self.finalized.get(name, 0)
        if level < 0:
            return invalid("A feature version cannot be less than 0.")
        low, high = SUPPORTED.get(name, (0, 0))
        if not low <= level <= high:
            supported = str(low) if low == high else f"{low}-{high}"
            return invalid(f"Local controller {controller_id} " + (
                "does not support this feature." if high == 0 else f"only supports versions {supported}"))
        if level < current and upgrade_type == UPGRADE:
            return invalid("Can't downgrade the version of this feature without setting the upgrade type to "
                           "either safe or unsafe downgrade.")
        if level > current and upgrade_type != UPGRADE:
            return invalid("Can't downgrade to a newer version.")
        if name == METADATA_VERSION and level < current:
            why = ("Unsafe metadata downgrade is not supported in this version." if upgrade_type == UNSAFE_DOWNGRADE
                   else "Refusing to perform the requested downgrade because it might delete metadata information.")
            return f"Unsupported metadata.version downgrade from {current} to {level}. {why}"
        if name == KRAFT_VERSION and upgrade_type != UPGRADE and level != current:
            return invalid("Can't downgrade the version of this feature.")
        if name in FIXED and level != DEFAULT_FINALIZED[name]:
            return invalid(f"kemu serves {name} at level {DEFAULT_FINALIZED[name]} only.")
        return None

    @property
    def transaction_version(self) -> int:
        return self.finalized[TRANSACTION_VERSION]

    def supported_keys(self, version: int) -> list[ApiVersionsResponseSupportedFeatures]:
        """ApiVersions' SupportedFeatures at `version`: below v4 without the features whose minimum is 0."""
        return [{"name": name, "min_version": low, "max_version": high}
                for name, (low, high) in SUPPORTED.items() if version >= 4 or low != 0]

    def finalized_keys(self) -> list[ApiVersionsResponseFinalizedFeatures]:
        return [{"name": name, "max_version_level": level, "min_version_level": level}
                for name, level in self.finalized.items() if level != 0]
