"""The records Kafka's coordinators write to their internal topics, and their framing.

`__transaction_state` holds TransactionLog records; `__consumer_offsets` holds OffsetCommit, GroupMetadata,
the KIP-848 ConsumerGroup* records, the KIP-932 ShareGroup* records and the KIP-1071 StreamsGroup* records.
Each record's key and value are written the way Kafka writes them: an int16 version, then the struct at that
version. In `__consumer_offsets` the key's version is what tells the record types apart (0-1 OffsetCommit, 2
GroupMetadata, 3-8 ConsumerGroup*, 10-15 ShareGroup*, 17-23 StreamsGroup*), so it is also the record type; in
`__transaction_state` there is only TransactionLogKey v0. Keys are never flexible; values are flexible from
the version each schema says. A record whose value is null is a tombstone: it deletes the key and has no value
to decode.

Reading follows KIP-915, so a broker can read what a newer broker wrote: a key version this module does not
know raises `UnknownRecordType` (Kafka skips those records), and a value version above the highest known is
read with the highest known layout (new fields only ever come as tagged fields, which a reader skips).
Kafka itself writes the highest non-flexible value version (GroupMetadataValue v3; TransactionLogValue v0)
until it needs a tagged field, so that an older broker can still read the log; OffsetCommitValue it writes at
v4, with the committed topic's id as a tagged field (Kafka 4.3), or at v1 when it carries an expire
timestamp.
"""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass
from functools import cache
from typing import Any, NamedTuple

from construct import ConstructError

from kemu.wire import compiled
from kemu.wire.schema import ZERO_UUID, F, Field, Versions
from kemu.wire.structs import KStruct, struct_for

CONSUMER_OFFSETS = "__consumer_offsets"
TRANSACTION_STATE = "__transaction_state"
SHARE_GROUP_STATE = "__share_group_state"

_VERSION = struct.Struct(">h")
_UNBOUNDED = 1 << 62  # construct counts no elements outside a request: a budget no record can spend


class CoordinatorRecordError(ValueError):
    """Bytes that are not a well-formed record, or a version its schema does not have."""


class UnknownRecordType(CoordinatorRecordError):
    """A key version no schema here declares; Kafka skips such records when loading (KIP-915)."""

    def __init__(self, topic: str, version: int) -> None:
        super().__init__(f"unknown record key version {version} in {topic}")
        self.topic, self.version = topic, version


@dataclass(frozen=True, slots=True)
class RecordSchema:
    """One record type: its key and value, each with the versions it has."""

    name: str
    topic: str
    key_versions: Versions
    key: tuple[Field, ...]
    value_versions: Versions
    value_flexible: Versions
    value: tuple[Field, ...]


class DecodedKey(NamedTuple):
    record_type: str
    version: int
    fields: dict[str, Any]


class DecodedValue(NamedTuple):
    version: int
    fields: dict[str, Any]


def _record(name: str, topic: str, key_versions: str, key: list[Field], value_versions: str,
            value_flexible: str, value: list[Field]) -> RecordSchema:
    return RecordSchema(name, topic, Versions.parse(key_versions), tuple(key), Versions.parse(value_versions),
                        Versions.parse(value_flexible), tuple(value))


_TOPIC_PARTITIONS = [
    F("topic_id", "uuid"),
    F("partitions", "[]int32"),
]

_SCHEMAS = [
    _record(
        "TransactionLog", TRANSACTION_STATE, "0",
        key=[F("transactional_id", "string", "0")],
        value_versions="0-1", value_flexible="1+",
        value=[
            F("producer_id", "int64"),
            F("previous_producer_id", "int64", "1+", tag=0, default=-1),
            F("next_producer_id", "int64", "1+", tag=1, default=-1),
            F("producer_epoch", "int16"),
            F("transaction_timeout_ms", "int32"),
            # Kafka's TransactionState ids: 0 Empty, 1 Ongoing, 2 PrepareCommit, 3 PrepareAbort,
            # 4 CompleteCommit, 5 CompleteAbort, 6 Dead, 7 PrepareEpochFence.
            F("transaction_status", "int8"),
            F("transaction_partitions", "[]", nullable="0+", fields=[
                F("topic", "string"),
                F("partition_ids", "[]int32"),
            ]),
            F("transaction_last_update_timestamp_ms", "int64"),
            F("transaction_start_timestamp_ms", "int64"),
            F("client_transaction_version", "int16", "1+", tag=2, default=0),
        ],
    ),
    _record(
        "OffsetCommit", CONSUMER_OFFSETS, "0-1",
        key=[
            F("group", "string", "0-1"),
            F("topic", "string", "0-1"),
            F("partition", "int32", "0-1"),
        ],
        value_versions="0-4", value_flexible="4+",
        value=[
            F("offset", "int64"),
            F("leader_epoch", "int32", "3+", default=-1),
            F("metadata", "string"),
            F("commit_timestamp", "int64"),
            F("expire_timestamp", "int64", "1", default=-1),
            # The committed topic's id (Kafka 4.3's tagged field 0): a topic deleted and created again under
            # the same name does not inherit the offsets of the old one.
            F("topic_id", "uuid", "4+", tag=0, default=ZERO_UUID),
        ],
    ),
    _record(
        "GroupMetadata", CONSUMER_OFFSETS, "2",
        key=[F("group", "string", "2")],
        value_versions="0-4", value_flexible="4+",
        value=[
            F("protocol_type", "string"),
            F("generation", "int32"),
            F("protocol", "string", nullable="0+"),
            F("leader", "string", nullable="0+"),
            F("current_state_timestamp", "int64", "2+", default=-1),
            F("members", "[]", fields=[
                F("member_id", "string"),
                F("group_instance_id", "string", "3+", nullable="3+", default=None),
                F("client_id", "string"),
                F("client_host", "string"),
                F("rebalance_timeout", "int32", "1+", default=-1),
                F("session_timeout", "int32"),
                F("subscription", "bytes"),
                F("assignment", "bytes"),
            ]),
        ],
    ),
    _record(
        "ConsumerGroupMetadata", CONSUMER_OFFSETS, "3",
        key=[F("group_id", "string", "3")],
        value_versions="0", value_flexible="0+",
        value=[F("epoch", "int32")],
    ),
    _record(
        "ConsumerGroupPartitionMetadata", CONSUMER_OFFSETS, "4",
        key=[F("group_id", "string", "4")],
        value_versions="0", value_flexible="0+",
        value=[
            F("topics", "[]", fields=[
                F("topic_id", "uuid"),
                F("topic_name", "string"),
                F("num_partitions", "int32"),
                # Unused since Kafka 4.0, still on the wire.
                F("partition_metadata", "[]", fields=[
                    F("partition", "int32"),
                    F("racks", "[]string"),
                ]),
            ]),
        ],
    ),
    _record(
        "ConsumerGroupMemberMetadata", CONSUMER_OFFSETS, "5",
        key=[
            F("group_id", "string", "5"),
            F("member_id", "string", "5"),
        ],
        value_versions="0", value_flexible="0+",
        value=[
            F("instance_id", "string", nullable="0+"),
            F("rack_id", "string", nullable="0+"),
            F("client_id", "string"),
            F("client_host", "string"),
            F("subscribed_topic_names", "[]string"),
            F("subscribed_topic_regex", "string", nullable="0+"),
            F("rebalance_timeout_ms", "int32", default=-1),
            F("server_assignor", "string", nullable="0+"),
            # Set only for a member that joined with the classic protocol (KIP-848 upgrade path).
            F("classic_member_metadata", "{}", nullable="0+", tag=0, default=None, fields=[
                F("session_timeout_ms", "int32"),
                F("supported_protocols", "[]", fields=[
                    F("name", "string"),
                    F("metadata", "bytes"),
                ]),
            ]),
        ],
    ),
    _record(
        "ConsumerGroupTargetAssignmentMetadata", CONSUMER_OFFSETS, "6",
        key=[F("group_id", "string", "6")],
        value_versions="0", value_flexible="0+",
        value=[F("assignment_epoch", "int32")],
    ),
    _record(
        "ConsumerGroupTargetAssignmentMember", CONSUMER_OFFSETS, "7",
        key=[
            F("group_id", "string", "7"),
            F("member_id", "string", "7"),
        ],
        value_versions="0", value_flexible="0+",
        value=[F("topic_partitions", "[]", fields=_TOPIC_PARTITIONS)],
    ),
    _record(
        "ConsumerGroupCurrentMemberAssignment", CONSUMER_OFFSETS, "8",
        key=[
            F("group_id", "string", "8"),
            F("member_id", "string", "8"),
        ],
        value_versions="0", value_flexible="0+",
        value=[
            F("member_epoch", "int32"),
            F("previous_member_epoch", "int32"),
            # Kafka's MemberState ids.
            F("state", "int8"),
            F("assigned_partitions", "[]", fields=_TOPIC_PARTITIONS),
            F("partitions_pending_revocation", "[]", fields=_TOPIC_PARTITIONS),
        ],
    ),
    # KIP-932 share groups, as Kafka 4.3 writes them (its group-coordinator's record schemas: type 9, the
    # ShareGroupPartitionMetadata of the early-access releases, is gone; ShareGroupMetadataValue carries the
    # metadata hash as a plain field).
    _record(
        "ShareGroupMemberMetadata", CONSUMER_OFFSETS, "10",
        key=[F("group_id", "string", "10"), F("member_id", "string", "10")],
        value_versions="0", value_flexible="0+",
        value=[
            F("rack_id", "string", nullable="0+"),
            F("client_id", "string"),
            F("client_host", "string"),
            F("subscribed_topic_names", "[]string"),
        ],
    ),
    _record(
        "ShareGroupMetadata", CONSUMER_OFFSETS, "11",
        key=[F("group_id", "string", "11")],
        value_versions="0", value_flexible="0+",
        value=[F("epoch", "int32"), F("metadata_hash", "int64")],
    ),
    _record(
        "ShareGroupTargetAssignmentMetadata", CONSUMER_OFFSETS, "12",
        key=[F("group_id", "string", "12")],
        value_versions="0", value_flexible="0+",
        value=[F("assignment_epoch", "int32")],
    ),
    _record(
        "ShareGroupTargetAssignmentMember", CONSUMER_OFFSETS, "13",
        key=[F("group_id", "string", "13"), F("member_id", "string", "13")],
        value_versions="0", value_flexible="0+",
        value=[F("topic_partitions", "[]", fields=_TOPIC_PARTITIONS)],
    ),
    _record(
        "ShareGroupCurrentMemberAssignment", CONSUMER_OFFSETS, "14",
        key=[F("group_id", "string", "14"), F("member_id", "string", "14")],
        value_versions="0", value_flexible="0+",
        value=[
            F("member_epoch", "int32"),
            F("previous_member_epoch", "int32"),
            F("state", "int8"),
            F("assigned_partitions", "[]", fields=_TOPIC_PARTITIONS),
        ],
    ),
    _record(
        "ShareGroupStatePartitionMetadata", CONSUMER_OFFSETS, "15",
        key=[F("group_id", "string", "15")],
        value_versions="0", value_flexible="0+",
        value=[
            # The topics whose share-partition state the share coordinator holds for the group (only those
            # partitions are assigned), and those it is asked to initialize or delete.
            F("initializing_topics", "[]", fields=[
                F("topic_id", "uuid"), F("topic_name", "string"), F("partitions", "[]int32")]),
            F("initialized_topics", "[]", fields=[
                F("topic_id", "uuid"), F("topic_name", "string"), F("partitions", "[]int32")]),
            F("deleting_topics", "[]", fields=[F("topic_id", "uuid"), F("topic_name", "string")]),
        ],
    ),
]

# The share coordinator's records (KIP-932, Kafka 4.3's share-coordinator ShareSnapshotKey/Value and
# ShareUpdateKey/Value): a share-partition's whole state, and the batches a write changed.
_STATE_BATCHES = F("state_batches", "[]", fields=[
    F("first_offset", "int64"), F("last_offset", "int64"),
    F("delivery_state", "int8"),  # 0 available, 2 acknowledged, 4 archived
    F("delivery_count", "int16"),
])


def _share_key(key_version: str) -> list[Field]:
    return [F("group_id", "string", key_version), F("topic_id", "uuid", key_version),
            F("partition", "int32", key_version)]


_COMPLETE_COUNT = F("delivery_complete_count", "int32", "0+", tag=0, default=-1)  # KIP-1226, Kafka 4.2
_SCHEMAS += [
    _record("ShareSnapshot", SHARE_GROUP_STATE, "0", key=_share_key("0"), value_versions="0", value_flexible="0+",
            value=[F("snapshot_epoch", "int32"), F("state_epoch", "int32"), F("leader_epoch", "int32"),
                   F("start_offset", "int64"), _COMPLETE_COUNT, F("create_timestamp", "int64"),
                   F("write_timestamp", "int64"), _STATE_BATCHES]),
    _record("ShareUpdate", SHARE_GROUP_STATE, "1", key=_share_key("1"), value_versions="0", value_flexible="0+",
            value=[F("snapshot_epoch", "int32"), F("leader_epoch", "int32"), F("start_offset", "int64"),
                   _COMPLETE_COUNT, _STATE_BATCHES]),
]

# KIP-1071 streams groups, as Kafka 4.3 writes them (its group-coordinator's generated StreamsGroup* schemas:
# type 18, the StreamsGroupPartitionMetadata of 4.0's early access, is gone; the metadata hash is a field of
# StreamsGroupMetadataValue). Every value is v0 and flexible.
_KEY_VALUE = [F("key", "string"), F("value", "string")]
_TASK_IDS = [F("subtopology_id", "string"), F("partitions", "[]int32")]
# The current assignment's active tasks carry the epoch each was assigned in (tag 0), which offset commits of
# a member a step behind are checked against.
_TASK_IDS_WITH_EPOCHS = [*_TASK_IDS, F("assignment_epochs", "[]int32", tag=0, nullable="0+")]
_TOPOLOGY_TOPIC = [F("name", "string"), F("partitions", "int32"), F("replication_factor", "int16"),
                   F("topic_configs", "[]", fields=_KEY_VALUE)]


def _streams_key(key_version: str, member: bool = False) -> list[Field]:
    key = [F("group_id", "string", key_version)]
    return [*key, F("member_id", "string", key_version)] if member else key


_SCHEMAS += [
    _record("StreamsGroupMetadata", CONSUMER_OFFSETS, "17", key=_streams_key("17"),
            value_versions="0", value_flexible="0+",
            value=[F("epoch", "int32"), F("metadata_hash", "int64"),
                   F("validated_topology_epoch", "int32", tag=0, default=-1),
                   F("last_assignment_configs", "[]", tag=1, nullable="0+", fields=_KEY_VALUE)]),
    _record("StreamsGroupMemberMetadata", CONSUMER_OFFSETS, "19", key=_streams_key("19", member=True),
            value_versions="0", value_flexible="0+",
            value=[F("instance_id", "string", nullable="0+"), F("rack_id", "string", nullable="0+"),
                   F("client_id", "string"), F("client_host", "string"), F("rebalance_timeout_ms", "int32"),
                   F("topology_epoch", "int32"), F("process_id", "string"),
                   F("user_endpoint", "{}", nullable="0+", default=None,
                     fields=[F("host", "string"), F("port", "uint16")]),
                   F("client_tags", "[]", fields=_KEY_VALUE)]),
    _record("StreamsGroupTargetAssignmentMetadata", CONSUMER_OFFSETS, "20", key=_streams_key("20"),
            value_versions="0", value_flexible="0+",
            value=[F("assignment_epoch", "int32"), F("assignment_timestamp", "int64", tag=0)]),
    _record("StreamsGroupTargetAssignmentMember", CONSUMER_OFFSETS, "21", key=_streams_key("21", member=True),
            value_versions="0", value_flexible="0+",
            value=[F("active_tasks", "[]", fields=_TASK_IDS), F("standby_tasks", "[]", fields=_TASK_IDS),
                   F("warmup_tasks", "[]", fields=_TASK_IDS)]),
    _record("StreamsGroupCurrentMemberAssignment", CONSUMER_OFFSETS, "22", key=_streams_key("22", member=True),
            value_versions="0", value_flexible="0+",
            value=[F("member_epoch", "int32"), F("previous_member_epoch", "int32"),
                   F("state", "int8"),  # Kafka's streams MemberState ids
                   F("active_tasks", "[]", fields=_TASK_IDS_WITH_EPOCHS),
                   F("standby_tasks", "[]", fields=_TASK_IDS), F("warmup_tasks", "[]", fields=_TASK_IDS),
                   F("active_tasks_pending_revocation", "[]", fields=_TASK_IDS_WITH_EPOCHS),
                   F("standby_tasks_pending_revocation", "[]", fields=_TASK_IDS),
                   F("warmup_tasks_pending_revocation", "[]", fields=_TASK_IDS)]),
    _record("StreamsGroupTopology", CONSUMER_OFFSETS, "23", key=_streams_key("23"),
            value_versions="0", value_flexible="0+",
            value=[F("epoch", "int32"), F("subtopologies", "[]", fields=[
                F("subtopology_id", "string"), F("source_topics", "[]string"),
                F("source_topic_regex", "[]string"),
                F("state_changelog_topics", "[]", fields=_TOPOLOGY_TOPIC),
                F("repartition_sink_topics", "[]string"),
                F("repartition_source_topics", "[]", fields=_TOPOLOGY_TOPIC),
                F("copartition_groups", "[]", fields=[
                    F("source_topics", "[]int16"), F("source_topic_regex", "[]int16"),
                    F("repartition_source_topics", "[]int16")]),
            ])]),
]

RECORDS: dict[str, RecordSchema] = {schema.name: schema for schema in _SCHEMAS}


def _key_owners() -> dict[tuple[str, int], RecordSchema]:
    owners: dict[tuple[str, int], RecordSchema] = {}
    for schema in _SCHEMAS:
        assert schema.key_versions.high is not None
        for version in range(schema.key_versions.low, schema.key_versions.high + 1):
            owners[(schema.topic, version)] = schema
    return owners


_KEY_OWNERS = _key_owners()


def schema_for(record_type: str) -> RecordSchema:
    schema = RECORDS.get(record_type)
    if schema is None:
        raise KeyError(f"no coordinator record type {record_type!r}")
    return schema


@cache
def _key_struct(record_type: str, version: int) -> KStruct:
    return struct_for(schema_for(record_type).key, version, flexible=False)


@cache
def _value_struct(record_type: str, version: int) -> KStruct:
    schema = schema_for(record_type)
    return struct_for(schema.value, version, flexible=version in schema.value_flexible)


# The generated codec (kemu.wire.compiled) first, construct when it cannot: the transaction coordinator writes
# a key and a value on every state change (three per transaction) and the group coordinator one per committed
# offset, and construct's build cost more than the rest of the journal write together.
_CODECS: dict[tuple[str, int, bool], tuple[compiled.Decoder, compiled.Encoder]] = {}


def _codec(record_type: str, version: int, key: bool) -> tuple[compiled.Decoder, compiled.Encoder]:
    found = _CODECS.get((record_type, version, key))
    if found is None:
        schema = schema_for(record_type)
        if version not in (schema.key_versions if key else schema.value_versions):
            raise CoordinatorRecordError(f"{record_type} has no {'key' if key else 'value'} version {version}")
        fields = schema.key if key else schema.value
        flexible = not key and version in schema.value_flexible
        found = (compiled.decoder(fields, version, flexible, views=False),
                 compiled.encoder(fields, version, flexible))
        _CODECS[(record_type, version, key)] = found
    return found


def encode_key(record_type: str, version: int, key: dict[str, Any]) -> bytes:
    return _encode(record_type, version, True, key)


def decode_key(data: bytes | memoryview, topic: str) -> DecodedKey:
    """Decode a key read from `topic`: the same version means different records in the two topics."""
    version = _version_of(data)
    schema = _KEY_OWNERS.get((topic, version))
    if schema is None:
        raise UnknownRecordType(topic, version)
    fields = _parse(schema.name, version, True, data, f"{schema.name}Key v{version}")
    return DecodedKey(schema.name, version, fields)


def encode_value(record_type: str, version: int, value: dict[str, Any]) -> bytes:
    return _encode(record_type, version, False, value)


def decode_value(record_type: str, data: bytes | memoryview) -> DecodedValue:
    """Decode a (non-tombstone) value of the record type its key named."""
    schema = schema_for(record_type)
    version = _version_of(data)
    if version < schema.value_versions.low:
        raise CoordinatorRecordError(f"{record_type} has no value version {version}")
    highest = schema.value_versions.high
    layout = version if highest is None else min(version, highest)
    fields = _parse(record_type, layout, False, data, f"{record_type}Value v{version}")
    return DecodedValue(version, fields)


def _encode(record_type: str, version: int, key: bool, fields: dict[str, Any]) -> bytes:
    encoder = _codec(record_type, version, key)[1]
    out = bytearray(_VERSION.pack(version))
    try:
        encoder(fields, out, None)
        return bytes(out)
    except Exception:  # noqa: S110 - construct builds it again and raises what is wrong
        pass
    stream = io.BytesIO()
    stream.write(_VERSION.pack(version))
    body = _key_struct(record_type, version) if key else _value_struct(record_type, version)
    body._build(fields, stream, {}, f"({record_type}{'Key' if key else 'Value'} v{version})")
    return stream.getvalue()


def _version_of(data: bytes | memoryview) -> int:
    if len(data) < _VERSION.size:
        raise CoordinatorRecordError("record shorter than its version prefix")
    version: int = _VERSION.unpack_from(data)[0]
    return version


def _parse(record_type: str, version: int, key: bool, data: bytes | memoryview, what: str) -> dict[str, Any]:
    try:
        fields, end, _ = _codec(record_type, version, key)[0](data, _VERSION.size, _UNBOUNDED)
        if end == len(data):
            return fields
    except Exception:  # noqa: S110 - construct decodes it again and says what is wrong
        pass
    stream = io.BytesIO(data)
    stream.seek(_VERSION.size)
    body = _key_struct(record_type, version) if key else _value_struct(record_type, version)
    try:
        parsed: dict[str, Any] = body._parsereport(stream, {}, f"({what})")
    except (ConstructError, UnicodeDecodeError) as exc:
        raise CoordinatorRecordError(f"malformed {what}: {exc}") from exc
    if stream.tell() != len(data):
        raise CoordinatorRecordError(f"{len(data) - stream.tell()} trailing bytes after {what}")
    return parsed
