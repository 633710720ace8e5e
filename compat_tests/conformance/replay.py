"""Replaying the corpus against a broker and judging each answer against Kafka's recorded one
(compare.judge, with the known differences of known_differences.json)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from compat_tests.conformance.corpus import normalised
from compat_tests.conformance.steps import Script, run_script
from compat_tests.differential import compare


@dataclass
class Tally:
    exchanges: int = 0
    identical: int = 0
    known: int = 0
    different: int = 0
    lines: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    known_seen: dict[str, list[str]] = field(default_factory=dict)  # reason -> scenario/path seen
    api_keys: set[int] = field(default_factory=set)

    def summary(self) -> str:
        return (f"{self.exchanges} exchanges, {self.identical} identical, {self.known} known differences, "
                f"{self.different} different")


def replay(scripts: Iterable[Script], address: tuple[str, int], *,
           entries: tuple[compare.KnownDifference, ...] | None = None,
           echo: Callable[[str], None] | None = None) -> Tally:
    tally = Tally()
    entries = compare.known() if entries is None else entries
    for script in scripts:
        answers = normalised(script, run_script(script, address))
        for step, answer in zip(script.steps, answers, strict=True):
            scenario = script.scenario(step)
            tally.exchanges += 1
            tally.api_keys.add(step.api_key)
            verdict = compare.judge(scenario, step.response, answer, entries, normalised=True)
            for difference, entry in verdict.explained:
                tally.known_seen.setdefault(entry.reason, []).append(f"{scenario} {difference.path}")
            tally.stale += [f"{scenario}: known entry no longer seen: {entry.path!r} ({entry.reason})"
                            for entry in verdict.stale]
            if verdict.unexplained:
                tally.different += 1
                lines = [f"DIFFERENT {scenario} ({step.api_key} v{step.version})"]
                lines += [f"  {difference}" for difference in verdict.unexplained]
                tally.lines += lines
                if echo is not None:
                    for line in lines:
                        echo(line)
            elif verdict.explained:
                tally.known += 1
            else:
                tally.identical += 1
    return tally
