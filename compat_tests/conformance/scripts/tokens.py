"""Delegation tokens (CreateDelegationToken 38, RenewDelegationToken 39, ExpireDelegationToken 40,
DescribeDelegationToken 41).

On the shipped settings' PLAINTEXT listener every version of each is refused (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED:
no token over PLAINTEXT). The `tokens` scripts run over SASL_PLAINTEXT (PLAIN, as alice, bob or carol) on a
Kafka with delegation.token.secret.key (conformance.brokers.TOKENS_SETTINGS): a token made for an owner of this
run with bob as renewer, described at every version, renewed by its renewer and not by others, expired later
and at once, then gone; tokens for the requester itself at every version, and the refused creations.
"""

from __future__ import annotations

from typing import Any

from compat_tests.conformance.scripts import barrier, step, versions
from compat_tests.conformance.steps import Script, Step

TOKEN = {"varying": {"token_id": "token_id", "hmac": "hmac"},
         "why": "a token's id is a random UUID, its HMAC the secret's over that id"}
# A renewal's, an expiry's or a new token's times are numbered within their step: two such steps run in one
# millisecond or in two, on Kafka as on kemu, and numbering them across steps would compare that.
STEP_TIMES = {"varying": {**TOKEN["varying"], "issue_timestamp_ms": "step:timestamp",
                          "expiry_timestamp_ms": "step:timestamp", "max_timestamp_ms": "step:timestamp"},
              "why": f"{TOKEN['why']}; the step's times are those of the millisecond it ran in"}
OWNER = {"principal_type": "User", "principal_name": "conf-owner-{run}"}
BOB = {"principal_type": "User", "principal_name": "bob"}
MISSING_HMAC = "00" * 64
HOUR = 3_600_000
NOT_FOUND = 62  # DELEGATION_TOKEN_NOT_FOUND
DELEGATION_TOKEN, USER = 6, 7  # resource types
DESCRIBE, CREATE_TOKENS, DESCRIBE_TOKENS = 8, 13, 14  # operations
LITERAL, ALLOW = 3, 3
PUBLISHED = ("a token's records reach the token caches (the controller's, the broker's) a moment after "
             "CreateDelegationToken or ExpireDelegationToken returns")


def create(version: int, renewers: list[dict[str, str]] | None = None, owner: dict[str, Any] | None = None,
           max_lifetime_ms: int = -1) -> dict[str, Any]:
    body: dict[str, Any] = {"renewers": renewers or [], "max_lifetime_ms": max_lifetime_ms}
    if version >= 3:
        body |= {"owner_principal_type": (owner or {}).get("principal_type"),
                 "owner_principal_name": (owner or {}).get("principal_name")}
    return body


def as_user(user: str, name: str, api_key: int, version: int, request: dict[str, Any], **options: Any) -> Step:
    made = step(name, api_key, version, request, **options)
    made.user = user
    return made


def barrier_as(user: str, name: str) -> list[Step]:
    """scripts.barrier on this user's SASL connection."""
    steps = barrier(name)
    for made in steps:
        made.user = user
    return steps


def plaintext() -> list[Script]:
    steps = [step(f"create v{v}", 38, v, create(v)) for v in versions(38)]
    steps += [step(f"renew v{v}", 39, v, {"hmac": MISSING_HMAC, "renew_period_ms": HOUR}) for v in versions(39)]
    steps += [step(f"expire v{v}", 40, v, {"hmac": MISSING_HMAC, "expiry_time_period_ms": -1}) for v in versions(40)]
    steps += [step(f"describe v{v}", 41, v, {"owners": None}) for v in versions(41)]
    return [Script("delegation_tokens.plaintext", steps)]


def lifecycle() -> list[Script]:
    hmac = {"hmac": "{$hmac}"}
    steps = [
        as_user("alice", "create for another owner", 38, 3, create(3, [BOB], OWNER), capture={"hmac": "hmac"},
                **TOKEN),
        as_user("alice", "describe v1", 41, 1, {"owners": [OWNER]}, retry_unless="tokens/0",
                varying=TOKEN["varying"], why=PUBLISHED),
        *(as_user("alice", f"describe v{v}", 41, v, {"owners": [OWNER]}, **TOKEN) for v in versions(41) if v > 1),
        as_user("carol", "describe by anyone without an authorizer", 41, 3, {"owners": None}, only_run=("tokens",),
                **TOKEN),
        as_user("alice", "describe no owners", 41, 3, {"owners": []}),
        as_user("alice", "renew by its requester", 39, 2, hmac | {"renew_period_ms": HOUR}, retry_on=(NOT_FOUND,),
                varying=STEP_TIMES["varying"], why=f"{PUBLISHED}; {STEP_TIMES['why']}"),
        *(as_user("bob", f"renew by its renewer v{v}", 39, v, hmac | {"renew_period_ms": HOUR}, **STEP_TIMES)
          for v in versions(39)),
        as_user("bob", "renew an unknown hmac", 39, 2, {"hmac": MISSING_HMAC, "renew_period_ms": HOUR}),
        as_user("carol", "expire by another", 40, 2, hmac | {"expiry_time_period_ms": -1}),
        *(as_user("bob", f"expire in a minute v{v}", 40, v, hmac | {"expiry_time_period_ms": 60_000}, **STEP_TIMES)
          for v in versions(40)),
        as_user("bob", "expire at once", 40, 2, hmac | {"expiry_time_period_ms": -1}, **STEP_TIMES),
        # Until the removal reaches the controller's token cache a renewal would find the token and write it back.
        *barrier_as("bob", "token-removed"),
        as_user("bob", "renew the expired", 39, 2, hmac | {"renew_period_ms": HOUR}),
        as_user("bob", "expire the expired", 40, 2, hmac | {"expiry_time_period_ms": -1}),
        as_user("alice", "describe the expired", 41, 3, {"owners": [OWNER]}),
    ]
    own = [as_user("alice", f"create v{v}", 38, v, create(v), **STEP_TIMES) for v in versions(38)]
    own += [
        as_user("alice", "create with a short lifetime", 38, 3, create(3, max_lifetime_ms=HOUR), **STEP_TIMES),
        as_user("alice", "create for oneself by name", 38, 3, create(3, owner={"principal_type": "User",
                                                                              "principal_name": "alice"}),
                **STEP_TIMES),
        as_user("alice", "create with a group renewer", 38, 3,
                create(3, [{"principal_type": "Group", "principal_name": "g"}])),
        as_user("alice", "create with a null owner type", 38, 3,
                create(3, owner={"principal_type": None, "principal_name": "conf-owner-{run}"})),
    ]
    return [Script("delegation_tokens.lifecycle", steps, "tokens"), Script("delegation_tokens.own", own, "tokens")]


def acl(resource_type: int, name: str, operation: int, principal: str) -> dict[str, Any]:
    return {"resource_type": resource_type, "resource_name": name, "resource_pattern_type": LITERAL,
            "principal": principal, "host": "*", "operation": operation, "permission_type": ALLOW}


def acls() -> list[Script]:
    """With an ACL on a USER or a DELEGATION_TOKEN, only the principals it names pass where it is asked."""
    guarded = {"principal_type": "User", "principal_name": "conf-guarded-{run}"}
    steps = [
        as_user("alice", "bob may create for the guarded owner", 30, 3, {"creations": [
            acl(USER, "User:conf-guarded-{run}", CREATE_TOKENS, "User:bob")]}),
        *barrier_as("alice", "token-acl"),
        as_user("alice", "alice may not", 38, 3, create(3, owner=guarded)),
        as_user("bob", "bob creates", 38, 3, create(3, owner=guarded), capture={"token_id": "token_id"}, **TOKEN),
        # No ACL names the token: anyone may DESCRIBE it, though DESCRIBE_TOKENS on its owner is bob's alone.
        as_user("carol", "carol sees it", 41, 3, {"owners": [guarded]}, retry_unless="tokens/0",
                varying=TOKEN["varying"], why=PUBLISHED),
        as_user("alice", "bob alone may describe the token", 30, 3, {"creations": [
            acl(DELEGATION_TOKEN, "{$token_id}", DESCRIBE, "User:bob")]}),
        *barrier_as("alice", "token-describe-acl"),
        as_user("carol", "carol no longer", 41, 3, {"owners": [guarded]}),
        as_user("bob", "bob still", 41, 3, {"owners": [guarded]}, **TOKEN),
        as_user("alice", "carol may describe the owner's tokens", 30, 3, {"creations": [
            acl(USER, "User:conf-guarded-{run}", DESCRIBE_TOKENS, "User:carol")]}),
        *barrier_as("alice", "token-owner-acl"),
        as_user("carol", "carol again", 41, 3, {"owners": [guarded]}, **TOKEN),
    ]
    return [Script("delegation_tokens.acls", steps, "tokens")]


def scripts() -> list[Script]:
    return [*plaintext(), *lifecycle(), *acls()]
