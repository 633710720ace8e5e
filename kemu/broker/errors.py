"""The error a core operation raises when it refuses a whole request, as Kafka's ApiException does."""

from __future__ import annotations

from kemu.wire.errors import ErrorCode


class ApiError(Exception):
    """Refuse the whole request with `code`; the handler turns it into that API's error response."""

    def __init__(self, code: ErrorCode, message: str | None = None) -> None:
        super().__init__(message or code.name)
        self.code = code
        self.message = message
