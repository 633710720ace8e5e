"""Writes kemu's copy of Kafka's config definitions from the reference Kafka itself:
`python -m compat_tests.differential.admin_config_table` (again whenever the reference Kafka's version moves).

A reference Kafka with no settings beyond the shipped ones describes its broker (synonyms and documentation)
and a new topic (documentation); from that come
- kemu/kafka_defaults/broker_keys.py: every broker config's name, type, default (its DEFAULT_CONFIG synonym),
  whether Kafka can change it at runtime (not read-only) and its validator (what Kafka's ConfigDef prints of
  it, read by a small Java program on the reference's classpath), as a Python literal so a start-up imports it
  from its .pyc without parsing;
- kemu/broker/kafka_config_docs.json: Kafka's documentation of every broker and topic config, read only when
  a DescribeConfigs asks for it.
test_describe_configs.py then compares kemu's answers with the running Kafka's, so a table gone stale fails.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from compat_tests import jars
from compat_tests.differential.admin_requests import (
    RESOURCE_BROKER,
    RESOURCE_GROUP,
    RESOURCE_TOPIC,
    describe_configs,
    ensure_topic,
)
from compat_tests.differential.targets import Target
from compat_tests.reference.kafka import KAFKA_JAR_SET, ReferenceKafka, find_java
from kemu.broker.broker_configs import CONFIG_TYPE_IDS, ConfigSource

KEMU_BROKER = Path(__file__).resolve().parents[2] / "kemu" / "broker"
KEYS_MODULE = KEMU_BROKER.parent / "kafka_defaults" / "broker_keys.py"
DOCS_FILE = KEMU_BROKER / "kafka_config_docs.json"
TYPE_NAMES = {number: name for name, number in CONFIG_TYPE_IDS.items()}
TOPIC = "kemu-config-table"
GROUP = "kemu-config-table-group"  # a group config resource needs no group


# Prints every broker config's validator as Kafka's ConfigDef holds it: name, class, toString().
VALIDATOR_DUMP = """
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.server.config.AbstractKafkaConfig;
public class DumpValidators {
    public static void main(String[] args) {
        for (ConfigDef.ConfigKey key : AbstractKafkaConfig.CONFIG_DEF.configKeys().values()) {
            ConfigDef.Validator v = key.validator;
            System.out.println(key.name + "\\t" + (v == null ? "" : v.getClass().getSimpleName()) + "\\t"
                + (v == null ? "" : v.toString()));
        }
    }
}
"""
Spec = tuple[str, ...]


def validator_specs(classpath: str, java: str) -> dict[str, Spec]:
    """The validators kemu can rebuild: Range ("range", min, max: Java's printing, "" for none) and
    ValidString ("in", choices...), CaseInsensitiveValidString ("in_ci", choices...)."""
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "DumpValidators.java"
        source.write_text(VALIDATOR_DUMP, encoding="utf-8")
        printed = subprocess.run([java, "-cp", classpath, str(source)], capture_output=True, text=True,
                                 check=True).stdout
    specs: dict[str, Spec] = {}
    for line in printed.splitlines():
        name, kind, text = line.split("\t")
        if kind == "Range":
            low, _, high = text.strip("[]").partition(",...")
            specs[name] = ("range", "" if low == "..." else low, high.lstrip(","))
        elif kind == "ValidString":
            specs[name] = ("in", *text.strip("[]").split(", "))
        elif kind == "CaseInsensitiveValidString":
            specs[name] = ("in_ci", *text.removeprefix("(case insensitive) ").strip("[]").split(", "))
    return specs


def broker_keys(configs: list[dict[str, Any]], specs: dict[str, Spec]
                ) -> list[tuple[str, str, str | None, bool, Spec | None]]:
    keys = []
    for entry in sorted(configs, key=lambda entry: entry["name"]):
        default = next((synonym["value"] for synonym in entry["synonyms"]
                        if synonym["name"] == entry["name"] and synonym["source"] == ConfigSource.DEFAULT_CONFIG),
                       None)
        keys.append((entry["name"], TYPE_NAMES[entry["config_type"]], default, not entry["read_only"],
                     specs.get(entry["name"])))
    return keys


def read(target: Target) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    ensure_topic(target, TOPIC)
    body = describe_configs(target, [(RESOURCE_BROKER, "1", None), (RESOURCE_TOPIC, TOPIC, None),
                                     (RESOURCE_GROUP, GROUP, None)],
                            synonyms=True, documentation=True)
    broker, topic, group = body["results"]
    return broker["configs"], topic["configs"], group["configs"]


def write(broker: list[dict[str, Any]], topic: list[dict[str, Any]], group: list[dict[str, Any]], version: str,
          specs: dict[str, Spec]) -> None:
    keys = broker_keys(broker, specs)
    KEYS_MODULE.write_text(
        f'"""Kafka {version}\'s broker configs: (name, type, default, dynamic, validator), as its DescribeConfigs\n'
        "lists them and its ConfigDef validates them (a Range or a ValidString; None for any other).\n\n"
        "Generated by `python -m compat_tests.differential.admin_config_table` from the reference Kafka; do not\n"
        'edit by hand (kemu.kafka_defaults reads it)."""\n\n'
        "# ruff: noqa: E501\n\n"
        "KAFKA_BROKER_KEYS: tuple[tuple[str, str, str | None, bool, tuple[str, ...] | None], ...] = (\n"
        + "".join(f"    {key!r},\n" for key in keys) + ")\n",
        encoding="utf-8")
    docs = {"kafka_version": version,
            "broker": {entry["name"]: entry["documentation"] for entry in broker},
            "topic": {entry["name"]: entry["documentation"] for entry in topic},
            "group": {entry["name"]: entry["documentation"] for entry in group}}
    DOCS_FILE.write_text(json.dumps(docs, indent=0, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def main() -> None:
    classpath = jars.classpath(KAFKA_JAR_SET)
    version = next(part.split("-")[-1].removesuffix(".jar") for part in classpath.split(":")
                   if Path(part).name.startswith("kafka-clients-"))
    java = find_java() or "java"
    specs = validator_specs(classpath, java)
    with ReferenceKafka(classpath=classpath, java=java) as kafka:
        host, port = kafka.addresses[0]
        broker, topic, group = read(Target("kafka", host, port))
    write(broker, topic, group, version, specs)
    print(f"{KEYS_MODULE}: {len(broker)} broker configs; {DOCS_FILE}: and {len(topic)} topic and {len(group)} "
          "group configs' docs")


if __name__ == "__main__":
    main()
