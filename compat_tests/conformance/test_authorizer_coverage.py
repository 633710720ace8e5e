"""Every API key kemu serves is shown denied in the corpus recorded against a Kafka with an authorizer: the
`authorizer` group's principal has no ACL, so each key's step there must carry one of Kafka's authorization
errors, unless the key is in NO_DENIAL with the reason Kafka shows none (it authorizes nothing, it only filters
what it lists, or it refuses the request before authorizing); such a key must still be answered there, and
where the denial is shown by another group (the delegation tokens, denied on SASL in the `tokens` group) that
group's corpus must show it.

The served keys come from kemu's own handler registry, so a key kemu starts serving fails here until the
authorizer script denies it (or NO_DENIAL says why it need not)."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass

from compat_tests.conformance import corpus
from compat_tests.conformance.steps import CLOSED, Script, error_codes
from kemu.handlers import all_handlers
from kemu.wire.errors import ErrorCode

# Kafka's authorization errors, read by name from kemu's table of Kafka's codes: TOPIC_, GROUP_, CLUSTER_,
# TRANSACTIONAL_ID_ and DELEGATION_TOKEN_AUTHORIZATION_FAILED; and DELEGATION_TOKEN_OWNER_MISMATCH, which is
# how Kafka refuses a renewal or expiry by a principal that is neither the token's owner nor a renewer (its
# authorization of those two calls: no ACL is asked).
DENIAL_CODES = frozenset(code.value for code in ErrorCode if code.name.endswith("_AUTHORIZATION_FAILED")) | {
    ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH.value}
AUTHORIZER_GROUP = "authorizer"


@dataclass(frozen=True)
class Exemption:
    reason: str
    denied_in: str = ""  # a corpus group whose steps must show the key denied instead


NO_DENIAL: dict[int, Exemption] = {
    16: Exemption("ListGroups lists only the groups the principal may DESCRIBE (or all with DESCRIBE on the "
                  "cluster): a denied principal gets an empty list, no error"),
    17: Exemption("SaslHandshake authorizes nothing: KafkaApis answers it (ILLEGAL_SASL_STATE once the "
                  "connection is authenticated, as PLAINTEXT is)"),
    18: Exemption("ApiVersions authorizes nothing: every client must learn the versions first"),
    36: Exemption("SaslAuthenticate authorizes nothing: KafkaApis answers it (ILLEGAL_SASL_STATE once the "
                  "connection is authenticated, as PLAINTEXT is)"),
    38: Exemption("on PLAINTEXT Kafka refuses a token request (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED) before it "
                  "authorizes: CREATE_TOKENS on another owner is denied on the tokens group's SASL listener",
                  denied_in="tokens"),
    39: Exemption("on PLAINTEXT Kafka refuses a token request before it authorizes: a renewal by a principal "
                  "neither owner nor renewer is denied on the tokens group's SASL listener", denied_in="tokens"),
    40: Exemption("on PLAINTEXT Kafka refuses a token request before it authorizes: an expiry by a principal "
                  "neither owner nor renewer is denied on the tokens group's SASL listener", denied_in="tokens"),
    41: Exemption("on PLAINTEXT Kafka refuses a token request before it authorizes; on SASL DescribeDelegationToken "
                  "only leaves out the tokens the principal may not DESCRIBE, with no error"),
    60: Exemption("DescribeCluster answers every client: without DESCRIBE on the cluster only its "
                  "cluster_authorized_operations is 0, with no error"),
    66: Exemption("ListTransactions lists only the transactional ids the principal may DESCRIBE: a denied "
                  "principal gets an empty list, no error"),
    71: Exemption("GetTelemetrySubscriptions authorizes nothing (KIP-714: any client may push its metrics)"),
    72: Exemption("PushTelemetry authorizes nothing (KIP-714: any client may push its metrics)"),
}


def denied_keys(scripts: Iterable[Script]) -> set[int]:
    return {step.api_key for script in scripts for step in script.steps
            if step.response != CLOSED and DENIAL_CODES & set(error_codes(step.response))}


def answered_keys(scripts: Iterable[Script]) -> set[int]:
    return {step.api_key for script in scripts for step in script.steps if isinstance(step.response, dict)}


def coverage_problems(served: Iterable[int], scripts: list[Script],
                      exemptions: dict[int, Exemption] = NO_DENIAL) -> dict[int, str]:
    """The served keys the corpus does not show as Kafka authorizes them, each with what is missing; and the
    exemptions that no longer hold (a key not served, or one the authorizer group does show denied)."""
    served = set(served)
    authorizer = [script for script in scripts if script.group == AUTHORIZER_GROUP]
    denied, answered = denied_keys(authorizer), answered_keys(authorizer)
    problems: dict[int, str] = {}
    for key in sorted(served):
        exemption = exemptions.get(key)
        if exemption is None:
            if key not in denied:
                problems[key] = "no denied exchange in the authorizer corpus"
            continue
        if key in denied:
            problems[key] = "exempt, yet denied in the authorizer corpus: drop its exemption"
        elif key not in answered:
            problems[key] = "exempt, but not answered in the authorizer corpus"
        elif exemption.denied_in and key not in denied_keys(s for s in scripts if s.group == exemption.denied_in):
            problems[key] = f"exempt, but no denied exchange in the {exemption.denied_in} corpus"
    for key in sorted(exemptions.keys() - served):
        problems[key] = "exempt, but kemu does not serve it"
    return problems


def test_every_served_key_is_denied_in_the_authorizer_corpus() -> None:
    problems = coverage_problems(all_handlers(), corpus.load())
    assert not problems, "\n".join(f"  key {key}: {problem}" for key, problem in problems.items())


def _without(scripts: list[Script], key: int, group: str = AUTHORIZER_GROUP) -> list[Script]:
    """A copy of the corpus with the steps of one key taken out of one group's scripts."""
    planted = copy.deepcopy(scripts)
    for script in planted:
        if script.group == group:
            script.steps = [step for step in script.steps if step.api_key != key]
    return planted


def test_a_served_key_without_a_denied_step_is_reported() -> None:
    scripts = corpus.load()
    served = set(all_handlers())
    assert 48 in served and 48 not in NO_DENIAL
    assert coverage_problems(served, _without(scripts, 48)) == {48: "no denied exchange in the authorizer corpus"}


def test_a_new_served_key_is_reported() -> None:
    scripts = corpus.load()
    unserved = min(set(range(200)) - set(all_handlers()))
    assert coverage_problems({*all_handlers(), unserved}, scripts) == {
        unserved: "no denied exchange in the authorizer corpus"}


def test_an_exempt_key_must_still_be_answered() -> None:
    assert coverage_problems(all_handlers(), _without(corpus.load(), 18)) == {
        18: "exempt, but not answered in the authorizer corpus"}


def test_an_exemption_naming_another_group_needs_the_denial_there() -> None:
    assert coverage_problems(all_handlers(), _without(corpus.load(), 39, group="tokens")) == {
        39: "exempt, but no denied exchange in the tokens corpus"}


def test_stale_exemptions_are_reported() -> None:
    scripts = corpus.load()
    served = set(all_handlers())
    denied_key = 48
    unserved = min(set(range(200)) - served)
    exemptions = {**NO_DENIAL, denied_key: Exemption("planted"), unserved: Exemption("planted")}
    assert coverage_problems(served, scripts, exemptions) == {
        denied_key: "exempt, yet denied in the authorizer corpus: drop its exemption",
        unserved: "exempt, but kemu does not serve it"}
