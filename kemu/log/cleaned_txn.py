"""What the cleaner tracks of transactions while it walks a log (Kafka's CleanedTransactionMetadata).

It is seeded with the aborted transactions of the range being walked (from the `.txnindex` files) and
told of every batch in offset order. It answers two questions: is this data batch part of an aborted
transaction (then its records go), and may this marker go (an ABORT marker stays while any batch of its
transaction was still seen in this round, a COMMIT marker while any of its data was seen; a marker whose
transaction is empty then waits out `delete.retention.ms` through its delete horizon). ABORT markers kept
go into the cleaned segment's `.txnindex`, so read_committed readers still learn of the data they hide.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable

from kemu.log.txn_index import AbortedTxn
from kemu.wire.records import ControlRecordType, RecordBatch, RecordsError, decode_control_key


class _AbortedInProgress:
    __slots__ = ("txn", "last_observed_batch_offset")

    def __init__(self, txn: AbortedTxn) -> None:
        self.txn = txn
        self.last_observed_batch_offset: int | None = None


class CleanedTransactionMetadata:
    def __init__(self) -> None:
        self._pending: list[tuple[int, int, AbortedTxn]] = []  # heap by first offset
        self._sequence = 0
        self._ongoing_committed: set[int] = set()
        self._ongoing_aborted: dict[int, _AbortedInProgress] = {}
        self.cleaned_index: list[AbortedTxn] | None = None
        """Where the aborted transactions whose markers stay are collected (the cleaned segment's index)."""

    def add_aborted_transactions(self, aborted: Iterable[AbortedTxn]) -> None:
        for txn in aborted:
            heapq.heappush(self._pending, (txn.first_offset, self._sequence, txn))
            self._sequence += 1

    def _consume_aborted_up_to(self, offset: int) -> None:
        while self._pending and self._pending[0][0] <= offset:
            _, _, txn = heapq.heappop(self._pending)
            self._ongoing_aborted.setdefault(txn.producer_id, _AbortedInProgress(txn))

    def on_control_batch_read(self, batch: RecordBatch) -> bool:
        """A marker was reached; True when it may be discarded."""
        header = batch.header
        self._consume_aborted_up_to(header.last_offset)
        if header.records_count == 0:
            return True  # an already emptied control batch
        try:
            _, record_type = decode_control_key(batch.records()[0].key)
        except RecordsError:
            return False
        producer_id = header.producer_id
        if record_type == ControlRecordType.ABORT:
            aborted = self._ongoing_aborted.pop(producer_id, None)
            if aborted is not None and aborted.last_observed_batch_offset is not None:
                if self.cleaned_index is not None:
                    self.cleaned_index.append(aborted.txn)
                return False
            return True
        if record_type == ControlRecordType.COMMIT:
            if producer_id in self._ongoing_committed:
                self._ongoing_committed.discard(producer_id)
                return False
            return True
        return False

    def on_batch_read(self, batch: RecordBatch) -> bool:
        """A data batch was reached; True when it belongs to an aborted transaction."""
        header = batch.header
        self._consume_aborted_up_to(header.last_offset)
        if not header.is_transactional:
            return False
        aborted = self._ongoing_aborted.get(header.producer_id)
        if aborted is not None:
            aborted.last_observed_batch_offset = header.last_offset
            return True
        self._ongoing_committed.add(header.producer_id)
        return False
