"""Errors the log raises, each carrying the Kafka error code a handler puts in its response."""

from __future__ import annotations

from typing import NamedTuple

from kemu.wire.errors import CodedError, ErrorCode


# A NamedTuple, not a frozen dataclass: every start-up defines it, and a dataclass definition compiles its
# generated methods (~0.5 ms each on a slow machine).
class RecordError(NamedTuple):
    """One refused record of a batch (ProduceResponse `record_errors`, KIP-467)."""

    batch_index: int
    message: str | None

    def __str__(self) -> str:
        # Java's RecordError.toString, which Kafka embeds in the INVALID_RECORD error message.
        message = "null" if self.message is None else f"'{self.message}'"
        return f"RecordError(batchIndex={self.batch_index}, message={message})"


class LogError(CodedError):
    """A refused log operation (UNKNOWN_SERVER_ERROR unless a subclass or the raiser says otherwise)."""

    @property
    def response_message(self) -> str | None:
        """What Kafka puts in a produce response's `error_message`: nothing, except for record errors."""
        return None

    @property
    def record_errors(self) -> tuple[RecordError, ...]:
        return ()


class OffsetOutOfRangeError(LogError):
    code = ErrorCode.OFFSET_OUT_OF_RANGE


class RecordValidationError(LogError):
    """Some records of the batch were refused (Kafka's RecordValidationException): the whole batch is refused,
    the response carries the per-record errors and this exception's message."""

    def __init__(self, message: str, code: ErrorCode, record_errors: list[RecordError]) -> None:
        super().__init__(message, code)
        self._record_errors = tuple(record_errors)

    @property
    def response_message(self) -> str | None:
        return self.message

    @property
    def record_errors(self) -> tuple[RecordError, ...]:
        return self._record_errors


class LogClosedError(LogError):
    """The log was closed or deleted (its topic went away); handlers answer as if the partition is unknown."""

    code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


class MarkerError(LogError):
    """A control batch that does not hold a well-formed COMMIT/ABORT marker."""
