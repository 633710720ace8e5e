"""Partition logs in Kafka's on-disk layout: append, read, offsets, retention, recovery.

Plain synchronous Python — no sockets, no Trio — with time from an injected `kemu.clock.Clock`. Handlers
call it like this:

Produce (per partition, after `kemu.wire.records.check_produce_records(version, records)`)::

    try:
        result = log.append(records)              # -> AppendResult
    except LogError as e:                         # e.code, e.response_message, e.record_errors
        ...                                       # (base_offset -1, log_append_time -1, ...)
    # result.base_offset, result.log_append_time (-1 unless LogAppendTime), result.log_start_offset

    Idempotence/transactions split it in two and check producer state in between:
    prepared = log.prepare_append(records)        # validates only; ValidatedBatch.source is the header
    ... duplicate? out of order? fenced? ...
    result = log.commit_append(prepared)

    Coordinators (transaction markers, __consumer_offsets, __transaction_state) append with
    `origin=AppendOrigin.COORDINATOR`, which allows control batches.

Fetch::

    data = log.read(fetch_offset, partition_max_bytes,
                    upper_bound=last_stable_offset if read_committed else None,   # None: the high watermark
                    last_stable_offset=last_stable_offset, min_one_batch=first_partition_in_response)
    # data.records (raw batches; the last may be cut short by max bytes, as Kafka does),
    # data.high_watermark, data.last_stable_offset, data.log_start_offset
    # OffsetOutOfRangeError (OFFSET_OUT_OF_RANGE) below the log start or above the log end.
    # Long polling: log.add_listener(callback) is called with LogEvent.APPENDED after every append.

ListOffsets::

    found = log.fetch_offset_for_timestamp(timestamp, bound)   # -> TimestampAndOffset | None
    # bound: the high watermark, the last stable offset (read_committed) or the log end (a replica).
    # timestamp: ListOffsetsTimestamp.{LATEST, EARLIEST, MAX_TIMESTAMP, ...} or a real timestamp;
    # None means "no such offset" (Kafka answers offset -1, timestamp -1).

Producer state (kemu.txn) wraps the log rather than the log calling it: check the prepared batch's
`source` header between `prepare_append` and `commit_append`, record it from the `AppendResult`, know
the last stable offset (and pass it to `read`), take snapshots on `LogEvent.ROLLED`,
and react to `LogEvent.TRUNCATED` / `SEGMENTS_DELETED` / `LOG_START_OFFSET`. Coordinators replay their
topics with `log.batches(start, end)`.

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
