"""Calling a test's function before each response is encoded, with the API key (on the thread that encodes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kemu.wire import codec


def before_each_encoding(monkeypatch: pytest.MonkeyPatch, before: Callable[[int], None]) -> None:
    real = codec.encode_response_parts

    def encode(api: Any, version: int, correlation_id: int, body: dict[str, Any]) -> Any:
        before(api.key)
        return real(api, version, correlation_id, body)

    monkeypatch.setattr(codec, "encode_response_parts", encode)
