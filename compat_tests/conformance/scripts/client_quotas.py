"""DescribeClientQuotas (48) and AlterClientQuotas (49) at every version, with every refusal Kafka's
ClientQuotaControlManager and ClientQuotasImage give. Names hold the run, and the default entities' quotas
set here are removed again (a quota stays in Kafka's metadata across runs), with values too large to throttle
the other scripts meanwhile."""

from __future__ import annotations

from typing import Any

from compat_tests.conformance.scripts import barrier, step, versions
from compat_tests.conformance.steps import Script, Step

USER = "conf-cq-user-{run}"
CLIENT = "conf-cq-client-{run}"
OTHER = "conf-cq-other-{run}"
EXACT, DEFAULT, ANY = 0, 1, 2
# Kafka answers one entry per entity in its HashMap's order, which follows the names' hashes, so the run's.
BY_ENTITY = {"entries": "entity"}


def _entity(*parts: tuple[str, str | None]) -> list[dict[str, Any]]:
    return [{"entity_type": kind, "entity_name": name} for kind, name in parts]


def _op(key: str, value: float, remove: bool = False) -> dict[str, Any]:
    return {"key": key, "value": value, "remove": remove}


def alter(name: str, entries: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]], version: int = 1,
          validate_only: bool = False) -> Step:
    return step(name, 49, version, {"entries": [{"entity": entity, "ops": ops} for entity, ops in entries],
                                    "validate_only": validate_only}, key_by=BY_ENTITY)


def describe(name: str, components: list[tuple[str, int, str | None]], strict: bool = False,
             version: int = 1, **options: Any) -> Step:
    return step(name, 48, version, {"components": [{"entity_type": kind, "match_type": match_type, "match": match}
                                                   for kind, match_type, match in components], "strict": strict},
                key_by=BY_ENTITY, **options)


def _alter_steps() -> list[Step]:
    user, client = ("user", USER), ("client-id", CLIENT)
    big = 1e12
    steps = [alter(f"set v{version}", [(_entity(user), [_op("producer_byte_rate", 1048576 + version)])], version)
             for version in versions(49)]
    steps += [
        alter("user and client", [(_entity(user, client), [_op("consumer_byte_rate", 2048),
                                                           _op("request_percentage", 12.5)])]),
        alter("client", [(_entity(client), [_op("controller_mutation_rate", 3.5)])]),
        alter("ip", [(_entity(("ip", "192.0.2.7")), [_op("connection_creation_rate", 30)])]),
        alter("ipv6", [(_entity(("ip", "2001:db8::7")), [_op("connection_creation_rate", 31)])]),
        alter("validate only", [(_entity(("user", OTHER)), [_op("producer_byte_rate", 77)])], validate_only=True),
        alter("empty request", []),
        alter("empty entity", [(_entity(), [_op("producer_byte_rate", 1)])]),
        alter("unknown entity type", [(_entity(("group", OTHER)), [_op("producer_byte_rate", 1)])]),
        alter("empty user", [(_entity(("user", "")), [_op("producer_byte_rate", 1)])]),
        alter("empty client", [(_entity(("client-id", "")), [_op("producer_byte_rate", 1)])]),
        alter("empty name and unknown type", [(_entity(("user", ""), ("group", OTHER)),
                                               [_op("producer_byte_rate", 1)])]),
        alter("unknown type and empty name", [(_entity(("group", OTHER), ("client-id", "")),
                                               [_op("producer_byte_rate", 1)])]),
        alter("default ip", [(_entity(("ip", None)), [_op("connection_creation_rate", 1e9)])]),
        alter("ip with user", [(_entity(("ip", "192.0.2.8"), ("user", OTHER)), [_op("connection_creation_rate", 1)])]),
        alter("invalid ip", [(_entity(("ip", "not an ip!")), [_op("connection_creation_rate", 1)])]),
        alter("ip key on user", [(_entity(("user", OTHER)), [_op("connection_creation_rate", 1)])]),
        alter("user key on ip", [(_entity(("ip", "192.0.2.9")), [_op("producer_byte_rate", 1)])]),
        alter("unknown key", [(_entity(("user", OTHER)), [_op("fetch_byte_rate", 1)])]),
        alter("zero", [(_entity(("user", OTHER)), [_op("producer_byte_rate", 0)])]),
        alter("negative", [(_entity(("user", OTHER)), [_op("request_percentage", -1)])]),
        alter("fractional long", [(_entity(("user", OTHER)), [_op("producer_byte_rate", 10.5)])]),
        alter("fractional int", [(_entity(("ip", "192.0.2.10")), [_op("connection_creation_rate", 2.5)])]),
        alter("too large int", [(_entity(("ip", "192.0.2.11")), [_op("connection_creation_rate", 3e9)])]),
        alter("too large long", [(_entity(("user", OTHER)), [_op("consumer_byte_rate", 1e19)])]),
        alter("fractional double", [(_entity(("user", OTHER)), [_op("request_percentage", 0.25)])]),
        alter("duplicate key", [(_entity(("user", OTHER), ("client-id", OTHER)),
                                 [_op("producer_byte_rate", 5), _op("producer_byte_rate", 6)])]),
        alter("duplicate entity", [(_entity(client), [_op("producer_byte_rate", 7)]),
                                   (_entity(client), [_op("producer_byte_rate", 8)])]),
        alter("type twice", [(_entity(("user", OTHER), ("user", USER)), [_op("request_percentage", 9)])]),
        alter("remove missing", [(_entity(("user", OTHER)), [_op("producer_byte_rate", 0, remove=True),
                                                            _op("no_such_key", 0, remove=True)])]),
        alter("several", [(_entity(("user", OTHER)), [_op("producer_byte_rate", 11)]),
                          (_entity(("ip", "bad ip")), [_op("connection_creation_rate", 1)]),
                          (_entity(("client-id", OTHER)), [_op("consumer_byte_rate", 12)]),
                          (_entity(("user", OTHER), ("client-id", OTHER)), [_op("consumer_byte_rate", 13)])]),
        alter("defaults", [(_entity(("user", None)), [_op("controller_mutation_rate", big)]),
                           (_entity(("user", None), ("client-id", None)), [_op("request_percentage", big)]),
                           (_entity(("user", USER), ("client-id", None)), [_op("producer_byte_rate", big)]),
                           (_entity(("client-id", None)), [_op("controller_mutation_rate", big)])]),
    ]
    return steps


def _describe_steps() -> list[Step]:
    steps = [describe(f"user v{version}", [("user", EXACT, USER)], version=version) for version in versions(48)]
    steps += [
        describe("user strict", [("user", EXACT, USER)], strict=True),
        describe("user and client", [("user", EXACT, USER), ("client-id", EXACT, CLIENT)]),
        describe("user and any client", [("user", EXACT, USER), ("client-id", ANY, None)], strict=True),
        describe("user and default client", [("user", EXACT, USER), ("client-id", DEFAULT, None)]),
        describe("client", [("client-id", EXACT, CLIENT)], strict=True),
        describe("other user", [("user", EXACT, OTHER)]),
        describe("other client", [("client-id", EXACT, OTHER)]),
        describe("other user and client", [("user", EXACT, OTHER), ("client-id", EXACT, OTHER)]),
        describe("ip", [("ip", EXACT, "192.0.2.7")]),
        describe("ipv6", [("ip", EXACT, "2001:db8::7")]),
        describe("default ip", [("ip", DEFAULT, None)]),
        describe("default user", [("user", DEFAULT, None)], strict=True),
        describe("default user and client", [("user", DEFAULT, None), ("client-id", DEFAULT, None)]),
        describe("default client", [("client-id", DEFAULT, None)], strict=True),
        describe("empty type", [("", EXACT, USER)]),
        describe("type twice", [("user", EXACT, USER), ("user", ANY, None)]),
        describe("unknown type", [("group", EXACT, USER)]),
        describe("exact without match", [("user", EXACT, None)]),
        describe("default with match", [("user", DEFAULT, USER)]),
        describe("any with match", [("user", ANY, USER)]),
        describe("unknown match type", [("user", 3, None)]),
        describe("ip and user", [("ip", ANY, None), ("user", EXACT, USER)]),
        describe("ip and client v0", [("client-id", ANY, None), ("ip", DEFAULT, None)], version=0),
    ]
    return steps


def _cleanup_steps() -> list[Step]:
    def removal(*parts: tuple[str, str | None], keys: tuple[str, ...]) -> tuple[list[dict[str, Any]],
                                                                               list[dict[str, Any]]]:
        return _entity(*parts), [_op(key, 0, remove=True) for key in keys]

    return [
        alter("remove defaults", [
            removal(("user", None), keys=("controller_mutation_rate",)),
            removal(("user", None), ("client-id", None), keys=("request_percentage",)),
            removal(("client-id", None), keys=("controller_mutation_rate",)),
        ]),
        alter("remove some", [removal(("user", USER), keys=("producer_byte_rate",)),
                              removal(("user", USER), ("client-id", CLIENT), keys=("consumer_byte_rate",))]),
        *barrier("cq-removed"),
        describe("removed user", [("user", EXACT, USER)]),
        describe("removed default user", [("user", DEFAULT, None)], strict=True),
        describe("removed default client", [("client-id", DEFAULT, None)], strict=True),
        # Nothing of this script stays: a later script's unfiltered DescribeClientQuotas lists every entity.
        alter("remove the rest", [
            removal(("user", USER), keys=("request_percentage",)),
            removal(("user", USER), ("client-id", CLIENT), keys=("request_percentage",)),
            removal(("user", USER), ("client-id", None), keys=("producer_byte_rate",)),
            removal(("client-id", CLIENT), keys=("controller_mutation_rate", "producer_byte_rate")),
            removal(("ip", "192.0.2.7"), keys=("connection_creation_rate",)),
            removal(("ip", "2001:db8::7"), keys=("connection_creation_rate",)),
            removal(("ip", None), keys=("connection_creation_rate",)),
            removal(("user", OTHER), keys=("request_percentage", "producer_byte_rate")),
            removal(("client-id", OTHER), keys=("consumer_byte_rate",)),
            removal(("user", OTHER), ("client-id", OTHER), keys=("consumer_byte_rate",)),
        ]),
        *barrier("cq-all-removed"),
        describe("nothing left of the run", [("user", ANY, None)], only_run=("entries",)),
    ]


def _denied_steps() -> list[Step]:
    """The `authorizer` group's principal holds no ACL: DESCRIBE_CONFIGS and ALTER_CONFIGS on the cluster are
    denied, the alteration's entries each with the error, as sent."""
    user = ("user", USER)
    steps = []
    for version in versions(48):
        steps.append(describe(f"describe v{version}", [("user", EXACT, USER)], version=version))
        steps.append(alter(f"alter v{version}", [(_entity(user), [_op("producer_byte_rate", 10)]),
                                                 (_entity(("ip", "bad"), user), [_op("no_key", 1)])], version))
    steps += [alter("alter validate only", [(_entity(("client-id", None)), [_op("consumer_byte_rate", 1)])],
                    validate_only=True),
              alter("alter nothing", [])]
    return steps


def scripts() -> list[Script]:
    # Kafka's broker describes what its metadata image holds, a moment behind what the controller committed.
    return [Script("client_quotas.versions", [*_alter_steps(), *barrier("cq-set"), *_describe_steps(),
                                              *_cleanup_steps()]),
            Script("client_quotas.denied", _denied_steps(), group="authorizer")]
