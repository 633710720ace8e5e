"""A stand-in for `kemu serve` that only plays the process contract (banner, SIGTERM, exit code),
so the harness in kemu_process.py can be tested on its own. Not a broker: it accepts connections
and never answers them."""

from __future__ import annotations

import argparse
import signal
import socket
import sys


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["serve"])
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--exit-code-on-sigterm", type=int, default=0)
    parser.add_argument("--die-before-ready", action="store_true")
    parser.add_argument("--never-ready", action="store_true")
    args = parser.parse_args()

    if args.die_before_ready:
        print("fake serve: cannot open the data dir", file=sys.stderr)
        sys.exit(3)
    listener = socket.create_server((args.host, args.port))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(args.exit_code_on_sigterm))
    if not args.never_ready:
        host, port = listener.getsockname()[:2]
        print(f"fake serve: data dir {args.data_dir}")
        print(f"kemu serving on {host}:{port}", flush=True)
    signal.pause()


if __name__ == "__main__":
    main()
