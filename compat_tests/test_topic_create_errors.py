"""CreateTopics refusals as each client reports them: TOPIC_ALREADY_EXISTS (36) for a duplicate,
INVALID_TOPIC_EXCEPTION (17) for an illegal name (Kafka allows [a-zA-Z0-9._-], 1 to 249
characters, and neither "." nor "..")."""

from __future__ import annotations

import asyncio
import uuid

import kafka.errors
import pytest
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin import NewTopic as AioNewTopic
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient
from confluent_kafka.admin import NewTopic as ConfluentNewTopic
from kafka.admin import KafkaAdminClient

from compat_tests.external_clients import Kafkajs, KafkajsError
from compat_tests.kemu_process import KemuServeProcess
from compat_tests.polling import wait_for

TOPIC_ALREADY_EXISTS = 36
INVALID_TOPIC_EXCEPTION = 17
MAX_TOPIC_NAME_LENGTH = 249

ILLEGAL_NAMES = {
    "slash": "bad/name",
    "space": "bad name",
    "dot": ".",
    "dot-dot": "..",
    "too-long": "x" * (MAX_TOPIC_NAME_LENGTH + 1),
    "non-ascii": "caf\u00e9",
}
illegal_names = pytest.mark.parametrize("illegal_name", list(ILLEGAL_NAMES.values()), ids=list(ILLEGAL_NAMES))


# --- confluent-kafka -----------------------------------------------------------------------------


def _confluent_create(admin: AdminClient, name: str, partitions: int = 1) -> None:
    futures = admin.create_topics([ConfluentNewTopic(name, num_partitions=partitions)], operation_timeout=10)
    futures[name].result(timeout=15)


def _confluent_error_code(admin: AdminClient, name: str) -> int:
    with pytest.raises(KafkaException) as raised:
        _confluent_create(admin, name)
    error: KafkaError = raised.value.args[0]
    return error.code()


def test_confluent_kafka_duplicate_create_is_topic_already_exists(
    kemu_server: KemuServeProcess, topic_name: str
) -> None:
    admin = AdminClient({"bootstrap.servers": kemu_server.bootstrap})
    _confluent_create(admin, topic_name, partitions=2)

    assert _confluent_error_code(admin, topic_name) == KafkaError.TOPIC_ALREADY_EXISTS == TOPIC_ALREADY_EXISTS

    # The refused create left the first topic as it was.
    topic = admin.list_topics(timeout=10).topics[topic_name]
    assert sorted(topic.partitions) == [0, 1]


@illegal_names
def test_confluent_kafka_illegal_name_is_invalid_topic(kemu_server: KemuServeProcess, illegal_name: str) -> None:
    admin = AdminClient({"bootstrap.servers": kemu_server.bootstrap})

    assert _confluent_error_code(admin, illegal_name) == KafkaError.TOPIC_EXCEPTION == INVALID_TOPIC_EXCEPTION
    assert illegal_name not in admin.list_topics(timeout=10).topics


def test_confluent_kafka_longest_legal_name_is_created(kemu_server: KemuServeProcess) -> None:
    admin = AdminClient({"bootstrap.servers": kemu_server.bootstrap})
    name = f"compat-longest-{uuid.uuid4().hex}".ljust(MAX_TOPIC_NAME_LENGTH, "x")
    assert len(name) == MAX_TOPIC_NAME_LENGTH

    _confluent_create(admin, name)
    wait_for(lambda: name in admin.list_topics(timeout=10).topics, what="the 249-character topic in Metadata")


# --- kafka-python --------------------------------------------------------------------------------


@pytest.fixture
def kafka_python_admin(kemu_server: KemuServeProcess):  # type: ignore[no-untyped-def]
    admin = KafkaAdminClient(bootstrap_servers=kemu_server.bootstrap, client_id="kemu-compat-kafka-python")
    yield admin
    admin.close()


def test_kafka_python_duplicate_create_is_topic_already_exists(
    kafka_python_admin: KafkaAdminClient, topic_name: str
) -> None:
    spec = {topic_name: {"num_partitions": 2, "replication_factor": 1}}
    kafka_python_admin.create_topics(spec)

    with pytest.raises(kafka.errors.TopicAlreadyExistsError):
        kafka_python_admin.create_topics(spec)

    # Without raising, the per-topic result carries the code.
    result = kafka_python_admin.create_topics(spec, raise_errors=False)
    assert [(t["name"], t["error_code"]) for t in result["topics"]] == [(topic_name, TOPIC_ALREADY_EXISTS)]


@illegal_names
def test_kafka_python_illegal_name_is_invalid_topic(kafka_python_admin: KafkaAdminClient, illegal_name: str) -> None:
    spec = {illegal_name: {"num_partitions": 1, "replication_factor": 1}}

    with pytest.raises(kafka.errors.InvalidTopicError):
        kafka_python_admin.create_topics(spec)

    assert illegal_name not in kafka_python_admin.list_topics()


# --- aiokafka ------------------------------------------------------------------------------------


async def _aiokafka_create_codes(bootstrap: str, names: list[str]) -> list[tuple[str, int]]:
    """Create each name in turn (one request each); the (topic, error code) of every answer."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, client_id="kemu-compat-aiokafka")
    await admin.start()
    try:
        codes = []
        for name in names:
            response = await admin.create_topics([AioNewTopic(name, num_partitions=1, replication_factor=1)])
            codes += [(t[0], t[1]) for t in response.topic_errors]
        return codes
    finally:
        await admin.close()


def test_aiokafka_duplicate_create_and_illegal_name(kemu_server: KemuServeProcess, topic_name: str) -> None:
    illegal = ILLEGAL_NAMES["slash"]
    codes = asyncio.run(_aiokafka_create_codes(kemu_server.bootstrap, [topic_name, topic_name, illegal]))
    assert codes == [(topic_name, 0), (topic_name, TOPIC_ALREADY_EXISTS), (illegal, INVALID_TOPIC_EXCEPTION)]


# --- kafkajs -------------------------------------------------------------------------------------


def test_kafkajs_duplicate_create_and_illegal_name(
    kemu_server: KemuServeProcess, kafkajs: Kafkajs, topic_name: str
) -> None:
    bootstrap = kemu_server.bootstrap
    assert kafkajs.admin(bootstrap, "create", topic_name, "1") == {"created": True}
    # kafkajs turns an all-TOPIC_ALREADY_EXISTS answer into created=false rather than an error.
    assert kafkajs.admin(bootstrap, "create", topic_name, "1") == {"created": False}

    with pytest.raises(KafkajsError) as raised:
        kafkajs.admin(bootstrap, "create", ILLEGAL_NAMES["slash"], "1")
    assert "INVALID_TOPIC_EXCEPTION" in raised.value.types, raised.value.error
