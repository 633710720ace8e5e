"""Handlers with controllable timing, for the connection tests: they stand in for a long-polling Fetch
or a JoinGroup (wait, then answer), an acks=0 Produce (no answer) and a broken handler."""

from __future__ import annotations

import threading
from typing import Any

import trio

from kemu.broker.errors import ApiError
from kemu.handlers import Handler, all_handlers
from kemu.handlers.context import Continuation, RequestContext
from kemu.wire.apis import get_api
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

METADATA = 3


class Script:
    """A Metadata stand-in: the first requested topic name says what to do.

    "slow": detach, then wait for `gate`. "hold": wait for `gate` without detaching. "fast": answer at once
    and set `fast_done`. "none": no response. "boom": raise. "refuse": ApiError(INVALID_REQUEST).
    "software": answer with the client software name the connection recorded. "yield:N": N checkpoints.
    "task": answer with the identity of the Trio task that ran it.
    "later" / "later-hold": a Continuation (a long poll's) that answers with the identity of the task that
    finished it; "later-hold" first waits for `gate`.
    Every request appends ("start", name) and ("end", name) to `events`.
    """

    def __init__(self, with_error_response: bool = True) -> None:
        self.gate = trio.Event()
        self.fast_done = threading.Event()
        self.events: list[tuple[str, str]] = []
        self.with_error_response = with_error_response
        # The tasks "task" named, kept alive: a finished task's id could otherwise be reused by the next one.
        self.tasks: list[trio.lowlevel.Task] = []

    async def handle(self, ctx: RequestContext, request: Request) -> dict[str, Any] | None:
        name = request.body["topics"][0]["name"]
        self.events.append(("start", name))
        try:
            if name == "slow":
                ctx.detach()
                await self.gate.wait()
            elif name == "hold":
                await self.gate.wait()
            elif name == "none":
                return None
            elif name == "boom":
                raise RuntimeError("handler bug")
            elif name == "refuse":
                raise ApiError(ErrorCode.INVALID_REQUEST, "refused")
            elif name == "software":
                name = f"{ctx.client.software_name}/{ctx.client.software_version}"
            elif name.startswith("yield:"):
                for _ in range(int(name.split(":")[1])):
                    await trio.lowlevel.checkpoint()
            elif name == "fast":
                self.fast_done.set()
            elif name == "task":
                self.tasks.append(trio.lowlevel.current_task())
                name = str(id(self.tasks[-1]))  # which task ran it
            elif name.startswith("later"):
                return Continuation(lambda: self._finish(name == "later-hold"))
            return {"topics": [{"name": name, "error_code": 0}]}
        finally:
            self.events.append(("end", name))

    async def _finish(self, hold: bool) -> dict[str, Any]:
        if hold:
            await self.gate.wait()
        self.tasks.append(trio.lowlevel.current_task())
        return {"topics": [{"name": str(id(self.tasks[-1])), "error_code": 0}]}

    def error_response(self, request: Request, code: ErrorCode, message: str | None) -> dict[str, Any]:
        return {"topics": [{"name": message or "", "error_code": int(code)}]}

    def handlers(self, *, suspends: bool = True) -> dict[int, Handler]:
        """The table with this Metadata stand-in; `suspends=False` declares it never waits, as a handler
        module without SUSPENDS does, so the connection runs it on its reader."""
        api = get_api(METADATA)
        assert api is not None
        table = {18: all_handlers()[18]}
        table[METADATA] = Handler(METADATA, api, 0, 12, self.handle,
                                  self.error_response if self.with_error_response else None, suspends=suspends)
        return table


def metadata(name: str) -> dict[str, Any]:
    return {"topics": [{"name": name}]}
