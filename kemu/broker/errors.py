"""The error a core operation raises when it refuses a whole request, as Kafka's ApiException does."""

from __future__ import annotations

from kemu.wire.errors import ErrorCode

# The controller builds the metadata records of one user operation in a BoundedList this long (QuorumController's
# MAX_RECORDS_PER_USER_OP); an operation whose records overflow it is refused as a policy violation, thus.
MAX_RECORDS_PER_USER_OP = 10_000
TOO_MANY_RECORDS = "Unable to perform excessively large batch operation."


class ApiError(Exception):
    """Refuse the whole request with `code`; the handler turns it into that API's error response."""

    def __init__(self, code: ErrorCode, message: str | None = None) -> None:
        super().__init__(message or code.name)
        self.code = code
        self.message = message
