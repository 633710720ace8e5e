"""Every broker setting's default is written once, in kemu.kafka_defaults (Kafka's table, generated from the
reference Kafka, and kemu's own few): BrokerConfig and GroupConfig read theirs from it, kemu's deliberate
differences are listed in KEMU_DEFAULTS, and no module writes a default of its own beside a setting's name."""

from __future__ import annotations

import ast
import re
from dataclasses import MISSING, fields
from pathlib import Path

import pytest

from kemu.broker.config import KEMU_DEFAULTS, PROPERTY_FIELDS, BrokerConfig
from kemu.groups import GroupConfig
from kemu.kafka_defaults import KAFKA_BROKER_KEYS, OWN_KEYS, bool_default, int_default, kafka_default, str_default

KEMU = Path(__file__).resolve().parents[1] / "kemu"
TABLE = {key[0]: key for key in (*KAFKA_BROKER_KEYS, *OWN_KEYS)}
# The topic configs' own table (resource TOPIC): a topic config that shares its name with a broker setting
# (min.insync.replicas, compression.type, ...) is defined there, once.
TOPIC_TABLE = "kemu/log/config.py"
# A literal beside a setting's name in a comment: `x: int = 6000  # group.min.session.timeout.ms`.
_COMMENTED = re.compile(r"=\s*(-?[\d_]+|True|False|\"[^\"]*\")\s*#\s*([a-z0-9]+(?:\.[a-z0-9]+)+)\b")


def written_defaults(path: str, text: str) -> list[str]:
    """Where a source writes a broker setting's default itself: a literal after a setting's name among a
    call's arguments (`get("quota.window.num", "11")`, `setting(broker, "group.share.max.size", 200)`,
    `BrokerConfigKey("num.partitions", "INT", "1")`), or a literal commented with the setting's name."""
    found = []
    for node in ast.walk(ast.parse(text, filename=path)):
        if not isinstance(node, ast.Call):
            continue
        for index, arg in enumerate(node.args):
            if isinstance(arg, ast.Constant) and arg.value in TABLE:
                name = arg.value
                for later in node.args[index + 1:]:
                    if isinstance(later, ast.Constant) and _is_default(name, later.value):
                        found.append(f"{path}:{node.lineno}: {name} = {later.value!r}")
    for number, line in enumerate(text.splitlines(), 1):
        match = _COMMENTED.search(line)
        if match and match.group(2) in TABLE:
            found.append(f"{path}:{number}: {match.group(2)} = {match.group(1)}")
    return found


def _is_default(name: str, value: object) -> bool:
    if isinstance(value, bool | int):
        return True  # a number or flag after a setting's name is its value written in place
    return isinstance(value, str) and value == TABLE[name][2] and value not in TABLE


def test_no_module_writes_a_default_of_its_own() -> None:
    sources = {str(path.relative_to(KEMU.parent)): path for path in sorted(KEMU.rglob("*.py"))
               if "kafka_defaults" not in path.parts}
    assert TOPIC_TABLE in sources
    found = [place for name, path in sources.items() if name != TOPIC_TABLE
             for place in written_defaults(name, path.read_text(encoding="utf-8"))]
    assert found == []


@pytest.mark.parametrize("source", [
    'x = properties.get("quota.window.num", "11")\n',
    'y = setting(broker, "group.share.max.size", 200)\n',
    'key = BrokerConfigKey("num.partitions", "INT", "1", at_least(1))\n',
    "class C:\n    timeout: int = 6000  # group.min.session.timeout.ms\n",
    "class C:\n    enabled: bool = True  # auto.create.topics.enable: why\n",
    "LOCKS = 2_000  # group.share.partition.max.record.locks\n",
])
def test_a_planted_default_is_found(source: str) -> None:
    assert len(written_defaults("planted.py", source)) == 1


@pytest.mark.parametrize("source", [
    'x = properties.get("quota.window.num", str_default("quota.window.num"))\n',
    'pair = ("compression.type", "producer")\n',  # a topic's setting given a value, not a default
    'key = GroupConfigKey("consumer.session.timeout.ms", "INT", "group.consumer.session.timeout.ms", None)\n',
    "class C:\n    timeout: int = int_default(\"group.min.session.timeout.ms\")\n",
])
def test_reading_the_table_is_not_writing_a_default(source: str) -> None:
    assert written_defaults("clean.py", source) == []


def _setting_of_broker_field(field_name: str) -> str | None:
    by_field = {attribute: name for name, attribute in PROPERTY_FIELDS.items()}
    name = by_field.get(field_name, field_name.replace("_", "."))
    return name if name in TABLE else None


def test_broker_config_defaults_are_the_tables_or_kemus_listed_own() -> None:
    checked = 0
    for field in fields(BrokerConfig):
        name = _setting_of_broker_field(field.name)
        if name is None or field.default is MISSING:
            continue
        checked += 1
        if name in KEMU_DEFAULTS:
            assert str(field.default) == KEMU_DEFAULTS[name] != kafka_default(name), name
        elif field.default is None:
            assert kafka_default(name) is None, name
        elif isinstance(field.default, bool):
            assert field.default == bool_default(name), name
        elif isinstance(field.default, int):
            assert field.default == int_default(name), name
        else:
            assert field.default == str_default(name), name
    assert checked >= 35  # the table covers BrokerConfig's settings, not a handful


def test_group_config_defaults_are_the_tables() -> None:
    checked = 0
    for field in fields(GroupConfig):
        name = next((n for n in (f"group.{field.name.replace('_', '.')}", field.name.replace("_", "."))
                     if n in TABLE), None)
        if name is None:
            continue
        checked += 1
        expected = (tuple(str_default(name).split(",")) if isinstance(field.default, tuple)
                    else int_default(name))
        assert field.default == expected, name
    assert checked >= 20
