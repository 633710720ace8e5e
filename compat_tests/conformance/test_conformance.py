"""The conformance corpus: replayed against kemu (every machine), against Kafka itself (where Java is: the
normalisation removes only what varies), the replayer failing on a planted difference, and the corpus being
current (every step answered, its requests those the scripts make now, its names substituted per run)."""

from __future__ import annotations

import fnmatch
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from compat_tests.conformance import corpus, protocol
from compat_tests.conformance.__main__ import main
from compat_tests.conformance.replay import Tally, replay
from compat_tests.conformance.scripts import all_scripts
from compat_tests.conformance.steps import CLOSED, RUN_TOKEN, Connection, Script
from compat_tests.differential import compare
from compat_tests.kemu_process import KemuServeProcess
from compat_tests.reference.kafka import ReferenceKafka

MIN_EXCHANGES = 300
# Ids the scripts keep the same in every run, each for a reason its script gives (a group id whose
# __consumer_offsets partition a transaction shows).
FIXED_IDS = {f"conf-txg-{index}" for index in range(10)}
ID_FIELDS = {"name", "topic", "group_id", "transactional_id", "key", "resource_name", "resource_name_filter",
             "group_ids", "groups_names", "coordinator_keys", "topic_names", "transactional_ids", "groups"}


def scripts_of(group: str) -> list[Script]:
    return [script for script in corpus.load() if script.group == group]


def served_api_keys(address: tuple[str, int]) -> set[int]:
    connection = Connection(address)
    try:
        answer = connection.exchange(18, 3, {"client_software_name": "kemu-conformance",
                                             "client_software_version": "1"})
    finally:
        connection.close()
    assert answer != CLOSED
    return {entry["api_key"] for entry in answer["api_keys"]}


def assert_no_difference(tally: Tally) -> None:
    assert tally.different == 0, "\n".join(tally.lines + [tally.summary()])


def test_replay_against_kemu(conformance_kemu: KemuServeProcess) -> None:
    address = (conformance_kemu.host, conformance_kemu.port)
    tally = replay(scripts_of("default"), address)
    assert_no_difference(tally)
    assert not tally.stale, "\n".join(tally.stale)
    assert tally.exchanges >= MIN_EXCHANGES
    assert served_api_keys(address) <= tally.api_keys


def test_authorizer_scripts_against_kemu(conformance_kemu_authorizer: KemuServeProcess) -> None:
    tally = replay(scripts_of("authorizer"), (conformance_kemu_authorizer.host, conformance_kemu_authorizer.port))
    assert_no_difference(tally)
    assert not tally.stale, "\n".join(tally.stale)


def unused_entries(seen_reasons: set[str], entries: tuple[compare.KnownDifference, ...],
                   scenarios_not_replayed: list[str]) -> list[compare.KnownDifference]:
    """The conformance entries that explained nothing in a replay: a wildcard entry is never stale by itself
    (compare.judge checks exact ones), so this is how a fixed difference leaves the file. Entries that could
    apply to a scenario this replay did not run are left alone."""
    return [entry for entry in entries
            if entry.scenario.startswith("conformance.") and entry.reason not in seen_reasons
            and not any(fnmatch.fnmatchcase(name, entry.scenario) for name in scenarios_not_replayed)]


def test_every_conformance_entry_still_explains_something(conformance_kemu: KemuServeProcess,
                                                          conformance_kemu_authorizer: KemuServeProcess,
                                                          conformance_kemu_cluster: tuple[str, int],
                                                          conformance_kemu_tokens: tuple[str, int]) -> None:
    """Every group is replayed: an entry for "conformance.*" that only the cluster scripts used to need would
    otherwise never be found stale (ten such entries outlived their fixes)."""
    seen: set[str] = set()
    for group, address in (("default", (conformance_kemu.host, conformance_kemu.port)),
                           ("authorizer", (conformance_kemu_authorizer.host, conformance_kemu_authorizer.port)),
                           ("cluster", conformance_kemu_cluster), ("tokens", conformance_kemu_tokens)):
        seen.update(replay(scripts_of(group), address).known_seen)
    unused = unused_entries(seen, compare.known(), [])
    assert not unused, "known differences kemu no longer shows:\n" + "\n".join(
        f"  {entry.scenario} {entry.path}: {entry.reason}" for entry in unused)


def test_an_entry_that_explains_nothing_is_reported() -> None:
    used = compare.KnownDifference(scenario="conformance.x.*", path="a", reason="still seen")
    unused = compare.KnownDifference(scenario="conformance.y.*", path="b", reason="fixed long ago")
    cluster_only = compare.KnownDifference(scenario="conformance.cluster.*", path="c", reason="not replayed")
    assert unused_entries({"still seen"}, (used, unused, cluster_only), ["conformance.cluster.s.t"]) == [unused]


def test_cluster_scripts_against_kemu(conformance_kemu_cluster: tuple[str, int]) -> None:
    tally = replay(scripts_of("cluster"), conformance_kemu_cluster)
    assert_no_difference(tally)
    assert not tally.stale, "\n".join(tally.stale)


def test_cluster_scripts_against_kafka_itself(reference_kafka_cluster: ReferenceKafka) -> None:
    tally = replay(scripts_of("cluster"), reference_kafka_cluster.addresses[0])
    assert_no_difference(tally)
    assert tally.known == 0, tally.known_seen


def test_tokens_scripts_against_kemu(conformance_kemu_tokens: tuple[str, int]) -> None:
    tally = replay(scripts_of("tokens"), conformance_kemu_tokens)
    assert_no_difference(tally)
    assert not tally.stale, "\n".join(tally.stale)
    assert {38, 39, 40, 41} <= tally.api_keys


def test_tokens_scripts_against_kafka_itself(tokens_kafka: ReferenceKafka) -> None:
    tally = replay(scripts_of("tokens"), tokens_kafka.sasl_addresses[0])
    assert_no_difference(tally)
    assert tally.known == 0, tally.known_seen


def test_replay_against_kafka_itself(reference_kafka: ReferenceKafka) -> None:
    tally = replay(scripts_of("default"), reference_kafka.addresses[0])
    assert_no_difference(tally)
    assert tally.known == 0, tally.known_seen


def test_authorizer_scripts_against_kafka_itself(authorizer_kafka: ReferenceKafka) -> None:
    tally = replay(scripts_of("authorizer"), authorizer_kafka.addresses[0])
    assert_no_difference(tally)
    assert tally.known == 0, tally.known_seen


def _plant(directory: Path) -> str:
    """Alters the recorded answer of ApiVersions v3's error code in a copy of the corpus."""
    path = directory / "api_versions.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    step = next(step for step in document["scripts"][0]["steps"] if step["step"] == "v3")
    step["response"]["error_code"] = 99
    path.write_text(json.dumps(document), encoding="utf-8")
    return "conformance.api_versions.versions.v3"


def _part_of_the_corpus(directory: Path, *areas: str) -> Path:
    """A copy of some of the corpus's files: the CLI's tests need not replay all of it."""
    directory.mkdir()
    for area in areas:
        shutil.copy(corpus.CORPUS_DIR / f"{area}.json", directory)
    return directory


def test_replay_reports_a_planted_difference(conformance_kemu: KemuServeProcess, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    planted = _part_of_the_corpus(tmp_path / "corpus", "api_versions", "unsupported")
    scenario = _plant(planted)
    code = main(["replay", "--bootstrap", conformance_kemu.bootstrap, "--corpus", str(planted)])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1
    assert lines[-1].endswith("known differences, 1 different"), lines[-1]
    assert f"DIFFERENT {scenario} (18 v3)" in lines
    assert "  error_code: Kafka 99, kemu 0" in lines


def test_replay_prints_the_tally_last_and_exits_zero(conformance_kemu: KemuServeProcess, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    part = _part_of_the_corpus(tmp_path / "corpus", "api_versions", "unsupported", "offsets")
    code = main(["replay", "--bootstrap", conformance_kemu.bootstrap, "--corpus", str(part)])
    last = capsys.readouterr().out.splitlines()[-1]
    exchanges = sum(len(script.steps) for script in corpus.load(part))
    assert code == 0
    assert re.fullmatch(rf"{exchanges} exchanges, \d+ identical, \d+ known differences, 0 different", last), last


def _ids(value: Any, under: str = "") -> list[str]:
    if isinstance(value, dict):
        return [found for key, item in value.items() for found in _ids(item, key)]
    if isinstance(value, list):
        return [found for item in value for found in _ids(item, under)]
    return [value] if isinstance(value, str) and under in ID_FIELDS and value.startswith("conf-") else []


def test_the_corpus_is_current() -> None:
    recorded = {script.name: script for script in corpus.load()}
    written = all_scripts()
    assert sorted(script.name for script in written) == sorted(recorded), "record the corpus again"
    for script in written:
        kept = recorded[script.name]
        assert script.group == kept.group
        assert len(script.steps) == len(kept.steps), f"{script.name}: record the corpus again"
        for made, step in zip(script.steps, kept.steps, strict=True):
            where = script.scenario(step)
            assert made.to_json() | {"response": None} == step.to_json() | {"response": None}, \
                f"{where}: the script changed since the corpus was recorded"
            assert step.response is not None, f"{where} has no recorded answer"
            assert step.response == CLOSED or isinstance(step.response, dict), where
            if isinstance(step.response, dict):
                assert not {"_failed", "_answered", "_correlation_id"} & set(step.response), \
                    f"{where}: Kafka's answer was not a whole answer: {step.response}"
            for name in _ids(step.request):
                assert RUN_TOKEN in name or name in FIXED_IDS, f"{where}: {name!r} is not substituted per run"


def test_every_api_key_has_a_spec_and_a_step() -> None:
    from kemu.wire.apis import VERSIONS

    keys = {step.api_key for script in corpus.load() for step in script.steps}
    assert set(VERSIONS) <= keys
    unspecified = keys - set(protocol.api_names())
    assert unspecified == {100, 1000}, unspecified  # the keys no Kafka has, on purpose
    assert all(protocol.request_spec(key) and protocol.response_spec(key) for key in keys - unspecified)


def test_protocol_codec_round_trips_through_kemus_decoder() -> None:
    """The corpus's encoder and kemu's decoder agree on a request of each shape (flexible or not, tagged
    fields, nullable structs); kemu's codec is not what the corpus trusts, but a disagreement is a bug in
    one of them."""
    from kemu.wire import codec

    cases: list[tuple[int, int, dict[str, Any]]] = [
        (3, 12, {"topics": [{"name": "t"}], "allow_auto_topic_creation": False}),
        (3, 4, {"topics": [{"name": "t"}], "allow_auto_topic_creation": True}),
        (10, 4, {"key_type": 1, "coordinator_keys": ["g"]}),
        (75, 0, {"topics": [{"name": "t"}], "response_partition_limit": 5,
                 "cursor": {"topic_name": "t", "partition_index": 1}}),
        (75, 0, {"topics": [{"name": "t"}], "response_partition_limit": 5, "cursor": None}),
    ]
    for api_key, version, body in cases:
        decoded = codec.decode_request(protocol.encode_request(api_key, version, 7, "c", body))
        assert (decoded.header.api_key, decoded.header.api_version, decoded.header.correlation_id) == (
            api_key, version, 7)
        assert _contains(decoded.body, body), (api_key, version, decoded.body)


def _contains(got: Any, want: Any) -> bool:
    if isinstance(want, dict):
        return isinstance(got, dict) and all(key in got and _contains(got[key], item) for key, item in want.items())
    if isinstance(want, list):
        return (isinstance(got, list) and len(got) == len(want)
                and all(_contains(g, w) for g, w in zip(got, want, strict=True)))
    return bool(got == want)
