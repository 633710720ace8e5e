"""`python -m compat_tests.reference [--nodes 3] [--override KEY=VALUE ...]`: a reference Kafka for people.

Resolves the Kafka jars (Maven, cached), formats and starts a KRaft cluster on free loopback ports, prints
`reference kafka serving on 127.0.0.1:PORT` (and every node's address), and runs until Ctrl-C or SIGTERM,
then stops it and removes its folder (unless --dir named one).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

from compat_tests import jars
from compat_tests.reference.kafka import KAFKA_JAR_SET, ReferenceKafka, ReferenceKafkaError, find_java


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m compat_tests.reference", description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, choices=(1, 3), default=1)
    parser.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                        help="a server.properties setting for every node (repeatable)")
    parser.add_argument("--dir", type=Path, help="keep the nodes' data and logs here instead of a temporary folder")
    args = parser.parse_args(argv)
    settings = {}
    for item in args.override:
        key, sep, value = item.partition("=")
        if not sep:
            parser.error(f"--override {item!r}: expected KEY=VALUE")
        settings[key] = value
    java = find_java()
    if java is None:
        print("no java on PATH (or $KEMU_REFERENCE_JAVA)", file=sys.stderr)
        return 1
    try:
        classpath = ":".join(str(jar) for jar in jars.resolve(KAFKA_JAR_SET))
    except jars.ResolveFailed as exc:
        print(f"the Kafka jars could not be resolved: {exc}", file=sys.stderr)
        return 1
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    kafka = ReferenceKafka(classpath=classpath, java=java, nodes=args.nodes, settings=settings, work_dir=args.dir)
    try:
        kafka.start()
    except ReferenceKafkaError as exc:
        print(exc, file=sys.stderr)
        return 1
    try:
        print(f"reference kafka serving on {kafka.bootstrap}", flush=True)
        for node_id, (host, port) in zip(kafka.node_ids, kafka.addresses, strict=True):
            print(f"  node {node_id}: {host}:{port} (cluster {kafka.cluster_id})", flush=True)
        while not stop.wait(0.5):
            if not kafka.is_running():
                print("a Kafka node exited\n" + kafka.log_tail(), file=sys.stderr)
                return 1
    except KeyboardInterrupt:
        pass
    finally:
        kafka.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
