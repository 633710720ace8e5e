"""What the group and the transaction coordinator shells share: an internal topic as a journal.

Both coordinators keep their state in a compacted internal topic (`__consumer_offsets`,
`__transaction_state`), hash their keys onto its partitions the way Kafka does, create it on first use
with Kafka's layout, append with `AppendOrigin.COORDINATOR`, read it back at start-up, and turn a failed
append into a coordinator error. Only that last mapping differs between the two on purpose (Kafka's
CoordinatorRuntime and TransactionStateManager normalise differently), so each passes its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from kemu.admin.topics import ensure_internal_topic
from kemu.broker.broker import BrokerCore
from kemu.broker.errors import ApiError
from kemu.broker.partition import Partition
from kemu.hashing import partition_for
from kemu.log import AppendOrigin, LogError
from kemu.log.producer_state import ProducerStateError
from kemu.wire.errors import ErrorCode
from kemu.wire.records import RecordsError

WriteErrorMapping = Callable[[ErrorCode], ErrorCode]

# Errors an append to the journal can raise: the log's, the producer state's and a batch's own.
JOURNAL_ERRORS = (LogError, ProducerStateError, RecordsError, ApiError)

_UNAVAILABLE = frozenset({ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.NOT_ENOUGH_REPLICAS,
                          ErrorCode.REQUEST_TIMED_OUT, ErrorCode.KAFKA_STORAGE_ERROR})


def group_write_error(code: ErrorCode) -> ErrorCode:
    """CoordinatorRuntime's normalisation of a failed write (the group coordinator): other codes pass."""
    if code in _UNAVAILABLE:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if code is ErrorCode.NOT_LEADER_OR_FOLLOWER:
        return ErrorCode.NOT_COORDINATOR
    if code in (ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.RECORD_LIST_TOO_LARGE, ErrorCode.INVALID_FETCH_SIZE):
        return ErrorCode.UNKNOWN_SERVER_ERROR
    return code


def txn_write_error(code: ErrorCode) -> ErrorCode:
    """TransactionStateManager.appendTransactionToLog's: anything it does not name is UNKNOWN_SERVER_ERROR."""
    if code in _UNAVAILABLE:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if code is ErrorCode.NOT_LEADER_OR_FOLLOWER:
        return ErrorCode.NOT_COORDINATOR
    return ErrorCode.UNKNOWN_SERVER_ERROR


class InternalTopicJournal:
    """One coordinator's internal topic on this broker."""

    def __init__(self, broker: BrokerCore, topic: str, configured_partitions: int,
                 write_error: WriteErrorMapping) -> None:
        self.broker = broker
        self.topic = topic
        self._configured_partitions = configured_partitions
        self._write_error = write_error

    def partition_count(self) -> int:
        """The count keys are hashed over: the topic's own once it exists, else the count it will be
        created with (so a key's partition never changes when the topic appears)."""
        found = self.broker.topics.get(self.topic)
        if found is not None and found.partitions:
            return len(found.partitions)
        return self._configured_partitions

    def partition_of(self, key: str) -> int:
        return partition_for(key, self.partition_count())

    def ensure_topic(self) -> bool:
        return ensure_internal_topic(self.broker, self.topic)

    def partition(self, index: int) -> Partition:
        """The partition's log, creating the topic if it is missing; COORDINATOR_NOT_AVAILABLE if it can't."""
        if self.topic not in self.broker.topics:
            self.ensure_topic()
        plog = self.broker.partition(self.topic, index)
        if plog is None:
            raise ApiError(ErrorCode.COORDINATOR_NOT_AVAILABLE, f"{self.topic}-{index} is not available")
        return plog

    def partitions(self) -> Iterator[tuple[int, Partition]]:
        """The topic's partitions that have a log, for replay at start-up."""
        found = self.broker.topics.get(self.topic)
        for partition in found.partitions if found is not None else ():
            if partition.is_open:
                yield partition.index, partition

    def append(self, index: int, batch: bytes) -> Partition:
        """Append a batch the coordinator built itself (so its CRC and keys are not checked again); a failure
        is raised as the coordinator's ApiError for it."""
        plog = self.partition(index)
        try:
            plog.append(batch, origin=AppendOrigin.COORDINATOR, built=True)
        except JOURNAL_ERRORS as error:
            raise self.write_failure(error) from error
        return plog

    def write_failure(self, error: Exception) -> ApiError:
        code: ErrorCode = getattr(error, "code", None) or ErrorCode.UNKNOWN_SERVER_ERROR
        return ApiError(self._write_error(code), str(error))
