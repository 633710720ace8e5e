"""Comparing what Kafka and kemu answered, and the file of the differences that are known and why.

`differences(kafka, kemu)` walks two normalised observations (dicts, lists, scalars) and lists every place they
differ as a `Difference(path, kafka, kemu)`, the path `/`-separated (`topics/0/partitions/2/leader_epoch`), a
side that lacks the place holding `ABSENT`. `check(scenario, kafka, kemu)` normalises both (normalise.py),
and fails on any difference that no entry of known_differences.json explains; it also fails on an entry made
for exactly this scenario (no wildcard in its `scenario`) that no longer matches anything, so the file cannot
keep a difference that was fixed.

known_differences.json keeps its entries in one section per area (`sections.NAME.differences`). An entry:
`scenario` and `path` (shell-style patterns, `*` crossing `/`), an optional `kafka` and/or `kemu` (the value
that side must have for the entry to apply), and `reason`.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from compat_tests.differential.normalise import Normaliser

KNOWN_DIFFERENCES = Path(__file__).with_name("known_differences.json")
ABSENT = "<absent>"
_UNSET = object()


@dataclass(frozen=True)
class Difference:
    path: str
    kafka: Any
    kemu: Any

    def __str__(self) -> str:
        kafka, kemu = json.dumps(self.kafka, default=str), json.dumps(self.kemu, default=str)
        return f"{self.path or '/'}: Kafka {kafka}, kemu {kemu}"


@dataclass(frozen=True)
class KnownDifference:
    scenario: str
    path: str
    reason: str
    kafka: Any = _UNSET
    kemu: Any = _UNSET

    @property
    def exact(self) -> bool:
        return not any(char in self.scenario for char in "*?[")

    def explains(self, scenario: str, difference: Difference) -> bool:
        return (fnmatch.fnmatchcase(scenario, self.scenario) and fnmatch.fnmatchcase(difference.path, self.path)
                and (self.kafka is _UNSET or self.kafka == difference.kafka)
                and (self.kemu is _UNSET or self.kemu == difference.kemu))


def load_known(path: Path = KNOWN_DIFFERENCES) -> tuple[KnownDifference, ...]:
    document = json.loads(path.read_text(encoding="utf-8"))
    entries = []
    for entry in (entry for section in document["sections"].values() for entry in section["differences"]):
        unknown = set(entry) - {"scenario", "path", "reason", "kafka", "kemu"}
        if unknown or not entry.get("reason"):
            raise ValueError(f"{path}: entry {entry} has unknown keys {sorted(unknown)} or no reason")
        entries.append(KnownDifference(**entry))
    return tuple(entries)


@cache
def known() -> tuple[KnownDifference, ...]:
    return load_known()


def differences(kafka: Any, kemu: Any, path: str = "") -> list[Difference]:
    if isinstance(kafka, dict) and isinstance(kemu, dict):
        found = []
        for key in list(kafka) + [key for key in kemu if key not in kafka]:
            here = f"{path}/{key}" if path else str(key)
            found += differences(kafka.get(key, ABSENT), kemu.get(key, ABSENT), here)
        return found
    if isinstance(kafka, list) and isinstance(kemu, list):
        found = []
        for index in range(max(len(kafka), len(kemu))):
            here = f"{path}/{index}" if path else str(index)
            found += differences(kafka[index] if index < len(kafka) else ABSENT,
                                 kemu[index] if index < len(kemu) else ABSENT, here)
        return found
    if type(kafka) is not type(kemu) or kafka != kemu:
        return [Difference(path, kafka, kemu)]
    return []


@dataclass(frozen=True)
class Verdict:
    scenario: str
    unexplained: tuple[Difference, ...]
    explained: tuple[tuple[Difference, KnownDifference], ...]
    stale: tuple[KnownDifference, ...]

    @property
    def identical(self) -> bool:
        return not (self.unexplained or self.explained)

    def report(self) -> str:
        lines = [f"scenario {self.scenario}:"]
        lines += [f"  different: {difference}" for difference in self.unexplained]
        lines += [f"  known entry no longer seen: path {entry.path!r} ({entry.reason})" for entry in self.stale]
        return "\n".join(lines)


def judge(scenario: str, kafka: Any, kemu: Any, entries: tuple[KnownDifference, ...] | None = None, *,
          normalised: bool = False, varying: Mapping[str, str] | None = None) -> Verdict:
    """Normalise (unless already done) and compare; sort each difference into explained or not.

    `varying` names more fields whose values may differ, for this scenario only ({field name: kind}); a test
    passing it says why in a comment."""
    entries = known() if entries is None else entries
    if not normalised:
        kafka, kemu = Normaliser()(kafka, varying), Normaliser()(kemu, varying)
    explained: list[tuple[Difference, KnownDifference]] = []
    unexplained: list[Difference] = []
    for difference in differences(kafka, kemu):
        entry = next((entry for entry in entries if entry.explains(scenario, difference)), None)
        if entry is None:
            unexplained.append(difference)
        else:
            explained.append((difference, entry))
    used = {id(entry) for _, entry in explained}
    stale = tuple(entry for entry in entries
                  if entry.exact and entry.scenario == scenario and id(entry) not in used)
    return Verdict(scenario, tuple(unexplained), tuple(explained), stale)


def check(scenario: str, kafka: Any, kemu: Any, entries: tuple[KnownDifference, ...] | None = None, *,
          varying: Mapping[str, str] | None = None) -> Verdict:
    """judge(), failing the test on an unexplained difference or a stale entry of this scenario."""
    verdict = judge(scenario, kafka, kemu, entries, varying=varying)
    if verdict.unexplained or verdict.stale:
        raise AssertionError(verdict.report())
    return verdict
