"""CoordinatorRecords as the bytes of `__consumer_offsets` records, and back.

The key's version names the record type (OffsetCommit 1, GroupMetadata 2, ConsumerGroup* 3-8, ShareGroup*
10-15, StreamsGroup* 17-23). Values are written at the versions Kafka writes today, so that Kafka's own tools
could read kemu's log: OffsetCommitValue v4 with the topic id as Kafka 4.3 writes it, or v1 when the commit
carries an explicit expire timestamp (v1 is the only version with that field); GroupMetadataValue v3; the
KIP-848, KIP-932 and KIP-1071 records at v0. A tombstone has a null value.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from kemu.groups.records import CoordinatorRecord, RecordType
from kemu.wire import coordinator_records as schemas
from kemu.wire.records import DecodedRecord

KEY_VERSIONS: dict[str, int] = {
    RecordType.OFFSET_COMMIT: 1,
    RecordType.GROUP_METADATA: 2,
    RecordType.CONSUMER_GROUP_METADATA: 3,
    RecordType.CONSUMER_GROUP_PARTITION_METADATA: 4,
    RecordType.CONSUMER_GROUP_MEMBER_METADATA: 5,
    RecordType.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA: 6,
    RecordType.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER: 7,
    RecordType.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT: 8,
    RecordType.SHARE_GROUP_MEMBER_METADATA: 10,
    RecordType.SHARE_GROUP_METADATA: 11,
    RecordType.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA: 12,
    RecordType.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER: 13,
    RecordType.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT: 14,
    RecordType.SHARE_GROUP_STATE_PARTITION_METADATA: 15,
    RecordType.STREAMS_GROUP_METADATA: 17,
    RecordType.STREAMS_GROUP_MEMBER_METADATA: 19,
    RecordType.STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA: 20,
    RecordType.STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER: 21,
    RecordType.STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT: 22,
    RecordType.STREAMS_GROUP_TOPOLOGY: 23,
}

_NO_EXPIRE_TIMESTAMP = -1


def value_version(record: CoordinatorRecord) -> int:
    if record.type == RecordType.OFFSET_COMMIT:
        assert record.value is not None
        return 1 if record.value.get("expire_timestamp", _NO_EXPIRE_TIMESTAMP) != _NO_EXPIRE_TIMESTAMP else 4
    if record.type == RecordType.GROUP_METADATA:
        return 3
    return 0


def encode(record: CoordinatorRecord) -> tuple[bytes, bytes | None]:
    """The record's key and value bytes (value None for a tombstone)."""
    key = schemas.encode_key(record.type, KEY_VERSIONS[record.type], record.key)
    if record.value is None:
        return key, None
    return key, schemas.encode_value(record.type, value_version(record), record.value)


def decode(key: bytes, value: bytes | None, producer_id: int = -1, producer_epoch: int = -1) -> CoordinatorRecord:
    """One `__consumer_offsets` record. Raises `UnknownRecordType` for a key version a newer Kafka may write
    (Kafka skips those), `CoordinatorRecordError` for bytes that are not a record."""
    decoded_key = schemas.decode_key(key, schemas.CONSUMER_OFFSETS)
    fields = None if value is None else schemas.decode_value(decoded_key.record_type, value).fields
    return CoordinatorRecord(decoded_key.fields, fields, decoded_key.record_type, producer_id, producer_epoch)


def decode_all(records: Iterable[DecodedRecord], producer_id: int = -1, producer_epoch: int = -1,
               ) -> Iterator[CoordinatorRecord | schemas.CoordinatorRecordError]:
    """Each record of a data batch decoded, or the error that stopped it (the caller decides to skip)."""
    for record in records:
        if record.key is None:
            yield schemas.CoordinatorRecordError(f"record at offset {record.offset} has no key")
            continue
        try:
            yield decode(record.key, record.value, producer_id, producer_epoch)
        except schemas.CoordinatorRecordError as error:
            yield error
