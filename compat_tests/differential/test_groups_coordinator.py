"""FindCoordinator, Kafka against kemu: one key (v0-3), batched keys (v4+), transactional ids, share keys and a
key type no broker knows."""

from __future__ import annotations

import time
from typing import Any

import pytest

from compat_tests.differential.compare import check
from compat_tests.differential.groups_wire import FIND_COORDINATOR, ready_coordinator, unique, wait_for
from compat_tests.differential.targets import Pair, Target

COORDINATOR_NOT_AVAILABLE = 15
SHARE_SETTLE_S = 3.0


def batched(answer: dict[str, Any]) -> dict[str, Any]:
    """A v4+ answer as the version has it (the codec also fills in the one-key fields, with their defaults),
    keyed by the key asked for: the answer's order is not the point."""
    return {"throttle_time_ms": answer["throttle_time_ms"],
            "coordinators": {c["key"]: c for c in answer["coordinators"]}}


def ready_transaction_coordinator(target: Target, transactional_id: str) -> None:
    def found() -> bool | None:
        answer = target.request(FIND_COORDINATOR, 4, {"key_type": 1, "coordinator_keys": [transactional_id]})
        return True if answer["coordinators"][0]["error_code"] == 0 else None

    wait_for(f"{target.name}: coordinator of transactional id {transactional_id}", found)


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_find_group_coordinator_one_key(pair: Pair, version: int) -> None:
    group = unique("find-one")

    def observe(target: Target) -> dict[str, Any]:
        ready_coordinator(target, group)
        return target.request(FIND_COORDINATOR, version, {"key": group, "key_type": 0})

    check(f"groups.find_coordinator.one_key.v{version}", *pair.both(observe))


@pytest.mark.parametrize("version", [4, 5, 6])
def test_find_coordinators_batched(pair: Pair, version: int) -> None:
    groups = [unique("find-batch-a"), unique("find-batch-b"), ""]

    def observe(target: Target) -> dict[str, Any]:
        for group in groups[:2]:
            ready_coordinator(target, group)
        return batched(target.request(FIND_COORDINATOR, version, {"key_type": 0, "coordinator_keys": groups}))

    check(f"groups.find_coordinator.batched.v{version}", *pair.both(observe))


@pytest.mark.parametrize("version", [1, 3, 4])
def test_find_transaction_coordinator(pair: Pair, version: int) -> None:
    transactional_id = unique("find-txn")

    def observe(target: Target) -> dict[str, Any]:
        ready_transaction_coordinator(target, transactional_id)
        if version >= 4:
            return batched(target.request(FIND_COORDINATOR, version, {"key_type": 1,
                                                                      "coordinator_keys": [transactional_id]}))
        return target.request(FIND_COORDINATOR, version, {"key_type": 1, "key": transactional_id})

    check(f"groups.find_coordinator.transaction.v{version}", *pair.both(observe))


@pytest.mark.parametrize("version", [3, 4, 5, 6])
@pytest.mark.parametrize("key_type", [3, 9])
def test_find_coordinator_unknown_key_type(pair: Pair, version: int, key_type: int) -> None:
    key = unique("find-other")

    def observe(target: Target) -> dict[str, Any]:
        if version >= 4:
            return batched(target.request(FIND_COORDINATOR, version, {"key_type": key_type,
                                                                      "coordinator_keys": [key]}))
        return target.request(FIND_COORDINATOR, version, {"key_type": key_type, "key": key})

    check(f"groups.find_coordinator.key_type{key_type}.v{version}", *pair.both(observe))


@pytest.mark.parametrize("version", [3, 4, 6])
def test_find_share_coordinator(pair: Pair, version: int) -> None:
    """Key type 2, a share-group partition ("group:topic id:partition", KIP-932), and a malformed one."""
    keys = [f"{unique('find-share')}:AAAAAAAAAAAAAAAAAAAAAQ:0", "not-a-share-key"]

    def ask(target: Target) -> dict[str, Any]:
        if version >= 4:
            answer = target.request(FIND_COORDINATOR, version, {"key_type": 2, "coordinator_keys": keys})
            return batched(answer)
        return target.request(FIND_COORDINATOR, version, {"key_type": 2, "key": keys[0]})

    def observe(target: Target) -> dict[str, Any]:
        # Kafka answers COORDINATOR_NOT_AVAILABLE while the first lookup creates __share_group_state; a broker
        # that never finds one (kemu) is asked for a few seconds, then its last answer stands.
        deadline = time.monotonic() + SHARE_SETTLE_S
        while True:
            answer = ask(target)
            unavailable = COORDINATOR_NOT_AVAILABLE in (
                [c["error_code"] for c in answer["coordinators"].values()] if version >= 4 else [])
            if not unavailable or time.monotonic() > deadline:
                return answer
            time.sleep(0.1)

    check(f"groups.find_coordinator.share.v{version}", *pair.both(observe))
