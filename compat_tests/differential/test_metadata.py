"""Metadata and DescribeTopicPartitions, Kafka against kemu: no topics, all topics, a topic with several
partitions, unknown topics with and without auto-creation, lookups by topic id, internal topics, authorized
operations; DescribeTopicPartitions by name, unknown, paged by a cursor and a partition limit."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from compat_tests.differential.admin_requests import (
    DESCRIBE_TOPIC_PARTITIONS,
    RESOURCE_TOPIC,
    by_partition,
    describe_configs,
    ensure_topic,
    keyed,
    metadata,
    topic_state,
    wait_for,
)
from compat_tests.differential.compare import check
from compat_tests.differential.targets import Pair, Target

VERSIONS = (0, 1, 4, 9, 12)
THREE = "md-three"  # a topic of three partitions
ONE = "md-one"
FIND_COORDINATOR = 10
# Every topic of this module starts so; an all-topics answer is compared on these and the internal topics,
# as other modules of the session create topics of their own on both brokers.
PREFIX = "md-"


@pytest.fixture(scope="module")
def topics(pair: Pair) -> dict[str, dict[str, uuid.UUID]]:
    """The module's topics on both brokers, and __consumer_offsets (made by asking for a coordinator): each
    broker's topic ids by name."""
    ids: dict[str, dict[str, uuid.UUID]] = {}
    for target in (pair.kafka, pair.kemu):
        ids[target.name] = {name: ensure_topic(target, name, count)["topic_id"]
                            for name, count in ((THREE, 3), (ONE, 1))}
        with_offsets_topic(target)
    return ids


def with_offsets_topic(target: Target) -> None:
    def coordinator() -> dict[str, Any]:
        return target.request(FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": ["md-group"]})

    wait_for(coordinator, lambda body: body["coordinators"][0]["error_code"] == 0, f"{target.name}: coordinator")
    wait_for(lambda: topic_state(target, "__consumer_offsets"), lambda state: state is not None,
             f"{target.name}: __consumer_offsets")


def shaped(body: dict[str, Any], keep: Callable[[str], bool] = lambda name: True) -> dict[str, Any]:
    """Topics keyed by name (an unknown id's entry, which has none, by its place), partitions by index."""
    # Sorted: Metadata's topic order means nothing, and the topic id placeholders are numbered as first seen.
    topics = sorted((by_partition(topic) for topic in body["topics"] if topic["name"] is None or keep(topic["name"])),
                    key=lambda topic: topic["name"] or "")
    body["topics"] = keyed(({**topic, "name": topic["name"] or "<no name>"} for topic in topics), "name")
    body["brokers"] = keyed(body.get("brokers", []), "node_id")
    return body


def observe(version: int, names: list[str] | None, **options: Any) -> Callable[[Target], dict[str, Any]]:
    def run(target: Target) -> dict[str, Any]:
        return shaped(metadata(target, version, names, **options))
    return run


@pytest.mark.parametrize("version", VERSIONS[1:])  # v0 has no way to ask for none: its empty list means all
def test_no_topics(pair: Pair, topics: Any, version: int) -> None:
    kafka, kemu = pair.both(observe(version, []))
    check(f"metadata.no_topics.v{version}", kafka, kemu)


@pytest.mark.parametrize("version", VERSIONS)
def test_all_topics(pair: Pair, topics: Any, version: int) -> None:
    def run(target: Target) -> dict[str, Any]:
        # v0 asks for all with an empty list (its list is not nullable), v1+ with null.
        # __share_group_state is Kafka's share-group state topic, made when a test earlier in the session asked
        # FindCoordinator for a share-group key: kemu has no share groups yet (issue 32), and whether Kafka has
        # made it depends on which tests ran first, so it is left out here rather than listed as known.
        return shaped(metadata(target, version, [] if version == 0 else None, authorized_operations=version >= 8),
                      lambda name: name.startswith((PREFIX, "__")) and name != "__share_group_state")
    kafka, kemu = pair.both(run)
    check(f"metadata.all_topics.v{version}", kafka, kemu)


@pytest.mark.parametrize("version", VERSIONS)
def test_named_topics(pair: Pair, topics: Any, version: int) -> None:
    """Existing topics, an internal one, an unknown one (no auto-creation where the version can say so), an
    illegal name, with the authorized operations where the version has them."""
    # Per version: v1-3 always allow auto-creation, and Kafka's creation lands a moment after its answer.
    names = [THREE, ONE, "__consumer_offsets", f"md-unknown-v{version}", "md bad name"]
    kafka, kemu = pair.both(observe(version, names, authorized_operations=version >= 8))
    check(f"metadata.named.v{version}", kafka, kemu)


@pytest.mark.parametrize("name", ["md-auto-created", "__transaction_state"])
def test_auto_creation(pair: Pair, topics: Any, name: str) -> None:
    """A missing topic is created with the broker's defaults when both the broker (auto.create.topics.enable,
    true by default) and the request allow it: the first answer, the topic once made, and its configs. An
    internal topic gets its own layout and configs (another module may have made __transaction_state already,
    on both brokers alike)."""
    def run(target: Target) -> dict[str, Any]:
        first = shaped(metadata(target, 12, [name], auto_create=True))
        made = wait_for(lambda: topic_state(target, name), lambda state: state is not None,
                        f"{target.name}: {name} created")
        assert made is not None
        configs = describe_configs(target, [(RESOURCE_TOPIC, name, None)], synonyms=True)
        result = configs["results"][0]
        result["configs"] = keyed(result["configs"], "name")
        return {"first": first, "made": by_partition(made), "configs": result}

    kafka, kemu = pair.both(run)
    check(f"metadata.auto_created.{name}", kafka, kemu)


@pytest.mark.parametrize("version", (9, 12))
def test_auto_creation_of_illegal_and_internal_names(pair: Pair, topics: Any, version: int) -> None:
    kafka, kemu = pair.both(observe(version, ["md bad/name", "__cluster_metadata"], auto_create=True))
    check(f"metadata.auto_create_refused.v{version}", kafka, kemu)


def test_by_topic_id(pair: Pair, topics: dict[str, dict[str, uuid.UUID]]) -> None:
    """v12 looks topics up by id: known ids, and an unknown one."""
    unknown = uuid.UUID("0b1e5a4c-7d2f-4c1e-9a3b-5f6e7d8c9b0a")

    def run(target: Target) -> dict[str, Any]:
        ids = [topics[target.name][THREE], topics[target.name][ONE], unknown]
        return shaped(metadata(target, 12, None, topic_ids=ids, authorized_operations=True))

    kafka, kemu = pair.both(run)
    check("metadata.by_topic_id", kafka, kemu)


@pytest.mark.parametrize("version", (9, 11))
def test_topic_id_before_v12(pair: Pair, topics: dict[str, dict[str, uuid.UUID]], version: int) -> None:
    """Before v12 a request may not name a topic by id: the whole request fails."""
    def run(target: Target) -> dict[str, Any]:
        body = target.request(3, version, {"topics": [{"name": THREE, "topic_id": topics[target.name][THREE]}],
                                           "allow_auto_topic_creation": False,
                                           "include_topic_authorized_operations": False})
        return shaped(body)
    kafka, kemu = pair.both(run)
    check(f"metadata.topic_id_before_v12.v{version}", kafka, kemu)


# --- DescribeTopicPartitions (key 75) ---------------------------------------------------------------------

def describe_partitions(names: list[str], limit: int = 2000,
                        cursor: tuple[str, int] | None = None) -> Callable[[Target], dict[str, Any]]:
    def run(target: Target) -> dict[str, Any]:
        body = target.request(DESCRIBE_TOPIC_PARTITIONS, 0, {
            "topics": [{"name": name} for name in names], "response_partition_limit": limit,
            "cursor": None if cursor is None else {"topic_name": cursor[0], "partition_index": cursor[1]}})
        # Kept as a list too: the order of the answer is part of the paging.
        body["order"] = [topic["name"] for topic in body["topics"]]
        body["topics"] = keyed((by_partition(topic) for topic in body["topics"]), "name")
        return body
    return run


@pytest.mark.parametrize(("case", "names", "limit", "cursor"), [
    ("one", [THREE], 2000, None),
    ("many", [ONE, THREE, "__consumer_offsets"], 2000, None),
    ("unknown", ["md-unknown", "md bad name", ONE], 2000, None),
    ("limit_in_a_topic", [ONE, THREE], 2, None),
    ("limit_at_a_topic_end", [ONE, THREE], 1, None),
    ("cursor", [ONE, THREE], 2000, (THREE, 1)),
    ("cursor_and_limit", [ONE, THREE], 1, (THREE, 1)),
    ("cursor_past_the_end", [THREE], 2000, (THREE, 5)),
    ("cursor_not_listed", [ONE], 2000, (THREE, 0)),
    ("limit_zero", [ONE, THREE], 0, None),
    ("limit_negative", [THREE], -5, None),
])
def test_describe_topic_partitions(pair: Pair, topics: Any, case: str, names: list[str], limit: int,
                                   cursor: tuple[str, int] | None) -> None:
    kafka, kemu = pair.both(describe_partitions(names, limit, cursor))
    check(f"describe_topic_partitions.{case}", kafka, kemu)


def test_describe_topic_partitions_pages_through_all(pair: Pair, topics: Any) -> None:
    """Every topic (an empty list), two partitions a page, following next_cursor to the end: the pages of the
    module's topics and the internal ones (other modules' topics are between them on both brokers)."""
    def run(target: Target) -> list[dict[str, Any]]:
        pages: list[dict[str, Any]] = []
        cursor: tuple[str, int] | None = (PREFIX, 0)
        while cursor is not None and cursor[0].startswith(PREFIX) and len(pages) < 20:
            page = describe_partitions([], 2, cursor)(target)
            following = page["next_cursor"]
            cursor = None if following is None else (following["topic_name"], following["partition_index"])
            page["topics"] = {name: topic for name, topic in page["topics"].items() if name.startswith(PREFIX)}
            page["order"] = [name for name in page["order"] if name.startswith(PREFIX)]
            if cursor is not None and not cursor[0].startswith(PREFIX):
                page["next_cursor"] = "<past the module's topics>"
            pages.append(page)
        return pages
    kafka, kemu = pair.both(run)
    check("describe_topic_partitions.paged", kafka, kemu)
