"""Partition logs in Kafka's on-disk layout: append, read, offsets, producer state, retention, recovery.

Plain synchronous Python — no sockets, no Trio — with time from an injected `kemu.clock.Clock`. Only
kemu.broker's `Partition` calls a log (everything else asks the partition); it does so like this:

Produce (per partition, after `kemu.wire.records.check_produce_records(version, records)`)::

    try:
        result = log.append(records, leader_epoch=epoch)   # -> AppendResult; the epoch is the partition's
    except LogError as e:                         # e.code, e.response_message, e.record_errors
        ...                                       # (base_offset -1, log_append_time -1, ...)
    except ProducerStateError as e:               # a duplicate is no error: its first offsets come back
        ...
    # result.base_offset, result.log_append_time (-1 unless LogAppendTime), result.log_start_offset

    The log validates the batch, checks a producer batch against its producer state (kemu.log.producer_state:
    duplicate? out of order? fenced?), assigns offsets and writes it, then records it there. Coordinators
    (transaction markers, __consumer_offsets, __transaction_state) append with
    `origin=AppendOrigin.COORDINATOR`, which allows control batches: a COMMIT/ABORT marker completes its
    producer's transaction, an ABORT going into the segment's `.txnindex` (kemu.log.txn_index).

Fetch::

    data = log.read(fetch_offset, partition_max_bytes,
                    upper_bound=log.bound(isolation),   # the LSO, the high watermark or the log end
                    min_one_batch=first_partition_in_response)
    # data.records (raw batches; the last may be cut short by max bytes, as Kafka does),
    # data.high_watermark, data.last_stable_offset, data.log_start_offset
    # OffsetOutOfRangeError (OFFSET_OUT_OF_RANGE) below the log start or above the log end.
    # Long polling: log.add_listener(callback) is called with LogEvent.APPENDED after every append.

ListOffsets::

    found = log.fetch_offset_for_timestamp(timestamp, bound, leader_epoch)   # -> TimestampAndOffset | None
    # bound: the high watermark, the last stable offset (read_committed) or the log end (a replica).
    # timestamp: ListOffsetsTimestamp.{LATEST, EARLIEST, MAX_TIMESTAMP, ...} or a real timestamp;
    # None means "no such offset" (Kafka answers offset -1, timestamp -1).

Transactions: `log.last_stable_offset` (the first offset of the earliest open transaction, else the high
watermark), `log.aborted_transactions(fetch_offset, upper)` for a read_committed Fetch; producer snapshots
are written when a segment rolls and on close, and reloaded (then the tail replayed) on open. Coordinators
replay their topics with `log.batches(start, end)`.

DeleteRecords: `log.delete_records(offset)` -> low watermark (OffsetOutOfRangeError beyond the HW).
OffsetForLeaderEpoch: `log.end_offset_for_epoch(epoch)` -> (epoch, end offset).
Storage: `LogDir(path, clock)` owns a data directory — `open(topic, partition, config, topic_id=...)`,
`open_all(config_for)` at start-up, `delete(topic, partition)`, and `run_retention()`, one pass over every
log. The broker does not call it: its housekeeping maintains partition by partition
(`log.delete_old_segments()`, `log.maybe_flush()` every log.retention.check.interval.ms, 5 minutes), so
one partition whose disk fails goes offline and the rest are still maintained.
Topic configs: `LogConfig` (typed, Kafka names in snake_case), `LogConfig.from_props({...})` validates
Kafka-style properties; `TOPIC_CONFIGS` lists every topic config with its type, default and synonym.
"""

from typing import TYPE_CHECKING

from kemu.log.config import TOPIC_CONFIG_DEFAULTS, TOPIC_CONFIGS, ConfigKey, InvalidConfigError, LogConfig
from kemu.log.errors import (
    LogClosedError,
    LogError,
    OffsetOutOfRangeError,
    RecordError,
    RecordValidationError,
)
from kemu.log.kinds import AppendOrigin, FetchIsolation
from kemu.log.log_dir import LogDir

if TYPE_CHECKING:
    from kemu.log.leader_epoch import EpochEntry, LeaderEpochCache
    from kemu.log.partition_log import (
        DELETE_RECORDS_HIGH_WATERMARK,
        AppendResult,
        FetchData,
        ListOffsetsTimestamp,
        LogEvent,
        PartitionLog,
    )
    from kemu.log.segment import LogSegment, TimestampAndOffset
    from kemu.log.validator import ValidatedBatch

# The partition log, its segments, leader epochs and the validator load on first use (the first partition a
# LogDir opens, or a name of theirs taken from here): a broker with no partition needs none of them at start-up.
_LAZY = {
    "EpochEntry": "kemu.log.leader_epoch",
    "LeaderEpochCache": "kemu.log.leader_epoch",
    "DELETE_RECORDS_HIGH_WATERMARK": "kemu.log.partition_log",
    "AppendResult": "kemu.log.partition_log",
    "FetchData": "kemu.log.partition_log",
    "ListOffsetsTimestamp": "kemu.log.partition_log",
    "LogEvent": "kemu.log.partition_log",
    "PartitionLog": "kemu.log.partition_log",
    "LogSegment": "kemu.log.segment",
    "TimestampAndOffset": "kemu.log.segment",
    "ValidatedBatch": "kemu.log.validator",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "DELETE_RECORDS_HIGH_WATERMARK",
    "TOPIC_CONFIGS",
    "TOPIC_CONFIG_DEFAULTS",
    "AppendOrigin",
    "AppendResult",
    "ConfigKey",
    "EpochEntry",
    "FetchData",
    "FetchIsolation",
    "InvalidConfigError",
    "LeaderEpochCache",
    "ListOffsetsTimestamp",
    "LogClosedError",
    "LogConfig",
    "LogDir",
    "LogError",
    "LogEvent",
    "LogSegment",
    "OffsetOutOfRangeError",
    "PartitionLog",
    "RecordError",
    "RecordValidationError",
    "TimestampAndOffset",
    "ValidatedBatch",
]
