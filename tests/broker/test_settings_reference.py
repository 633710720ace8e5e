"""SETTINGS.md (kemu.broker.settings_reference): current, its statuses true to kemu's code, and the check that
keeps them true failing on a status the code contradicts."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from kemu.broker import settings_reference
from kemu.broker.broker_configs import BROKER_CONFIGS
from kemu.broker.settings_reference import (
    ACCEPTED_ONLY,
    HONOURED,
    REFERENCE,
    REGENERATE,
    broker_status,
    check_statuses,
    first_sentence,
    kemu_sources,
    render,
    scan,
    topic_status,
)
from kemu.log.config import TOPIC_CONFIGS

SOURCES = kemu_sources()


def _without(pattern: str) -> dict[str, str]:
    """kemu's sources with every match of `pattern` renamed out of the way (an attribute or name nobody reads)."""
    changed = {path: re.sub(pattern, lambda m: m.group(0) + "_renamed", text) for path, text in SOURCES.items()}
    assert changed != SOURCES, f"nothing in kemu's sources matches {pattern}"
    return changed


def _with(text: str) -> dict[str, str]:
    """kemu's sources and one more module."""
    return {**SOURCES, "kemu/log/planted.py": text}


def test_settings_md_is_current() -> None:
    assert REFERENCE.read_text(encoding="utf-8") == render(), f"SETTINGS.md is not current: run `{REGENERATE}`"


def test_the_statuses_agree_with_the_code() -> None:
    assert check_statuses(SOURCES) == []


def test_the_reference_has_a_row_for_every_setting_with_its_status() -> None:
    rows = [line for line in render().splitlines() if line.startswith("| `")]
    names = [row.split("`")[1] for row in rows]
    assert names == [*BROKER_CONFIGS, *TOPIC_CONFIGS]
    retention = next(row for row in rows if row.startswith("| `retention.ms` "))
    assert retention.split(" | ")[1:5] == ["LONG", "`604800000`", "`log.retention.ms`, `log.retention.minutes`, "
                                           "`log.retention.hours`", HONOURED]
    threads = next(row for row in rows if row.startswith("| `background.threads` "))
    assert threads.split(" | ")[1:5] == ["INT", "`10`", "yes", ACCEPTED_ONLY]
    listeners = next(row for row in rows if row.startswith("| `listeners` "))
    assert listeners.split(" | ")[3:5] == ["no (yes in Kafka)", HONOURED]


def test_broker_statuses() -> None:
    assert broker_status("socket.request.max.bytes") == HONOURED  # kemu's own definition, read by the server
    assert broker_status("background.threads") == ACCEPTED_ONLY  # Kafka's, no kemu definition
    assert broker_status("log.retention.hours") == HONOURED  # retention.ms's broker default
    assert broker_status("log.preallocate") == ACCEPTED_ONLY  # preallocate's
    assert broker_status("log.dir") == ACCEPTED_ONLY  # kemu's own, declared: the data directory is --data-dir
    assert broker_status("broker.rack") == HONOURED  # a field of its own name (BrokerConfig.rack)
    assert broker_status("sasl.jaas.config") == HONOURED  # declared: read under its listener's prefix
    assert topic_status("cleanup.policy") == HONOURED
    assert topic_status("unclean.leader.election.enable") == ACCEPTED_ONLY


PLANTED = {
    "an honoured topic config nobody reads": (
        lambda: _without(r"\.retention_ms\b"),
        "topic config retention.ms is declared honoured, but nothing reads LogConfig.retention_ms: read it, or take "
        "it out of HONOURED_TOPIC_CONFIGS"),
    "a derived attribute nobody reads": (
        lambda: _without(r"\.compact\b"),
        "topic config cleanup.policy is declared honoured, but nothing reads LogConfig.compact: read it, or take it "
        "out of HONOURED_TOPIC_CONFIGS"),
    "an accepted-only topic config read": (
        lambda: _with("def preallocate(config):\n    return config.preallocate\n"),
        "topic config preallocate is accepted only, but LogConfig.preallocate is read at kemu/log/planted.py:2: "
        "declare it in HONOURED_TOPIC_CONFIGS"),
    "an honoured broker setting nobody reads": (
        lambda: _without(r"\.socket_request_max_bytes\b"),
        "kemu defines broker setting socket.request.max.bytes, but nothing reads it: act on it, or declare it in "
        "BROKER_DECLARED (accepted only, or honoured another way) with the reason"),
    "an accepted-only broker setting named": (
        lambda: _with('def threads(properties):\n    return properties.get("background.threads")\n'),
        "broker setting background.threads is accepted only (kemu has no definition of it), but kemu names it at "
        "kemu/log/planted.py:2: define it in kemu.broker.broker_configs, or declare it in BROKER_DECLARED"),
    "a setting declared accepted only and unnamed, named": (
        lambda: _with('def folder(properties):\n    return properties.get("log.dir")\n'),
        "broker setting log.dir is declared accepted only (the data directory is `--data-dir`), but kemu names it at "
        "kemu/log/planted.py:2: correct its entry in BROKER_DECLARED"),
    "a setting declared named, unnamed": (
        lambda: _without(r'(?<=")inter\.broker\.listener\.name(?=")'),
        "broker setting inter.broker.listener.name is declared named by kemu's code, but nothing names it: correct "
        "its entry in BROKER_DECLARED"),
}


@pytest.mark.parametrize(("planted", "problem"), PLANTED.values(), ids=PLANTED.keys())
def test_a_status_the_code_contradicts_fails(planted: Callable[[], dict[str, str]], problem: str) -> None:
    assert check_statuses(planted()) == [problem]


def test_a_read_on_something_not_named_a_config_does_not_count() -> None:
    assert check_statuses(_with("def preallocate(segment):\n    return segment.preallocate\n")) == []
    reads = scan({"kemu/x.py": "log.config.preallocate\nsegment.delete()\nstorage.log_config(t).segment_bytes\n"})
    assert reads.config_attributes == {"preallocate": ["kemu/x.py:1"], "segment_bytes": ["kemu/x.py:3"]}


def test_looking_up_a_default_reads_nothing() -> None:
    # Kafka's default taken as a constant (kemu.kafka_defaults) is not a read of the setting; its value is.
    assert scan({"kemu/x.py": 'LIMIT = int_default("fetch.max.bytes")\n'}).strings == {}
    assert scan({"kemu/x.py": 'LIMIT = int_setting(properties, "fetch.max.bytes")\n'}).strings == {
        "fetch.max.bytes": ["kemu/x.py:1"]}


def test_a_definition_table_names_nothing() -> None:
    # kemu/security/settings.py's SECURITY_CONFIGS defines the security settings; naming one there reads nothing.
    table = 'SECURITY_CONFIGS = (("ssl.protocol", "The TLS protocol."),)\n'
    assert scan({"kemu/security/settings.py": table}).strings == {}
    assert scan({"kemu/security/other.py": table}).strings["ssl.protocol"] == ["kemu/security/other.py:1"]


@pytest.mark.parametrize(("kafka_html", "sentence"), [
    ("The <code>x</code> setting. More.", "The x setting."),
    ("Threads (e.g. for cleaning) to use.<p>Note: not here.</p>", "Threads (e.g. for cleaning) to use."),
    ("No full stop at the end", "No full stop at the end"),
    ("Less &lt;than&gt; this. And", "Less <than> this."),
])
def test_first_sentence(kafka_html: str, sentence: str) -> None:
    assert first_sentence(kafka_html) == sentence


def test_check_refuses_a_stale_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    stale = tmp_path / "SETTINGS.md"
    stale.write_text("old\n", encoding="utf-8")
    monkeypatch.setattr(settings_reference, "REFERENCE", stale)
    assert settings_reference.main(["--check"]) == 1
    assert REGENERATE in capsys.readouterr().err
    assert settings_reference.main(["--write"]) == 0
    assert stale.read_text(encoding="utf-8") == render()
    assert settings_reference.main(["--check"]) == 0
