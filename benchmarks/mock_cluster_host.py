"""Host a librdkafka mock cluster in its own process, so other processes can connect to it.

Run as a script: `python mock_cluster_host.py [--brokers N]`. It loads the librdkafka that
confluent-kafka ships (through ctypes: the Python binding exposes neither the mock cluster's handle nor
its topic API), starts a mock cluster, prints `mock cluster bootstrap HOST:PORT[,...]` and then serves
commands read from stdin, one a line:

    create-topic NAME PARTITIONS   ->  `created NAME`  or  `error NAME CODE`

The mock cluster answers no CreateTopics requests (its ApiVersions lists none), and its Metadata names a
controller id (0) that is no broker, so an AdminClient cannot create topics on it; its own C API can.
End of stdin (or SIGTERM) stops it. Nothing of kemu or confluent_kafka is imported, so the process holds
only the interpreter, librdkafka and the mock cluster: that is what its RSS measures.
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import glob
import importlib.util
import os
import sys

RD_KAFKA_PRODUCER = 0
_ERRSTR_SIZE = 512


def find_librdkafka() -> str:
    """The librdkafka bundled in the confluent-kafka wheel (the one the benchmark's clients use)."""
    spec = importlib.util.find_spec("confluent_kafka")
    if spec is not None and spec.origin is not None:
        site = os.path.dirname(os.path.dirname(spec.origin))
        bundled = sorted(glob.glob(os.path.join(site, "confluent_kafka.libs", "librdkafka*.so*")))
        if bundled:
            return bundled[0]
    system = ctypes.util.find_library("rdkafka")
    if system is None:
        raise SystemExit("librdkafka not found: install confluent-kafka")
    return system


def load(path: str) -> ctypes.CDLL:
    lib = ctypes.CDLL(path)
    lib.rd_kafka_conf_new.restype = ctypes.c_void_p
    lib.rd_kafka_conf_new.argtypes = []
    lib.rd_kafka_conf_set.restype = ctypes.c_int
    lib.rd_kafka_conf_set.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                      ctypes.c_size_t]
    lib.rd_kafka_new.restype = ctypes.c_void_p
    lib.rd_kafka_new.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.rd_kafka_destroy.restype = None
    lib.rd_kafka_destroy.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_mock_cluster_new.restype = ctypes.c_void_p
    lib.rd_kafka_mock_cluster_new.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.rd_kafka_mock_cluster_bootstraps.restype = ctypes.c_char_p
    lib.rd_kafka_mock_cluster_bootstraps.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_mock_topic_create.restype = ctypes.c_int
    lib.rd_kafka_mock_topic_create.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
    lib.rd_kafka_mock_cluster_destroy.restype = None
    lib.rd_kafka_mock_cluster_destroy.argtypes = [ctypes.c_void_p]
    return lib


def serve_commands(lib: ctypes.CDLL, cluster: int) -> None:
    for line in sys.stdin:
        words = line.split()
        if len(words) == 3 and words[0] == "create-topic":
            name, partitions = words[1], int(words[2])
            code = lib.rd_kafka_mock_topic_create(cluster, name.encode(), partitions, 1)
            print(f"created {name}" if code == 0 else f"error {name} {code}", flush=True)
        elif words:
            print(f"error unknown-command {words[0]}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description="host a librdkafka mock cluster")
    parser.add_argument("--brokers", type=int, default=1)
    args = parser.parse_args()
    lib = load(find_librdkafka())
    errstr = ctypes.create_string_buffer(_ERRSTR_SIZE)
    conf = lib.rd_kafka_conf_new()
    # Warnings only: the owner's notice that it has no bootstrap.servers is expected, not news.
    lib.rd_kafka_conf_set(conf, b"log_level", b"4", errstr, _ERRSTR_SIZE)
    # The mock cluster needs a client instance to own its threads; this producer never sends anything.
    owner = lib.rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, _ERRSTR_SIZE)
    if not owner:
        raise SystemExit(f"rd_kafka_new failed: {errstr.value.decode(errors='replace')}")
    cluster = lib.rd_kafka_mock_cluster_new(owner, args.brokers)
    if not cluster:
        raise SystemExit("rd_kafka_mock_cluster_new failed")
    print(f"mock cluster bootstrap {lib.rd_kafka_mock_cluster_bootstraps(cluster).decode()}", flush=True)
    try:
        serve_commands(lib, cluster)
    finally:
        lib.rd_kafka_mock_cluster_destroy(cluster)
        lib.rd_kafka_destroy(owner)
    return 0


if __name__ == "__main__":
    sys.exit(main())
