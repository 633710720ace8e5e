"""`kemu serve`: run a broker until Ctrl-C or SIGTERM.

Once it accepts connections it prints exactly one line to stdout, `kemu serving on HOST:PORT` (the
advertised bootstrap address; with --port 0 the real bound port), which scripts and test harnesses wait
for. Imports are deferred into the command so `--help` and start-up stay quick.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import trio


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kemu", description="A Kafka-wire-compatible broker emulator.")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run a broker")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=9092, help="port to listen on; 0 picks a free one")
    serve.add_argument("--advertised-host", default=None,
                       help="host clients are told to connect to (default: the listen address)")
    serve.add_argument("--advertised-port", type=int, default=None,
                       help="port clients are told to connect to (default: the bound port), e.g. a mapped one")
    serve.add_argument("--data-dir", default=None,
                       help="where the broker keeps its data (default: a temporary directory removed on exit)")
    serve.add_argument("--log-level", default="INFO", type=str.upper,
                       choices=["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"])
    serve.add_argument("--node-id", type=int, default=1, help="this broker's node id (default 1)")
    serve.add_argument("--override", action="append", default=[], metavar="NAME=VALUE",
                       help="a Kafka broker setting, as kafka-server-start's --override "
                            "(e.g. group.initial.rebalance.delay.ms=0); may be repeated")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "serve":
        return serve_command(args)
    return 2


def serve_command(args: argparse.Namespace) -> int:
    import logging
    import shutil
    import tempfile

    import trio

    logging.basicConfig(level=args.log_level, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    overrides: dict[str, str] = {}
    for item in args.override:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            print(f"kemu: --override takes NAME=VALUE, got {item!r}", file=sys.stderr)
            return 2
        overrides[name.strip()] = value
    from kemu.broker.broker_configs import apply_properties
    from kemu.broker.config import BrokerConfig
    from kemu.log.config import InvalidConfigError

    try:
        unknown = apply_properties(BrokerConfig(), overrides)  # refuse a bad value before anything starts
    except InvalidConfigError as exc:
        print(f"kemu: {exc}", file=sys.stderr)
        return 2
    for name in unknown:
        logging.getLogger("kemu").warning("The configuration '%s' was supplied but isn't a known config.", name)
    temporary = args.data_dir is None
    data_dir = tempfile.mkdtemp(prefix="kemu-") if temporary else args.data_dir
    try:
        trio.run(_serve, args, data_dir, overrides)
    except BaseExceptionGroup as failed:
        # e.g. the port is taken: say so in one line, as a server should, rather than with a traceback
        cannot_listen, rest = failed.split(OSError)
        if cannot_listen is None or rest is not None:
            raise
        print(f"kemu: {cannot_listen.exceptions[0]}", file=sys.stderr)
        return 1
    finally:
        if temporary:
            shutil.rmtree(data_dir, ignore_errors=True)
    return 0


async def _serve(args: argparse.Namespace, data_dir: str, overrides: dict[str, str]) -> None:
    import logging

    import trio

    from kemu.broker import meta_properties
    from kemu.broker.broker import Broker
    from kemu.broker.broker_configs import apply_properties
    from kemu.broker.config import BrokerConfig
    from kemu.clock import SystemClock
    from kemu.server import serve

    config = BrokerConfig(node_id=args.node_id, host=args.host, port=args.port,
                          advertised_host=args.advertised_host, advertised_port=args.advertised_port,
                          data_dir=data_dir)
    apply_properties(config, overrides)
    cluster_id = meta_properties.load_or_format(data_dir, config.node_id, None)
    logging.getLogger("kemu").info("data directory %s%s, cluster id %s, node id %d", data_dir,
                                   "" if args.data_dir else " (temporary)", cluster_id, config.node_id)
    broker = Broker(config, SystemClock(), cluster_id)
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(_cancel_on_signals, nursery.cancel_scope)
            await nursery.start(serve, broker, args.host, args.port)
            host, port = broker.advertised_endpoint()
            shown = f"[{host}]" if ":" in host else host
            print(f"kemu serving on {shown}:{port}", flush=True)
    finally:
        broker.close()


async def _cancel_on_signals(scope: trio.CancelScope, *, task_status: trio.TaskStatus[None]) -> None:
    import signal

    import trio

    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        task_status.started()
        async for _ in signals:
            scope.cancel()
            return


if __name__ == "__main__":
    sys.exit(main())
