"""SETTINGS.md: every broker and topic setting kemu accepts, with Kafka's type, default and dynamism, whether
kemu honours it or only accepts it, and a line of description — and the check that keeps those statuses true
to the code.

The statuses are declared here and nowhere else, and `check_statuses` holds them to kemu's sources:

- A topic config is honoured when `HONOURED_TOPIC_CONFIGS` names it, with the `LogConfig` attributes kemu
  reads for it (some derived: cleanup.policy is read as `.compact` and `.delete`). Each of those attributes
  must be read somewhere in kemu, and no accepted-only config's field may be, nor any attribute the table
  does not list.
- A broker setting that is a topic config's broker-level default (log.retention.ms, message.max.bytes, ...)
  has that topic config's status: the log reads it through the topic config.
- Any other broker setting kemu defines itself (`broker_configs.kemu_definitions()`) is honoured, and kemu's
  code must name it: its dotted name as a string, or its `BrokerConfig` field. The rest of Kafka's are
  accepted only, and kemu's code must not name them. `BROKER_DECLARED` lists the exceptions either way, each
  with its reason and whether kemu's code names it (to check it, as Kafka's start-up does); the check holds
  each declaration to that.

A read counts wherever kemu's sources have it, except in the files `NOT_SCANNED` leaves out: the config tables
themselves, and the code that sets settings rather than acting on them. A topic config's attribute counts when
it is read from something named like a config (`config.retention_ms`, `self.log.config.compact`,
`storage.log_config(topic).segment_bytes`): the name separates a `LogConfig` from a segment's `.delete()`.

`python -m kemu.broker.settings_reference` prints the Markdown; `--write` writes SETTINGS.md at the root of
the checkout; `--check` exits 1 when it is not current. Each first runs `check_statuses` and stops, the
problems on stderr, when the code contradicts a status. tests/broker/test_settings_reference.py runs both.
"""

from __future__ import annotations

import argparse
import ast
import html
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import fields
from functools import cache
from pathlib import Path
from typing import NamedTuple, TypeGuard

from kemu.broker.broker_configs import (
    BROKER_CONFIGS,
    KEMU_ONLY,
    BrokerConfigKey,
    kafka_doc,
    kafka_docs_version,
    kemu_definitions,
)
from kemu.broker.config import BrokerConfig
from kemu.kafka_defaults import KAFKA_BROKER_KEYS
from kemu.log.config import SYNONYM_OWNERS, TOPIC_CONFIGS, ConfigKey, LogConfig

HONOURED = "honoured"
ACCEPTED_ONLY = "accepted only"

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "SETTINGS.md"
REGENERATE = "python -m kemu.broker.settings_reference --write"

HONOURED_TOPIC_CONFIGS: dict[str, tuple[str, ...]] = {
    "cleanup.policy": ("compact", "delete"),  # compaction; retention, DeleteRecords
    "compression.gzip.level": ("compression_gzip_level",),
    "compression.lz4.level": ("compression_lz4_level",),
    "compression.type": ("compression_type",),
    "compression.zstd.level": ("compression_zstd_level",),
    "delete.retention.ms": ("delete_retention_ms",),
    "flush.messages": ("flush_messages",),
    "flush.ms": ("flush_ms",),
    "index.interval.bytes": ("index_interval_bytes",),
    "max.compaction.lag.ms": ("max_compaction_lag_ms", "max_segment_ms"),  # also rolls a compacted segment
    "max.message.bytes": ("max_message_bytes",),
    "message.timestamp.after.max.ms": ("message_timestamp_after_max_ms",),
    "message.timestamp.before.max.ms": ("message_timestamp_before_max_ms",),
    "message.timestamp.type": ("timestamp_type",),
    "min.cleanable.dirty.ratio": ("min_cleanable_dirty_ratio",),
    "min.compaction.lag.ms": ("min_compaction_lag_ms",),
    "min.insync.replicas": ("min_insync_replicas",),
    "retention.bytes": ("retention_bytes",),
    "retention.ms": ("retention_ms",),
    "segment.bytes": ("segment_bytes",),
    "segment.index.bytes": ("segment_index_bytes",),
    "segment.jitter.ms": ("segment_jitter_ms",),
    "segment.ms": ("segment_ms", "max_segment_ms"),
}
"""The topic configs kemu acts on, each with the LogConfig attributes kemu reads for it. Every other topic
config is accepted only."""


class Declared(NamedTuple):
    """A broker setting whose status is not the rule's (kemu's own definitions honoured, Kafka's others not)."""

    status: str
    reason: str
    named: bool = False
    """kemu's code names it: to check it against other settings, as Kafka's start-up does, not to act on it."""


_NO_INTER_BROKER = "kemu's brokers make no connections to each other"
_PEM = "kemu reads PEM key and trust stores, which have no store password (ssl.key.password decrypts the key)"
BROKER_DECLARED: dict[str, Declared] = {
    "broker.id": Declared(ACCEPTED_ONLY, "a broker's id is node.id (`--node-id`), which DescribeConfigs also shows "
                                         "as broker.id"),
    "inter.broker.listener.name": Declared(ACCEPTED_ONLY, f"checked against the listeners as Kafka checks it; "
                                                          f"{_NO_INTER_BROKER}", named=True),
    "log.dir": Declared(ACCEPTED_ONLY, "the data directory is `--data-dir`"),
    "log.dirs": Declared(ACCEPTED_ONLY, "the data directory is `--data-dir`, which DescribeConfigs shows as log.dirs"),
    "process.roles": Declared(ACCEPTED_ONLY, "every kemu broker is a broker and a controller in one"),
    "sasl.jaas.config": Declared(HONOURED, "under a listener's and mechanism's prefix "
                                           "(`listener.name.<listener>.<mechanism>.sasl.jaas.config`), the one form a "
                                           "Kafka broker reads"),
    "sasl.mechanism.inter.broker.protocol": Declared(ACCEPTED_ONLY, _NO_INTER_BROKER),
    "security.inter.broker.protocol": Declared(ACCEPTED_ONLY, f"checked against the listeners as Kafka checks it; "
                                                              f"{_NO_INTER_BROKER}", named=True),
    "ssl.endpoint.identification.algorithm": Declared(ACCEPTED_ONLY, f"host name verification is a TLS client's; "
                                                                     f"{_NO_INTER_BROKER}"),
    "ssl.keystore.password": Declared(ACCEPTED_ONLY, _PEM),
    "ssl.protocol": Declared(ACCEPTED_ONLY, "the TLS versions a listener accepts are ssl.enabled.protocols'"),
    "ssl.truststore.password": Declared(ACCEPTED_ONLY, _PEM),
    "share.coordinator.state.topic.num.partitions": Declared(
        HONOURED, "the partitions `__share_group_state` is created with, and share-partition states hash over",
        named=True),
    "share.coordinator.state.topic.replication.factor": Declared(
        HONOURED, "the replicas `__share_group_state` is created with (at most the cluster's brokers)", named=True),
    "share.coordinator.state.topic.segment.bytes": Declared(
        HONOURED, "the segment.bytes `__share_group_state` is created with", named=True),
}
"""The broker settings whose status the rule does not give, each with its reason."""


def _group_config_declarations() -> dict[str, Declared]:
    """The broker settings behind the group configs (resource type GROUP): the bounds a group's value must keep
    (honoured: validated and clamped as Kafka does), and the defaults of those kemu's groups do not act on."""
    from kemu.broker.group_configs import GROUP_CONFIGS

    own = kemu_definitions()
    declared: dict[str, Declared] = {}
    for key in GROUP_CONFIGS.values():
        for bound in key.bounds or ():
            if bound and bound not in own:
                declared[bound] = Declared(HONOURED, f"bounds a group's own {key.name} (resource type GROUP): "
                                                     "refused outside them, clamped if they move", named=True)
        if key.synonym is not None and key.synonym not in own:
            declared[key.synonym] = Declared(
                ACCEPTED_ONLY, f"the default the group config {key.name} shows and is validated against",
                named=True)
    return declared


BROKER_DECLARED.update(_group_config_declarations())
_SHARE_GROUPS = "share groups' members run with it (ShareGroupHeartbeat), a group's own value first where it has one"
_STREAMS_GROUPS = ("streams groups' members run with it (StreamsGroupHeartbeat), a group's own value first where it "
                   "has one")
BROKER_DECLARED.update({
    "group.share.session.timeout.ms": Declared(HONOURED, _SHARE_GROUPS, named=True),
    "group.share.heartbeat.interval.ms": Declared(HONOURED, _SHARE_GROUPS, named=True),
    "group.share.assignment.interval.ms": Declared(HONOURED, _SHARE_GROUPS, named=True),
    "group.share.max.size": Declared(HONOURED, "the most members a share group takes (GROUP_MAX_SIZE_REACHED)",
                                     named=True),
    "group.streams.session.timeout.ms": Declared(HONOURED, _STREAMS_GROUPS, named=True),
    "group.streams.heartbeat.interval.ms": Declared(HONOURED, _STREAMS_GROUPS, named=True),
    "group.streams.assignment.interval.ms": Declared(HONOURED, _STREAMS_GROUPS, named=True),
    "group.streams.initial.rebalance.delay.ms": Declared(
        HONOURED, "how long a new streams group waits for more members before its first assignment "
                  "(ASSIGNMENT_DELAYED), a group's own value first where it has one", named=True),
    "group.streams.num.standby.replicas": Declared(
        HONOURED, "the standby replicas of each stateful task the sticky assignor places, a group's own value "
                  "first where it has one", named=True),
    "group.streams.max.size": Declared(HONOURED, "the most members a streams group takes (GROUP_MAX_SIZE_REACHED)",
                                       named=True),
    "add.partitions.to.txn.retry.backoff.ms": Declared(
        HONOURED, "how often a transactions-V2 Produce that found the producer's previous transaction completing "
                  "tries again to add its partition", named=True),
    "add.partitions.to.txn.retry.backoff.max.ms": Declared(
        HONOURED, "how long a transactions-V2 Produce tries again before it answers CONCURRENT_TRANSACTIONS",
        named=True),
    "request.timeout.ms": Declared(HONOURED, "bounds add.partitions.to.txn.retry.backoff.max.ms, as in Kafka's "
                                             "ReplicaManager", named=True),
    "quota.window.num": Declared(HONOURED, "the samples the producer_byte_rate and consumer_byte_rate quotas "
                                           "are measured over", named=True),
    "quota.window.size.seconds": Declared(HONOURED, "the span of each sample of the producer_byte_rate and "
                                                    "consumer_byte_rate quotas", named=True),
})

_TOKENS = "delegation tokens (CreateDelegationToken and the rest, SCRAM with tokenauth=true)"
BROKER_DECLARED.update({
    "delegation.token.secret.key": Declared(HONOURED, f"set and not empty, enables {_TOKENS}; their HMACs are "
                                                      "HmacSHA512 keyed with it", named=True),
    "delegation.token.max.lifetime.ms": Declared(HONOURED, "the longest a token lives, renewed or not", named=True),
    "delegation.token.expiry.time.ms": Declared(HONOURED, "how long a token lives unless renewed, and the longest "
                                                          "renewal", named=True),
    "delegation.token.expiry.check.interval.ms": Declared(HONOURED, "how often expired tokens are removed, on the "
                                                                    "broker's clock", named=True),
})

NOT_SCANNED: dict[str, str] = {
    "kemu/broker/broker_configs.py": "the broker config table",
    "kemu/kafka_defaults/broker_keys.py": "Kafka's broker configs, generated",
    "kemu/broker/settings_reference.py": "this module",
    "kemu/log/config.py": "the topic config table, and LogConfig deriving its fields",
    "kemu/testing/": "the test handle: it sets the settings of the brokers it starts",
    "kemu/spark/": "a Kafka client: the settings it names are a consumer's",
}
"""Sources whose reads do not count, by path or folder, with the reason."""

DEFINITION_TABLES: dict[str, tuple[str, ...]] = {"kemu/security/settings.py": ("SECURITY_CONFIGS",)}
"""Module-level tables of setting names in scanned files: naming a setting there defines it, reads nothing."""

_OWN = kemu_definitions()
_KAFKA_DYNAMIC = {name: dynamic for name, _, _, dynamic, _ in KAFKA_BROKER_KEYS}
_BROKER_FIELDS = frozenset(BrokerConfig.__dataclass_fields__) - {"properties", "settings_given"}
_LOG_CONFIG_ATTRIBUTES = frozenset(f.name for f in fields(LogConfig)) - {"overridden"}


def topic_status(name: str) -> str:
    return HONOURED if name in HONOURED_TOPIC_CONFIGS else ACCEPTED_ONLY


def broker_status(name: str) -> str:
    owner = SYNONYM_OWNERS.get(name)
    if owner is not None:
        return topic_status(owner[0].name)
    declared = BROKER_DECLARED.get(name)
    if declared is not None:
        return declared.status
    return HONOURED if name in _OWN else ACCEPTED_ONLY


# ---- what kemu's sources read ------------------------------------------------------------------------------
class Reads(NamedTuple):
    """Where kemu's sources name settings: each as "path:line"."""

    strings: dict[str, list[str]]
    """String constants, by their exact text."""
    attributes: dict[str, list[str]]
    """Attribute reads on anything, by attribute name."""
    config_attributes: dict[str, list[str]]
    """Attribute reads on something named like a config, by attribute name."""


def kemu_sources(root: Path = ROOT) -> dict[str, str]:
    """kemu's Python sources under `root`, by path relative to it, less those NOT_SCANNED."""
    found = {}
    for path in sorted((root / "kemu").rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if not relative.startswith(tuple(NOT_SCANNED)):
            found[relative] = path.read_text(encoding="utf-8")
    return found


def _receiver_name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call):
        return _receiver_name(node.func)
    return ""


def scan(sources: Mapping[str, str]) -> Reads:
    """Where `sources` (path: text) name settings: string constants, and attributes read."""
    reads = Reads({}, {}, {})
    for path, text in sorted(sources.items()):
        for kind, name, place in _file_reads(path, text):
            getattr(reads, kind).setdefault(name, []).append(place)
    return reads


@cache  # a test checks many variants of kemu's sources, most of their files unchanged
def _file_reads(path: str, text: str) -> tuple[tuple[str, str, str], ...]:
    tree = ast.parse(text, filename=path)
    tables = DEFINITION_TABLES.get(path, ())
    skipped = {id(node) for statement in tree.body if _defines(statement, tables) for node in ast.walk(statement)}
    skipped |= {id(node.args[0]) for node in ast.walk(tree) if _looks_up_a_default(node)}
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        place = f"{path}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append(("strings", node.value, place))
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            found.append(("attributes", node.attr, place))
            if "config" in _receiver_name(node.value).lower():
                found.append(("config_attributes", node.attr, place))
    return tuple(found)


DEFAULT_LOOKUPS = frozenset({"kafka_default", "int_default", "bool_default", "str_default"})
"""kemu.kafka_defaults' lookups of a default: naming a setting there takes Kafka's value, it reads no setting."""


def _looks_up_a_default(node: ast.AST) -> TypeGuard[ast.Call]:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in DEFAULT_LOOKUPS
            and bool(node.args))


def _defines(statement: ast.stmt, tables: tuple[str, ...]) -> bool:
    targets = statement.targets if isinstance(statement, ast.Assign) else \
        [statement.target] if isinstance(statement, ast.AnnAssign) else []
    return any(isinstance(target, ast.Name) and target.id in tables for target in targets)


def _at(places: Iterable[str]) -> str:
    places = list(places)
    return ", ".join(places[:3]) + (f" and {len(places) - 3} more" if len(places) > 3 else "")


# ---- the check ---------------------------------------------------------------------------------------------
def check_statuses(sources: Mapping[str, str]) -> list[str]:
    """Every way the declared statuses contradict `sources` (path: text), one sentence each; [] if none."""
    reads = scan(sources)
    return [*_check_topics(reads), *_check_broker(reads)]


def _check_topics(reads: Reads) -> list[str]:
    problems = []
    read = reads.config_attributes
    for name, attributes in HONOURED_TOPIC_CONFIGS.items():
        if name not in TOPIC_CONFIGS:
            problems.append(f"HONOURED_TOPIC_CONFIGS names {name}, which is no topic config")
        for attribute in attributes:
            if attribute not in _LOG_CONFIG_ATTRIBUTES:
                problems.append(f"HONOURED_TOPIC_CONFIGS gives {name} LogConfig.{attribute}, which LogConfig lacks")
            elif attribute not in read:
                problems.append(f"topic config {name} is declared honoured, but nothing reads LogConfig.{attribute}: "
                                f"read it, or take it out of HONOURED_TOPIC_CONFIGS")
    listed = {attribute for attributes in HONOURED_TOPIC_CONFIGS.values() for attribute in attributes}
    for name in TOPIC_CONFIGS:
        field = name.replace(".", "_")
        if name not in HONOURED_TOPIC_CONFIGS and field in read:
            problems.append(f"topic config {name} is accepted only, but LogConfig.{field} is read at "
                            f"{_at(read[field])}: declare it in HONOURED_TOPIC_CONFIGS")
        listed.add(field)
    for attribute in sorted(_LOG_CONFIG_ATTRIBUTES - listed):
        if attribute in read:
            problems.append(f"LogConfig.{attribute} is read at {_at(read[attribute])}, but HONOURED_TOPIC_CONFIGS "
                            "gives it to no topic config")
    return problems


def _check_broker(reads: Reads) -> list[str]:
    problems = []
    for name in sorted(BROKER_DECLARED):
        if name not in BROKER_CONFIGS or name in SYNONYM_OWNERS:
            problems.append(f"BROKER_DECLARED names {name}, which is no broker setting of its own (a topic config's "
                            "default follows its topic config)")
    for name in sorted(BROKER_CONFIGS.keys() - SYNONYM_OWNERS.keys()):
        field = name.replace(".", "_")
        places = reads.strings.get(name, []) + (reads.attributes.get(field, []) if field in _BROKER_FIELDS else [])
        declared = BROKER_DECLARED.get(name)
        if declared is not None:
            if places and not declared.named:
                problems.append(f"broker setting {name} is declared {declared.status} ({declared.reason}), but kemu "
                                f"names it at {_at(places)}: correct its entry in BROKER_DECLARED")
            elif declared.named and not places:
                problems.append(f"broker setting {name} is declared named by kemu's code, but nothing names it: "
                                "correct its entry in BROKER_DECLARED")
        elif name in _OWN and not places:
            problems.append(f"kemu defines broker setting {name}, but nothing reads it: act on it, or declare it in "
                            "BROKER_DECLARED (accepted only, or honoured another way) with the reason")
        elif name not in _OWN and places:
            problems.append(f"broker setting {name} is accepted only (kemu has no definition of it), but kemu names "
                            f"it at {_at(places)}: define it in kemu.broker.broker_configs, or declare it in "
                            "BROKER_DECLARED")
    return problems


# ---- the Markdown ------------------------------------------------------------------------------------------
_TAG = re.compile(r"<[^>]+>")
_SPACE_BEFORE_PUNCTUATION = re.compile(r"\s+([.,;:)])")
_SENTENCE_END = re.compile(r"(?<!e\.g)(?<!i\.e)(?<!etc)(?<!vs)\.(?=\s)")


def first_sentence(kafka_html: str) -> str:
    """The first sentence of one of Kafka's config docs (HTML), as plain text."""
    text = " ".join(html.unescape(_TAG.sub(" ", kafka_html)).split())
    text = _SPACE_BEFORE_PUNCTUATION.sub(r"\1", text)  # where a tag ended before it: "<code>x</code>."
    end = _SENTENCE_END.search(text)
    return text[:end.end()] if end else text


def _cell(text: str) -> str:
    # A table cell: "|" escaped; "<" escaped outside code spans, where Markdown would read a tag.
    parts = text.replace("|", "\\|").split("`")
    return "`".join(part if index % 2 else part.replace("<", "\\<") for index, part in enumerate(parts))


def _code(text: str | None) -> str:
    if text is None:
        return "—"
    return '`""`' if text == "" else "`" + text.replace("|", "\\|") + "`"


def _dynamic(key: BrokerConfigKey) -> str:
    theirs = _KAFKA_DYNAMIC.get(key.name, key.dynamic)
    mine = "yes" if key.dynamic else "no"
    return mine if theirs == key.dynamic else f"{mine} ({'yes' if theirs else 'no'} in Kafka)"


def _broker_row(key: BrokerConfigKey) -> str:
    doc = key.doc or first_sentence(kafka_doc("broker", key.name) or "")
    declared = BROKER_DECLARED.get(key.name)
    if declared is not None:
        doc += f" — kemu: {declared.reason}"
    name = f"`{key.name}`" + (" †" if key.name in KEMU_ONLY else "")
    return (f"| {name} | {key.type} | {_code(key.default)} | {_dynamic(key)} | {broker_status(key.name)} | "
            f"{_cell(doc)} |")


def _topic_row(key: ConfigKey) -> str:
    synonyms = ", ".join(f"`{synonym.name}`" for synonym in key.synonyms) or "—"
    return (f"| `{key.name}` | {key.type} | {_code(key.default_string)} | {synonyms} | {topic_status(key.name)} | "
            f"{_cell(key.doc)} |")


def _counts(statuses: list[str]) -> str:
    return f"{statuses.count(HONOURED)} honoured, {statuses.count(ACCEPTED_ONLY)} accepted only"


def render() -> str:
    """SETTINGS.md's text."""
    version = kafka_docs_version()
    broker = [broker_status(name) for name in BROKER_CONFIGS]
    topic = [topic_status(name) for name in TOPIC_CONFIGS]
    lines = [
        "# Settings",
        "",
        f"Every broker and topic setting kemu accepts: Kafka {version}'s broker and topic configs, and a few of",
        "kemu's own. Each has Kafka's type and default (as Kafka's DescribeConfigs prints it; — where Kafka has",
        "none) and what kemu does with it:",
        "",
        "- **honoured**: kemu acts on the value, as Kafka does.",
        "- **accepted only**: kemu validates the value as Kafka does (its type, and its range or choices where",
        "  Kafka has them), stores it, and shows it in DescribeConfigs, but no behaviour of kemu's follows from it.",
        "",
        "A broker setting that gives topics their default (`log.retention.ms`, `message.max.bytes`, ...) has its",
        "topic config's status. Settings are given at start-up as `kemu serve --override NAME=VALUE` (or the",
        "fixtures' and the image's settings), broker settings marked dynamic also with AlterConfigs or",
        "IncrementalAlterConfigs, and topic settings when a topic is created or altered.",
        "",
        f"Generated by `{REGENERATE}` from kemu's config tables",
        "(`kemu/broker/broker_configs.py`, `kemu/log/config.py`) and the statuses declared in",
        "`kemu/broker/settings_reference.py`, which `tests/broker/test_settings_reference.py` checks against",
        "what kemu's code reads; that test also fails when this file is not current. Do not edit it by hand.",
        "",
        f"## Broker settings ({len(broker)}: {_counts(broker)})",
        "",
        "Dynamic: whether AlterConfigs may change the setting while kemu runs (where Kafka differs, it says).",
        "† not one of Kafka's broker configs: an authorizer's, a Kafka-internal or kemu's own.",
        "",
        "| Setting | Type | Kafka's default | Dynamic | kemu | Description |",
        "|---|---|---|---|---|---|",
        *(_broker_row(key) for key in BROKER_CONFIGS.values()),
        "",
        f"## Topic settings ({len(topic)}: {_counts(topic)})",
        "",
        "Broker default: the broker settings a topic without its own value takes it from, the first that is set.",
        "As in a Kafka without tiered storage, `remote.storage.enable=true` is refused.",
        "",
        "| Setting | Type | Kafka's default | Broker default | kemu | Description |",
        "|---|---|---|---|---|---|",
        *(_topic_row(key) for key in TOPIC_CONFIGS.values()),
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kemu.broker.settings_reference",
                                     description="Print (or write, or check) SETTINGS.md.")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help=f"write {REFERENCE}")
    mode.add_argument("--check", action="store_true", help=f"exit 1 when {REFERENCE.name} is not current")
    args = parser.parse_args(argv)
    problems = check_statuses(kemu_sources())
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        return 1
    text = render()
    if args.write:
        REFERENCE.write_text(text, encoding="utf-8")
        print(f"wrote {REFERENCE}")
    elif args.check:
        if not REFERENCE.exists() or REFERENCE.read_text(encoding="utf-8") != text:
            print(f"{REFERENCE} is not current: run `{REGENERATE}`", file=sys.stderr)
            return 1
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
