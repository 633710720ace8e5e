"""`kemu serve` as a process runs it: the in-process handle (`kemu.testing.Broker`) with what the flags say,
and, with `--control-port`, the control endpoint beside it.

Running the process through the handle gives the process every power the handle has — a `TestClock` on real
time that `advance` can jump, `restart()` and `kill()` of the core in-process on the same data and port, the
request hooks that faults and the transcript use — with nothing of it written twice. The handle's Trio loop
runs on its own thread; the main thread's loop waits for SIGINT/SIGTERM (or the broker thread failing) and
serves the control endpoint.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import trio
import trio.lowlevel

from kemu.testing.broker import Broker

log = logging.getLogger("kemu")


class ServedBroker(Broker):
    """The handle, advertising a host and port of the operator's choosing (a mapped port, a container's
    name) rather than the listen address, and telling `on_failure` when its broker thread dies."""

    def __init__(self, *, advertised_host: str | None = None, advertised_port: int | None = None,
                 on_failure: Callable[[BaseException], None] | None = None, **options: Any) -> None:
        self._advertised = (advertised_host, advertised_port)
        self.on_failure = on_failure
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
        return ",".join(_address(*self.core.advertised_endpoint(node.node_id)) for node in self.core.cluster)


@dataclass(frozen=True, slots=True)
class ServeOptions:
    host: str
    port: int
    data_dir: str
    settings: Mapping[str, str] = field(default_factory=dict)
    advertised_host: str | None = None
    advertised_port: int | None = None
    node_id: int = 1
    brokers: int = 1
    racks: tuple[str | None, ...] = ()
    control_port: int | None = None
    temporary_data_dir: bool = False  # said in the start-up log line
    transcript_file: bool = False  # a transcript file is written (it reads the handle's transcript)

    @property
    def observed(self) -> bool:
        """Whether anything can read the transcript or the checker: the control endpoint or the file."""
        return self.control_port is not None or self.transcript_file


def start_broker(options: ServeOptions,
                 on_failure: Callable[[BaseException], None] | None = None) -> ServedBroker:
    """The handle for `options`; an OSError (the port is taken) is raised as itself, for a one-line message."""
    try:
        return ServedBroker(config=options.settings, data_dir=options.data_dir, host=options.host,
                            port=options.port, node_id=options.node_id, brokers=options.brokers,
                            racks=options.racks, advertised_host=options.advertised_host,
                            advertised_port=options.advertised_port, on_failure=on_failure,
                            observe=options.observed)
    except RuntimeError as failed:
        cannot_listen = _os_error_in(failed.__cause__)
        if cannot_listen is not None:
            raise cannot_listen from None
        raise


def _os_error_in(error: BaseException | None) -> OSError | None:
    if isinstance(error, OSError):
        return error
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            found = _os_error_in(inner)
            if found is not None:
                return found
    return None


async def serve_until_signalled(options: ServeOptions, *,
                                on_ready: Callable[[ServedBroker], None] | None = None) -> None:
    """Run the broker (and the control endpoint) until SIGINT or SIGTERM; print the banner lines once both
    accept connections. A failure of the broker thread ends this with that failure."""
    failed: list[BaseException] = []
    stopped = trio.Event()
    token = trio.lowlevel.current_trio_token()

    def on_failure(exc: BaseException) -> None:
        failed.append(exc)
        try:
            token.run_sync_soon(stopped.set)
        except trio.RunFinishedError:
            pass

    async with trio.open_nursery() as nursery:
        await nursery.start(_cancel_on_signals, nursery.cancel_scope)
        # Shielded: a signal during start-up must still find the broker to close.
        with trio.CancelScope(shield=True):
            broker = await trio.to_thread.run_sync(start_broker, options, on_failure)
        try:
            log.info("data directory %s%s, cluster id %s, node id %d", options.data_dir,
                     " (temporary)" if options.temporary_data_dir else "", broker.core.cluster_id, options.node_id)
            control: tuple[str, int] | None = None
            if options.control_port is not None:
                from kemu.testing.control import serve_control  # its HTTP server only loads when asked for

                bound = await nursery.start(serve_control, broker, options.host, options.control_port)
                control = (options.host, bound)
            print(f"kemu serving on {broker.bootstrap_servers}", flush=True)
            if control is not None:
                print(f"kemu control on {_address(*control)}", flush=True)
            if on_ready is not None:
                on_ready(broker)
            await stopped.wait()
            raise RuntimeError("the kemu broker stopped unexpectedly") from failed[0]
        finally:
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(broker.close)


def _address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


async def _cancel_on_signals(scope: trio.CancelScope, *, task_status: trio.TaskStatus[None]) -> None:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        task_status.started()
        async for _ in signals:
            scope.cancel()
            return

