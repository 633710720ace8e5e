"""AlterClientQuotas past the controller's 10,000 records, Kafka against kemu.

ClientQuotaControlManager builds one request's records in a BoundedList of MAX_RECORDS_PER_USER_OP (10,000):
one ClientQuotaRecord per quota key an entity sets to a new value or removes. Each test's entities are users
of its own (`lim-<case>-<n>`), so a replay on a used broker finds them as this test left them.
"""

from __future__ import annotations

import uuid
from typing import Any

from compat_tests.differential.compare import check
from compat_tests.differential.targets import Pair, Target
from compat_tests.polling import wait_for
from tests.server.kafka_socket import KafkaSocket

ALTER, DESCRIBE = 49, 48
MAX_RECORDS = 10_000
SETTLE_TIMEOUT_S = 15.0
SLOW_S = 120.0  # a Kafka's first request over thousands of entities takes more than a connection's usual 10 s


def entry(user: str, key: str = "producer_byte_rate", value: float = 1024.0, remove: bool = False) -> dict[str, Any]:
    return {"entity": [{"entity_type": "user", "entity_name": user}],
            "ops": [{"key": key, "value": value, "remove": remove}]}


def slow(target: Target, api_key: int, body: dict[str, Any]) -> dict[str, Any]:
    with KafkaSocket(target.address, client_id="kemu-differential") as connection:
        connection.sock.settimeout(SLOW_S)
        return connection.request(api_key, 1, body)


def summary(answer: dict[str, Any]) -> dict[str, int]:
    """How many entries got each result (the entities are the test's own, compared through `users`)."""
    counts: dict[str, int] = {}
    for result in answer["entries"]:
        key = f"{result['error_code']}:{result['error_message']}"
        counts[key] = counts.get(key, 0) + 1
    return counts


def settle(target: Target) -> None:
    """Wait until the broker's quotas show every change made so far. Kafka's controller commits a change and
    answers; the broker's metadata image, which DescribeClientQuotas reads, takes it a moment later, in log
    order: so a marker user's quota set now is seen once every earlier change is (kemu shows changes at once)."""
    marker = f"lim-barrier-{uuid.uuid4().hex}"
    made = slow(target, ALTER, {"entries": [entry(marker)], "validate_only": False})
    assert made["entries"][0]["error_code"] == 0, made
    exact = {"components": [{"entity_type": "user", "match_type": 0, "match": marker}], "strict": True}
    wait_for(lambda: slow(target, DESCRIBE, exact)["entries"], what=f"{target.name} to show the quota of {marker}",
             timeout=SETTLE_TIMEOUT_S)


def users(target: Target, prefix: str) -> int:
    """How many users named `prefix...` have a quota, once every change made before is shown."""
    settle(target)
    found = slow(target, DESCRIBE, {"components": [{"entity_type": "user", "match_type": 2, "match": None}],
                                    "strict": False})
    return sum(1 for e in found["entries"] for part in e["entity"]
               if part["entity_type"] == "user" and (part["entity_name"] or "").startswith(prefix))


def test_alter_client_quotas_past_the_controller_limit(pair: Pair) -> None:
    run = uuid.uuid4().hex[:8]

    def scenario(target: Target) -> dict[str, Any]:
        prefix = f"lim-{run}-"
        names = [f"{prefix}{i}" for i in range(MAX_RECORDS + 1)]
        over = summary(slow(target, ALTER, {"entries": [entry(n) for n in names], "validate_only": False}))
        over_validated = summary(slow(target, ALTER, {"entries": [entry(n) for n in names], "validate_only": True}))
        after_over = users(target, prefix)
        # A refused entity takes no record: 10,000 good and one refused pass.
        at = summary(slow(target, ALTER, {"entries": [*(entry(n) for n in names[:MAX_RECORDS]),
                                                      entry(names[-1], value=-1.0)], "validate_only": False}))
        # A value set again is no change: the 10,000 set and one new are one record.
        again = summary(slow(target, ALTER, {"entries": [entry(n) for n in names], "validate_only": False}))
        made = users(target, prefix)
        # Removals count as changes: 10,001 at once are refused, as many as there are, in two requests, not.
        removals = [entry(n, remove=True) for n in names]
        remove_over = summary(slow(target, ALTER, {"entries": removals, "validate_only": False}))
        removed = [summary(slow(target, ALTER, {"entries": part, "validate_only": False}))
                   for part in (removals[:MAX_RECORDS], removals[MAX_RECORDS:])]
        return {"over": over, "over_validated": over_validated, "after_over": after_over, "at": at,
                "again": again, "made": made, "remove_over": remove_over, "removed": removed,
                "left": users(target, prefix)}

    kafka, kemu = pair.both(scenario)
    check("client_quotas.limit", kafka, kemu)
