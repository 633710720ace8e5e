"""`python -m compat_tests.conformance record [--bootstrap HOST:PORT] [--authorizer-bootstrap HOST:PORT]`
refreshes the corpus from Kafka (by default starting the reference Kafka, and the one with an authorizer for
the `authorizer` scripts, and a three-node one for the `cluster` scripts); `python -m compat_tests.conformance
replay --bootstrap HOST:PORT [--group G]`
replays it against any broker, prints each difference, and as its last line
`N exchanges, M identical, K known differences, F different`, exiting 1 when F > 0.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from compat_tests.conformance import corpus
from compat_tests.conformance.record import record
from compat_tests.conformance.replay import replay


def _address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    return host or "127.0.0.1", int(port)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m compat_tests.conformance")
    commands = parser.add_subparsers(dest="command", required=True)
    rec = commands.add_parser("record", help="refresh the corpus from Kafka")
    rec.add_argument("--bootstrap", help="a running Kafka 4.3 with the shipped development settings")
    rec.add_argument("--authorizer-bootstrap",
                     help="a running Kafka 4.3 with the authorizer settings (conformance.authorizer)")
    rec.add_argument("--cluster-bootstrap", help="a running three-node Kafka 4.3 (conformance.cluster)")
    rec.add_argument("--tokens-bootstrap", help="the SASL_PLAINTEXT listener of a running Kafka 4.3 with "
                     "conformance.brokers.TOKENS_SETTINGS and its TOKEN_USERS (conformance.tokens)")
    rec.add_argument("--only", help="record only the scripts whose name starts so (the rest kept as they are)")
    rep = commands.add_parser("replay", help="replay the corpus against a broker")
    rep.add_argument("--bootstrap", required=True)
    rep.add_argument("--group", default="default", choices=("default", "authorizer", "cluster", "tokens"),
                     help="which scripts: those of the shipped settings, of the authorizer settings, of three nodes, "
                          "or of delegation tokens (--bootstrap their SASL_PLAINTEXT listener)")
    rep.add_argument("--verbose", action="store_true", help="also print the known differences, by reason")
    rep.add_argument("--corpus", type=Path, default=corpus.CORPUS_DIR, help="the corpus folder (default: the repo's)")
    args = parser.parse_args(argv)
    if args.command == "record":
        for path in record(args.bootstrap and _address(args.bootstrap),
                           args.authorizer_bootstrap and _address(args.authorizer_bootstrap),
                           args.cluster_bootstrap and _address(args.cluster_bootstrap),
                           args.tokens_bootstrap and _address(args.tokens_bootstrap), only=args.only):
            print(f"wrote {path}")
        return 0
    scripts = [script for script in corpus.load(args.corpus) if script.group == args.group]
    tally = replay(scripts, _address(args.bootstrap), echo=print)
    if args.verbose:
        for reason, seen in tally.known_seen.items():
            print(f"KNOWN ({len(seen)}) {reason}\n  " + "\n  ".join(seen[:5]))
    for line in tally.stale:
        print(f"STALE {line}")
    print(tally.summary())
    return 1 if tally.different else 0


if __name__ == "__main__":
    sys.exit(main())
