"""The exception the core raises internally to answer a request with a Kafka error code."""

from __future__ import annotations

from kemu.wire.errors import ErrorCode


class GroupError(Exception):
    """Kafka's ApiException: an error code, and the message Kafka would put where a response has one."""

    def __init__(self, code: ErrorCode, message: str | None = None) -> None:
        super().__init__(message or code.name)
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"GroupError({self.code.name}, {self.message!r})"
