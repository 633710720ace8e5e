"""Client telemetry (KIP-714): CLIENT_METRICS config resources (IncrementalAlterConfigs, DescribeConfigs,
ListConfigResources) with Kafka's validation of them, and GetTelemetrySubscriptions / PushTelemetry against a
subscription matching this client's id: the subscription id, the throttling of a request before the push
interval, and each error a push can get.

Kafka serves keys 71 and 72 whether or not a telemetry receiver is configured (it only leaves them out of
ApiVersions without one), so the reference needs no receiver plugin for these answers. A fixed client instance id
makes the subscription id (a CRC-32C of the subscribed metrics and interval, XORed with the id's hash) the same
in every run; the subscription is deleted at the end, so a used broker's next run starts from none.
"""

from __future__ import annotations

import gzip
from typing import Any

from compat_tests.conformance.scripts import barrier, step
from compat_tests.conformance.steps import CLIENT_ID, Script, Step

CLIENT_METRICS = 16
SUBSCRIPTION = "conf-tel-{run}"
# Canonical base64 of 16 bytes: 22 characters, the last one carrying no bits beyond the 128.
INSTANCE = "kemuTelemetryConfAAAAA"
EMPTY_INSTANCE = "kemuTelemetryNoSubsAAA"
ZERO = "AAAAAAAAAAAAAAAAAAAAAA"
THROTTLED = (89,)  # THROTTLING_QUOTA_EXCEEDED: sent again once the push interval has passed
WAIT_WHY = "a push before the subscription's push interval (1 s) is throttled: the step waits it out"
RANDOM_ID = {"varying": {"client_instance_id": "any:client_instance_id", "subscription_id": "any:subscription_id"},
             "why": "the broker picks a random client instance id, which the subscription id is XORed with"}
_SUBSCRIBED = {"metrics": "org.apache.kafka.producer.,org.apache.kafka.consumer.coordinator.rebalance.latency.max",
               "interval.ms": "1000", "match": f"client_id={CLIENT_ID},client_source_address=127\\.0\\.0\\.1"}
# 2 MiB of zeros, a few KiB gzipped: more than telemetry.max.bytes (1 MiB) once decompressed.
_BOMB = gzip.compress(bytes(2 * 1024 * 1024), mtime=0).hex()


def _alter(name: str, changes: list[tuple[str, int, str | None]], validate_only: bool = False) -> dict[str, Any]:
    return {"resources": [{"resource_type": CLIENT_METRICS, "resource_name": name,
                           "configs": [{"name": key, "config_operation": op, "value": value}
                                       for key, op, value in changes]}],
            "validate_only": validate_only}


def _set(name: str, values: dict[str, str], validate_only: bool = False) -> dict[str, Any]:
    return _alter(name, [(key, 0, value) for key, value in values.items()], validate_only)


def _describe(name: str, keys: list[str] | None = None, *, synonyms: bool = True,
              documentation: bool = True) -> dict[str, Any]:
    return {"resources": [{"resource_type": CLIENT_METRICS, "resource_name": name, "configuration_keys": keys}],
            "include_synonyms": synonyms, "include_documentation": documentation}


def _get(instance: str) -> dict[str, Any]:
    return {"client_instance_id": instance}


def _push(instance: str, subscription: int | str, *, compression: int = 0, metrics: str = "",
          terminating: bool = False) -> dict[str, Any]:
    return {"client_instance_id": instance, "subscription_id": subscription, "terminating": terminating,
            "compression_type": compression, "metrics": metrics}


def config_scripts() -> list[Script]:
    name = "conf-tel-cfg-{run}"
    steps = [
        step("interval too short", 44, 1, _set(name, {"interval.ms": "99"})),
        step("interval too long", 44, 1, _set(name, {"interval.ms": "3600001"})),
        step("interval not a number", 44, 1, _set(name, {"interval.ms": "soon"})),
        step("unknown config", 44, 1, _set(name, {"metrics.prefix": "org."})),
        step("match without a value", 44, 1, _set(name, {"match": "client_id"})),
        step("match of an unknown selector", 44, 1, _set(name, {"match": "client_rack=a"})),
        step("match of a bad pattern", 44, 1, _set(name, {"match": "client_id=[a"})),
        step("match twice", 44, 1, _set(name, {"match": "client_id=a,client_id=a"})),
        step("metrics twice", 44, 1, _set(name, {"metrics": "org.a,org.a"})),
        step("an empty metric", 44, 1, _set(name, {"metrics": "org.a,,org.b"})),
        step("append", 44, 1, _alter(name, [("metrics", 2, "org.a")])),
        step("unnamed", 44, 1, _set("", {"metrics": "org.a"})),
        step("validate only", 44, 1, _set(name, {"metrics": "org.a", "interval.ms": "1000"}, validate_only=True)),
        step("not kept by validate only", 74, 1, {"resource_types": [CLIENT_METRICS]}, only_run=("config_resources",)),
        step("describe unnamed", 32, 4, _describe("")),
        step("describe unknown", 32, 4, _describe("conf-tel-none-{run}")),
        step("describe unknown v1", 32, 1, _describe("conf-tel-none-{run}", documentation=False)),
        step("set", 44, 1, _set(name, {"metrics": " org.a , org.b ", "interval.ms": " 2000 ",
                                       "match": "client_software_name = kemu.* "})),
        *barrier("tel-cfg"),
        step("describe", 32, 4, _describe(name)),
        step("describe one key", 32, 4, _describe(name, ["interval.ms"], synonyms=False, documentation=False)),
        step("list", 74, 1, {"resource_types": [CLIENT_METRICS]}, only_run=("config_resources",)),
        step("list v0", 74, 0, {}, only_run=("config_resources",)),
        step("list every type", 74, 1, {"resource_types": []}, only_run=("config_resources",),
             key_by={"config_resources": "resource_name"}),
        step("delete one", 44, 1, _alter(name, [("match", 1, None)])),
        step("legacy alter", 33, 2, {"resources": [{"resource_type": CLIENT_METRICS, "resource_name": name,
                                                    "configs": [{"name": "metrics", "value": "org.c"}]}],
                                     "validate_only": False}),
        *barrier("tel-cfg-2"),
        step("described after", 32, 4, _describe(name, synonyms=True, documentation=False)),
        step("delete the rest", 44, 1, _alter(name, [("metrics", 1, None), ("interval.ms", 1, None)])),
        *barrier("tel-cfg-3"),
        step("listed after", 74, 1, {"resource_types": [CLIENT_METRICS]}, only_run=("config_resources",)),
        step("described when gone", 32, 4, _describe(name, synonyms=True, documentation=False)),
    ]
    return [Script("telemetry.client_metrics_configs", steps)]


def subscription_scripts() -> list[Script]:
    steps: list[Step] = [
        step("no subscription", 71, 0, _get(EMPTY_INSTANCE)),
        step("subscribe", 44, 1, _set(SUBSCRIPTION, _SUBSCRIBED)),
        *barrier("tel-sub"),
        step("get", 71, 0, _get(INSTANCE), capture={"subscription": "subscription_id"}),
        step("get again at once", 71, 0, _get(INSTANCE)),
        step("push of another subscription", 72, 0, _push(INSTANCE, 12345)),
        step("get after an unknown subscription", 71, 0, _get(INSTANCE)),
        step("push of an unknown compression", 72, 0, _push(INSTANCE, "{$subscription}", compression=7),
             retry_on=THROTTLED, why=WAIT_WHY),
        step("get after an unknown compression", 71, 0, _get(INSTANCE)),
        step("push of what does not decompress", 72, 0,
             _push(INSTANCE, "{$subscription}", compression=1, metrics="0a0b0c0d"), retry_on=THROTTLED, why=WAIT_WHY),
        step("push of too much once decompressed", 72, 0,
             _push(INSTANCE, "{$subscription}", compression=1, metrics=_BOMB), retry_on=THROTTLED, why=WAIT_WHY),
        step("push", 72, 0, _push(INSTANCE, "{$subscription}", metrics="0a00"), retry_on=THROTTLED, why=WAIT_WHY),
        step("push at once", 72, 0, _push(INSTANCE, "{$subscription}", metrics="0a00")),
        step("terminating push at once", 72, 0, _push(INSTANCE, "{$subscription}", terminating=True)),
        step("push after terminating", 72, 0, _push(INSTANCE, "{$subscription}", metrics="0a00")),
        step("push of the zero id", 72, 0, _push(ZERO, 0)),
        step("push of the reserved id one", 72, 0, _push("AAAAAAAAAAAAAAAAAAAAAQ", 0)),
        step("push of an id never got", 72, 0, _push("kemuTelemetryNeverAAAA", 0)),
        step("get of the zero id", 71, 0, _get(ZERO), **RANDOM_ID),
        step("unsubscribe", 44, 1, _alter(SUBSCRIPTION, [("metrics", 1, None), ("interval.ms", 1, None),
                                                         ("match", 1, None)])),
        *barrier("tel-unsub"),
        step("get when unsubscribed", 71, 0, _get(INSTANCE)),
    ]
    return [Script("telemetry.subscriptions", steps)]


def scripts() -> list[Script]:
    return [*config_scripts(), *subscription_scripts()]
