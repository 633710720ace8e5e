"""`kemu serve`: run a broker until Ctrl-C or SIGTERM.

Once it accepts connections it prints exactly one line to stdout, `kemu serving on HOST:PORT` (the
advertised bootstrap address; with --port 0 the real bound port; with --brokers N, every broker's,
comma-separated), which scripts and test harnesses wait
for; with `--control-port` a second one follows, `kemu control on HOST:PORT`, once the control endpoint
(kemu.testing.control) answers too. Imports are deferred into the command so `--help` and start-up stay
quick.

`kemu inspect` prints a running `kemu serve --control-port`'s inspection: tables, or JSON with --json.
"""

from __future__ import annotations

import argparse
import gc
import os
import signal
import sys
from collections.abc import Sequence
from types import FrameType

from kemu import __version__


def port_number(text: str) -> int:
    """A TCP port, 0 (pick a free one) to 65535: argparse names the flag and the value when it is not."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (0-65535)") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port number (0-65535)")
    return port


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kemu", description="A Kafka-wire-compatible broker emulator.")
    parser.add_argument("--version", action="version", version=f"kemu {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run a broker")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=port_number, default=9092, help="port to listen on; 0 picks a free one")
    serve.add_argument("--advertised-host", default=None,
                       help="host clients are told to connect to (default: the listen address)")
    serve.add_argument("--advertised-port", type=port_number, default=None,
                       help="port clients are told to connect to (default: the bound port), e.g. a mapped one")
    serve.add_argument("--data-dir", default=None,
                       help="where the broker keeps its data (default: a temporary directory removed on exit)")
    serve.add_argument("--log-level", default="INFO", type=str.upper,
                       choices=["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"])
    serve.add_argument("--node-id", type=int, default=1, help="this broker's node id (default 1)")
    serve.add_argument("--brokers", type=int, default=1, metavar="N",
                       help="emulate a cluster of N brokers over one core: node ids --node-id upwards, each "
                            "listening on the port after the previous one's (or a free one with --port 0)")
    serve.add_argument("--rack", action="append", default=[], metavar="RACK",
                       help="broker.rack of the next broker(s), comma-separated or repeated: one per broker, "
                            "or one for all")
    serve.add_argument("--override", action="append", default=[], metavar="NAME=VALUE",
                       help="a Kafka broker setting, as kafka-server-start's --override "
                            "(e.g. group.initial.rebalance.delay.ms=0); may be repeated")
    serve.add_argument("--control-port", type=port_number, default=None, metavar="PORT",
                       help="also serve the control endpoint (HTTP/JSON: clock, faults, inspect, restart, "
                            "topics, records) on the listen host at PORT; 0 picks a free one (default: off)")
    serve.add_argument("--transcript", default=None, metavar="FILE",
                       help="append every request and response the broker serves to FILE, one JSON line each "
                            "(a restart on the same FILE adds to it; each run's seq starts at 1)")
    inspect = commands.add_parser("inspect", help="show a running broker's state, from its control endpoint")
    inspect.add_argument("--control", default=None, metavar="HOST:PORT",
                         help="the control endpoint of a `kemu serve --control-port` "
                              "(default: $KEMU_CONTROL, else 127.0.0.1:9080)")
    inspect.add_argument("--json", action="store_true", help="print the inspection as JSON instead of tables")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # Until Trio's signal receiver takes over, SIGTERM would kill the process with 143, and Ctrl-C end it in a
    # traceback; either is a stop asked for, which exits 0 as it does once serving.
    signal.signal(signal.SIGTERM, _terminate_early)
    try:
        return _main(argv)
    except (_Terminated, KeyboardInterrupt):
        return 0


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        # Said by the command's own parser, so the usage shown is `kemu serve`'s, not the top level's.
        command_parser(parser, args.command).error(f"unrecognized arguments: {' '.join(unknown)}")
    if args.command == "serve":
        return serve_command(args)
    if args.command == "inspect":
        return inspect_command(args)
    return 2


def command_parser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen: argparse.ArgumentParser = action.choices[command]
            return chosen
    return parser


class _Terminated(BaseException):
    """SIGTERM before the broker's own signal handling is in place: a stop asked for, not a failure."""


def _terminate_early(signum: int, frame: FrameType | None) -> None:
    raise _Terminated()


def serve_command(args: argparse.Namespace) -> int:
    # Start-up makes ~50,000 objects the cyclic collector tracks (functions, classes, module dicts), nearly
    # all kept for the process's life: collecting every 700 allocations only walks them again and again
    # (~6 ms of the start). It comes back once the broker serves, with start-up's objects frozen out of
    # its walks for good (the ~2,000 garbage objects among them, classes replaced by their slotted copies,
    # cost ~0.7 MB of memory; a full collection to free them would cost ~13 ms).
    gc.disable()
    try:
        return _serve_command(args)
    finally:
        gc.enable()


def _serving() -> None:
    gc.freeze()  # start-up's objects, out of every later collection's walk
    gc.enable()


def _serve_command(args: argparse.Namespace) -> int:
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
    if args.brokers < 1:
        print("kemu: --brokers takes a number of brokers, at least 1", file=sys.stderr)
        return 2
    racks = [rack.strip() for given in args.rack for rack in given.split(",")]
    if len(racks) not in (0, 1, args.brokers):
        print(f"kemu: --rack names {len(racks)} racks for {args.brokers} brokers: give one, or one per broker",
              file=sys.stderr)
        return 2
    args.rack = racks
    refused = _unusable_paths(args)
    if refused is not None:
        print(f"kemu: {refused}", file=sys.stderr)
        return 2
    from kemu.broker.dir_lock import DataDirLocked

    temporary = args.data_dir is None
    data_dir = tempfile.mkdtemp(prefix="kemu-") if temporary else args.data_dir
    try:
        trio.run(_serve, args, data_dir, overrides)
    except (OSError, DataDirLocked) as failed:
        print(f"kemu: {failed}", file=sys.stderr)
        return 1
    except BaseExceptionGroup as failed:
        # e.g. the port is taken: say so in one line, as a server should, rather than with a traceback
        cannot_start, rest = failed.split((OSError, DataDirLocked))
        if cannot_start is None or rest is not None:
            raise
        print(f"kemu: {_first_leaf(cannot_start)}", file=sys.stderr)
        return 1
    finally:
        if temporary:
            shutil.rmtree(data_dir, ignore_errors=True)
    return 0


def _unusable_paths(args: argparse.Namespace) -> str | None:
    """Why --data-dir or --transcript cannot be used, naming the flag and the value; None when both can."""
    if args.data_dir is not None:
        if os.path.exists(args.data_dir) and not os.path.isdir(args.data_dir):
            return f"--data-dir {args.data_dir}: not a directory"
        try:
            os.makedirs(args.data_dir, exist_ok=True)
        except OSError as exc:
            return f"--data-dir {args.data_dir}: cannot create it ({exc.strerror or exc})"
        if not os.access(args.data_dir, os.W_OK | os.X_OK):
            return f"--data-dir {args.data_dir}: not writable"
    if args.transcript is not None:
        if os.path.isdir(args.transcript):
            return f"--transcript {args.transcript}: is a directory"
        try:
            with open(args.transcript, "a", encoding="utf-8"):
                pass
        except OSError as exc:
            return f"--transcript {args.transcript}: cannot write it ({exc.strerror or exc})"
    return None


def _first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    first = group.exceptions[0]
    return _first_leaf(first) if isinstance(first, BaseExceptionGroup) else first


async def _serve(args: argparse.Namespace, data_dir: str, overrides: dict[str, str]) -> None:
    # The process runs through the in-process handle (kemu.testing), so everything the control endpoint
    # offers — a clock to advance, restart in-process, faults — is the handle's own.
    from kemu.testing.serving import ServeOptions, serve_until_signalled

    options = ServeOptions(host=args.host, port=args.port, data_dir=data_dir, settings=overrides,
                           advertised_host=args.advertised_host, advertised_port=args.advertised_port,
                           node_id=args.node_id, brokers=args.brokers,
                           racks=tuple(args.rack) * (args.brokers if len(args.rack) == 1 else 1),
                           control_port=args.control_port,
                           temporary_data_dir=args.data_dir is None, transcript_file=args.transcript is not None)
    if args.transcript is None:
        await serve_until_signalled(options, on_serving=_serving)
        return
    from kemu.testing.transcript import JsonLinesFile

    transcript = JsonLinesFile(args.transcript)
    try:
        await serve_until_signalled(options, on_ready=lambda broker: transcript.attach(broker.transcript, broker.call),
                                    on_serving=_serving)
    finally:
        transcript.close()


def inspect_command(args: argparse.Namespace) -> int:
    import json
    import os
    import urllib.error
    import urllib.request

    address = args.control or os.environ.get("KEMU_CONTROL") or "127.0.0.1:9080"
    base = address if "://" in address else f"http://{address}"
    url = f"{base.rstrip('/')}/inspect" + ("" if args.json else "/text")
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            body = response.read().decode()
    except urllib.error.HTTPError as refused:
        print(f"kemu: {url}: {refused.code} {refused.read().decode(errors='replace')}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"kemu: cannot reach the control endpoint at {base} ({exc}); "
              "is `kemu serve --control-port` running?", file=sys.stderr)
        return 1
    if args.json:
        body = json.dumps(json.loads(body), indent=2)
    print(body.rstrip("\n"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
