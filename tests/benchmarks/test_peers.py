"""The Kafka and kfake peers' pure parts: versions and labels, the kfake build cache, the registry, a plan's
cleanup, and their columns in the report (nothing is started or built here: test_peer_smoke.py does that)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchmarks.brokers import BrokerDefinition, LaunchPlan, RunningBroker
from benchmarks.peers import (
    BROKER_KEYS,
    KFAKE_DIR,
    KFAKE_READY,
    KFAKE_SOURCES,
    PeerUnavailable,
    definitions,
    kafka_version,
    kfake_binary,
    kfake_digest,
    kfake_label,
    kfake_plan,
    kfake_version,
)
from benchmarks.report import Cell, format_table
from benchmarks.run import columns_for, rows_per_broker

PSEUDO = "v0.0.0-20260918054303-01f206a7e32c"


def test_kafka_version_comes_from_the_broker_jar_not_the_clients() -> None:
    jars = [Path("/m2/kafka-clients-4.3.1.jar"), Path("/m2/kafka_2.13-4.3.1.jar"), Path("/m2/scala-library.jar")]
    assert kafka_version(jars) == "4.3.1"
    assert kafka_version(jars[:1]) is None


def test_kfake_version_and_label_from_go_mod() -> None:
    go_mod = f"module x\n\ngo 1.26.0\n\nrequire github.com/twmb/franz-go/pkg/kfake {PSEUDO}\n\nrequire (\n" \
             "\tgithub.com/twmb/franz-go v1.22.3 // indirect\n)\n"
    assert kfake_version(go_mod) == PSEUDO
    assert kfake_version(go_mod.replace("require github.com/twmb/franz-go/pkg/kfake",
                                        "require (\n\tgithub.com/twmb/franz-go/pkg/kfake") + ")") == PSEUDO
    assert kfake_version("module x\n") is None
    assert kfake_label(PSEUDO) == "kfake 2026-09-18"
    assert kfake_label("v1.2.3") == "kfake v1.2.3"
    assert kfake_label(None) == "kfake"


def test_the_committed_go_mod_pins_kfake() -> None:
    assert kfake_version((KFAKE_DIR / "go.mod").read_text()) is not None
    assert (KFAKE_DIR / "go.sum").is_file()


def copy_sources(into: Path) -> Path:
    into.mkdir()
    for name in KFAKE_SOURCES:
        shutil.copy(KFAKE_DIR / name, into / name)
    return into


def test_the_digest_follows_every_source_file(tmp_path: Path) -> None:
    source = copy_sources(tmp_path / "src")
    before = kfake_digest(source)
    assert kfake_digest(source) == before
    for name in KFAKE_SOURCES:
        original = (source / name).read_bytes()
        (source / name).write_bytes(original + b"\n")
        assert kfake_digest(source) != before, name
        (source / name).write_bytes(original)


def test_a_cached_binary_is_used_without_go(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = copy_sources(tmp_path / "src")
    cache = tmp_path / "cache"
    cache.mkdir()
    built = cache / f"kfake-{kfake_digest(source)}"
    built.write_text("#!/bin/sh\n")
    built.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    assert kfake_binary(source, cache) == built


def test_without_go_or_a_cached_binary_kfake_is_unavailable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = copy_sources(tmp_path / "src")
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    with pytest.raises(PeerUnavailable, match="go is not on PATH"):
        kfake_binary(source, tmp_path / "cache")
    monkeypatch.setenv("KEMU_KFAKE_CACHE", str(tmp_path / "cache"))
    (kfake,) = definitions(["kfake"])
    assert kfake.key == "kfake" and kfake.label.startswith("kfake ")
    assert kfake.unavailable is not None and "go is not on PATH" in kfake.unavailable


def test_kfake_plan_waits_for_the_line_main_go_prints() -> None:
    plan = kfake_plan(Path("/cache/kfake-0123"))
    assert plan.command == ["/cache/kfake-0123", "-port", "0"]
    assert plan.address is None and plan.ready_line is KFAKE_READY
    # main.go prints `kfake serving on <ListenAddrs()[0]>`, an IPv4 host:port.
    assert 'fmt.Printf("kfake serving on %s\\n", cluster.ListenAddrs()[0])' in (KFAKE_DIR / "main.go").read_text()
    match = KFAKE_READY.search("kfake serving on 127.0.0.1:40123\n")
    assert match is not None and match.groups() == ("127.0.0.1", "40123")


def test_the_registry_knows_every_key_in_report_order() -> None:
    assert BROKER_KEYS == ("kemu", "kafka", "kfake", "tansu", "mock")
    with pytest.raises(KeyError, match="redpanda"):
        definitions(["kemu", "redpanda"])
    assert [d.key for d in definitions(["mock", "kemu"])] == ["kemu", "mock"]


def test_a_plans_cleanup_runs_once_even_when_the_broker_never_started() -> None:
    cleaned: list[int] = []

    def plan() -> LaunchPlan:
        return LaunchPlan(command=["true"], address=("127.0.0.1", 1), cleanup=lambda: cleaned.append(1),
                          log_tail=lambda: "--- kafka.log ---\nlast words\n")

    broker = RunningBroker(BrokerDefinition(key="kafka", label="Kafka", plan=plan))
    assert broker.output().endswith("last words\n")
    broker.stop()
    broker.stop()
    assert cleaned == [1]


def test_every_peer_gets_a_column_and_a_ratio_and_an_unavailable_one_says_why() -> None:
    def never(_: BrokerDefinition) -> list[Cell]:
        raise AssertionError("an unavailable broker is not measured")

    def plan() -> LaunchPlan:
        raise AssertionError("not started")

    brokers = [BrokerDefinition(key, key.capitalize(), plan) for key in ("kemu", "kafka", "tansu", "mock")]
    brokers.insert(2, BrokerDefinition("kfake", "kfake 2026-09-18", plan, unavailable="go is not on PATH"))
    figures = {"kemu": 40.0, "kafka": 400.0, "tansu": 20.0, "mock": 10.0}
    rows = rows_per_broker(brokers, ["RSS, MiB"],
                           lambda d: [Cell(figures[d.key])] if d.key in figures else never(d))
    assert rows[0].cells["kfake"].not_applicable == "go is not on PATH"
    lines = [[cell.strip() for cell in line.strip("|").split("|")]
             for line in format_table(rows[:1], columns_for(brokers)).splitlines() if line.startswith("|")]
    assert lines[0] == ["metric", "Kemu", "Kafka", "kfake 2026-09-18", "Tansu", "Mock",
                        "kemu/Kafka", "kemu/kfake", "kemu/Tansu", "kemu/mock"]
    assert lines[2][:2] == ["RSS, MiB", "40.0"] and lines[2][6:] == ["0.10×", "—", "2.00×", "4.00×"]
    assert lines[2][3].startswith("n/a")
