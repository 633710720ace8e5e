"""`kemu serve` through the in-process handle: what the process runs when a control endpoint or a transcript
file reads the handle (`kemu.testing.serving` decides). The handle's Trio loop runs on its own thread.

Running the process through the handle gives the process every power the handle has — a `TestClock` on real
time that `advance` can jump, `restart()` and `kill()` of the core in-process on the same data and port, the
request hooks that faults and the transcript use — with nothing of it written twice.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from kemu.broker.dir_lock import DataDirLocked
from kemu.testing.broker import Broker
from kemu.testing.options import ServeOptions, bootstrap_servers


class ServedBroker(Broker):
    """The handle, advertising a host and port of the operator's choosing (a mapped port, a container's
    name) rather than the listen address, and telling `on_failure` when its broker thread dies."""

    def __init__(self, *, advertised_host: str | None = None, advertised_port: int | None = None,
                 on_failure: Callable[[BaseException], None] | None = None, manage_gc: bool = False,
                 **options: Any) -> None:
        """`manage_gc`: the process is the broker's own (`kemu serve` with a control endpoint or a transcript
        file), so its full garbage collections are kept short as on the plain path (kemu.server.gc_policy)."""
        self._advertised = (advertised_host, advertised_port)
        self.on_failure = on_failure
        self._manage_gc = manage_gc
        super().__init__(**options)

    def _start(self) -> None:
        super()._start()
        # The handle's start also returns when its loop failed before listening (its ready event is set
        # either way); a process must not print its banner then.
        if self._error is not None:
            raise RuntimeError("the kemu broker did not start") from self._error

    async def _main(self, ready: threading.Event) -> None:
        # Set on every start's fresh core before its listener opens, so no client ever sees the listen
        # address advertised instead, not even right after a restart.
        self.core.config.advertised_host, self.core.config.advertised_port = self._advertised
        try:
            await super()._main(ready)
        except BaseException as exc:
            # The handle stops its loop by cancelling a scope it owns, so whatever escapes is a failure —
            # unless a crash fault stopped it dead on purpose, for the control endpoint to restart.
            if self.on_failure is not None and not self._crashed:
                self.on_failure(exc)
            raise

    @property
    def bootstrap_servers(self) -> str:
        return bootstrap_servers(self.core)


def start_broker(options: ServeOptions, on_failure: Callable[[BaseException], None] | None = None, *,
                 manage_gc: bool = False) -> ServedBroker:
    """The handle for `options`; an OSError (the port is taken) or a locked data directory is raised as itself,
    for a one-line message."""
    try:
        return ServedBroker(config=options.settings, data_dir=options.data_dir, host=options.host,
                            port=options.port, node_id=options.node_id, brokers=options.brokers,
                            racks=options.racks, advertised_host=options.advertised_host,
                            advertised_port=options.advertised_port, on_failure=on_failure,
                            observe=options.observed, manage_gc=manage_gc)
    except RuntimeError as failed:
        cannot_start = _startup_error_in(failed.__cause__)
        if cannot_start is not None:
            raise cannot_start from None
        raise


def _startup_error_in(error: BaseException | None) -> OSError | DataDirLocked | None:
    if isinstance(error, (OSError, DataDirLocked)):
        return error
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            found = _startup_error_in(inner)
            if found is not None:
                return found
    return None
