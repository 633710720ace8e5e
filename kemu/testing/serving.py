"""`kemu serve` as a process runs it: one Trio loop serving the core its flags describe, or — when a control
endpoint or a transcript file reads the handle — the in-process handle (`kemu.testing.served`) with the
control endpoint beside it.

Through the handle, the process has every power the handle has (a clock to advance, restart in-process,
faults, the transcript); the handle's loop runs on its own thread, and the main thread's loop waits for
SIGINT/SIGTERM (or the broker thread failing) and serves the control endpoint. Without anything to use
those powers, the process serves the core on its main thread's loop alone: it starts without importing the
handle, its fault scripts and transcript, and without a second thread and loop.
"""

from __future__ import annotations

import logging
import signal
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

import trio
import trio.lowlevel

from kemu.broker import meta_properties
from kemu.broker.broker import BrokerCore
from kemu.clock import SystemClock
from kemu.server import serve
from kemu.testing.options import ServeOptions, address, bootstrap_servers, broker_config, cluster_settings

if TYPE_CHECKING:
    from kemu.testing.served import ServedBroker

__all__ = ["CannotListen", "ServeOptions", "serve_until_signalled"]

log = logging.getLogger("kemu")


class CannotListen(OSError):
    """A listener could not be opened; says which flags named the address, with the OS's reason."""

    def __init__(self, flags: str, error: OSError) -> None:
        super().__init__(error.errno, error.strerror)
        self.flags, self.error = flags, error

    def __str__(self) -> str:
        reason = self.error.strerror or str(self.error)
        return f"cannot listen on {self.flags}: {reason}"


def _broker_flags(options: ServeOptions) -> str:
    return f"--host {options.host} --port {options.port}"


async def serve_until_signalled(options: ServeOptions, *,
                                on_ready: Callable[[ServedBroker], None] | None = None,
                                on_serving: Callable[[], None] | None = None) -> None:
    """Run the broker (and the control endpoint) until SIGINT or SIGTERM; print the banner lines once both
    accept connections, then call `on_serving`. `on_ready` is given the handle, so it is only for a
    process that runs through the handle (`options.observed`). A failure of the broker ends this with it."""
    if options.observed:
        await _serve_through_handle(options, on_ready, on_serving)
    else:
        await _serve_core(options, on_serving)


async def _serve_core(options: ServeOptions, on_serving: Callable[[], None] | None) -> None:
    config = broker_config(cluster_settings(options.settings, options.brokers), options.data_dir,
                           node_id=options.node_id, host=options.host, port=options.port,
                           brokers=options.brokers, racks=options.racks)
    cluster_id = meta_properties.load_or_format(options.data_dir, options.node_id, None)
    # Nothing can move the clock of a process without a control endpoint: the machine's clocks are its time.
    core = BrokerCore(config, SystemClock(), cluster_id)
    core.config.advertised_host, core.config.advertised_port = options.advertised_host, options.advertised_port
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(_cancel_on_signals, nursery.cancel_scope)
            try:
                await nursery.start(partial(serve, core, options.host, options.port, manage_gc=True))
            except OSError as exc:
                raise CannotListen(_broker_flags(options), exc) from None
            _log_start(options, core)
            print(f"kemu serving on {bootstrap_servers(core)}", flush=True)
            if on_serving is not None:
                on_serving()
            await trio.sleep_forever()
    finally:
        core.close()


async def _serve_through_handle(options: ServeOptions, on_ready: Callable[[ServedBroker], None] | None,
                                on_serving: Callable[[], None] | None) -> None:
    from kemu.testing.served import start_broker

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
            try:
                broker = await trio.to_thread.run_sync(partial(start_broker, options, on_failure, manage_gc=True))
            except OSError as exc:
                raise CannotListen(_broker_flags(options), exc) from None
        try:
            _log_start(options, broker.core)
            control: tuple[str, int] | None = None
            if options.control_port is not None:
                from kemu.testing.control import serve_control  # its HTTP server only loads when asked for

                try:
                    bound = await nursery.start(serve_control, broker, options.host, options.control_port)
                except OSError as exc:
                    raise CannotListen(f"--host {options.host} --control-port {options.control_port}", exc) from None
                control = (options.host, bound)
            print(f"kemu serving on {broker.bootstrap_servers}", flush=True)
            if control is not None:
                print(f"kemu control on {address(*control)}", flush=True)
            if on_ready is not None:
                on_ready(broker)
            if on_serving is not None:
                on_serving()
            await stopped.wait()
            raise RuntimeError("the kemu broker stopped unexpectedly") from failed[0]
        finally:
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(broker.close)


def _log_start(options: ServeOptions, core: BrokerCore) -> None:
    log.info("data directory %s%s, cluster id %s, node id %d", options.data_dir,
             " (temporary)" if options.temporary_data_dir else "", core.cluster_id, options.node_id)


async def _cancel_on_signals(scope: trio.CancelScope, *, task_status: trio.TaskStatus[None]) -> None:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        task_status.started()
        async for _ in signals:
            scope.cancel()
            return
