"""What `kemu serve` loads to serve: the modules a process has imported once it answered a Metadata and was
stopped. A process with nothing to read the in-process handle serves its core without it; one with a
transcript file (or a control endpoint) runs through it. Handler modules and wire declarations load on
their API's first request, and every API ApiVersions advertises answers that first request."""

from __future__ import annotations

import signal
from pathlib import Path

from kemu.handlers import all_handlers
from tests.server.kafka_socket import KafkaSocket
from tests.server.test_cli import kemu_serve, metadata

# `python -m kemu` as runpy runs it, printing every module the process imported once it exits, and how
# many objects the cyclic collector was told to leave alone.
DRIVER = """
import gc, runpy, sys
sys.argv = ["kemu", *sys.argv[1:]]
try:
    runpy.run_module("kemu", run_name="__main__", alter_sys=True)
finally:
    print("modules: " + " ".join(sorted(sys.modules)), file=sys.stderr)
    print(f"gc: {gc.isenabled()} {gc.get_freeze_count()}", file=sys.stderr)
    checksum = sys.modules.get("kemu.wire.checksum")
    print(f"crc32c: {checksum is not None and 'crc32c' in vars(checksum)}", file=sys.stderr)
"""

HANDLE = {"kemu.testing.broker", "kemu.testing.served", "kemu.testing.faults", "kemu.testing.transcript"}


def served(*args: str) -> tuple[set[str], str]:
    """The modules of a `kemu serve` that answered one Metadata and was stopped by SIGTERM, and its gc line."""
    modules, lines = served_lines(*args)
    return modules, lines["gc"]


def served_lines(*args: str) -> tuple[set[str], dict[str, str]]:
    """The modules of a `kemu serve` that answered one Metadata and was stopped by SIGTERM, and the driver's
    other lines by their label."""
    with kemu_serve(*args, launcher=("-c", DRIVER)) as (process, host, port):
        assert metadata(host, port)["brokers"] == [{"node_id": 1, "host": host, "port": port, "rack": None}]
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
        assert process.stderr is not None
        lines = process.stderr.read().splitlines()
    labelled = dict(line.split(": ", 1) for line in lines
                    if line.startswith(("modules: ", "gc: ", "crc32c: ")))
    return set(labelled.pop("modules").split()), labelled


def served_modules(*args: str) -> set[str]:
    return served(*args)[0]


def test_start_up_objects_are_frozen_out_of_collections_once_serving() -> None:
    # The collector is off while kemu serve starts and back once it serves, with start-up's tens of
    # thousands of long-lived objects set aside (gc.freeze) rather than walked by every full collection.
    _, collector = served()
    enabled, frozen = collector.split()
    assert enabled == "True" and int(frozen) > 10_000


def test_serve_without_observers_never_loads_the_handle_or_unasked_apis() -> None:
    modules = served_modules()
    assert {"kemu.server.listener", "kemu.handlers.k03_metadata", "kemu.wire.apis.k03_metadata"} <= modules
    assert not modules & HANDLE
    # Only Metadata was asked for: no other API's handler module or wire declaration was imported.
    assert {name for name in modules if name.startswith(("kemu.handlers.k", "kemu.wire.apis.k"))} == {
        "kemu.handlers.k03_metadata", "kemu.wire.apis.k03_metadata"}
    # A broker without a partition has no producer state to keep and no log to compact; one not asked to
    # Fetch keeps no fetch sessions, nor topic creation's machinery before a Metadata creates a topic, nor
    # the compression codecs before a compressed batch.
    assert not modules & {"kemu.log.producer_state", "kemu.log.txn_index", "kemu.log.log_cleaner",
                          "kemu.broker.fetch_sessions", "kemu.admin.topics", "kemu.broker.creation", "cramjam"}
    # Nor, with no partition open, the partition log, its segments, indexes and leader epochs or the validator.
    assert not modules & {"kemu.log.partition_log", "kemu.log.segment", "kemu.log.index", "kemu.log.leader_epoch",
                          "kemu.log.validator"}
    # Well-formed requests are decoded and answered by the generated codec: construct, the reference that
    # finds what is wrong with a malformed message, and kemu's structures built on it are not loaded.
    assert not modules & {"construct", "kemu.wire.primitives", "kemu.wire.structs", "kemu.wire.headers"}
    # A PLAINTEXT listener needs no SASL mechanism, JAAS parser, certificate principal mapper or TLS context.
    assert not modules & {"kemu.security.mechanisms", "kemu.security.jaas", "kemu.security.principal",
                          "kemu.server.tls"}
    # A broker whose authorizer.class.name is empty (Kafka's default) has no authorizer nor ACL store.
    assert not modules & {"kemu.authorizer.standard", "kemu.authorizer.store"}
    # Binding an ASCII listen address needs no idna codec (kemu.server.listener._ascii).
    assert not modules & {"encodings.idna", "stringprep"}


def test_serve_reads_no_json_lists_no_packages_and_loads_no_crc32c() -> None:
    # A new data directory has no topics, dynamic configs, feature levels or credentials to read, and nothing
    # is written as JSON before a topic is created; the handler and declaration modules are listed from
    # their folders, without pkgutil; no record batch was checked, so the CRC-32C extension is not loaded.
    modules, lines = served_lines()
    assert not modules & {"json", "pkgutil"}
    assert lines["crc32c"] == "False"


def test_serve_with_a_transcript_file_runs_through_the_handle(tmp_path: Path) -> None:
    modules = served_modules("--transcript", str(tmp_path / "transcript.jsonl"))
    assert HANDLE <= modules
    assert (tmp_path / "transcript.jsonl").read_text().count("\n") == 1  # the Metadata exchange


# Bodies the schema defaults would not do: an acks=0 Produce gets no response, and a DescribeAcls filter of
# resource type UNKNOWN is refused by closing the connection (both as Kafka does).
BODIES: dict[int, dict[str, object]] = {
    0: {"acks": -1, "timeout_ms": 1000},
    29: {"resource_type_filter": 1, "pattern_type_filter": 1, "operation": 1, "permission_type": 1},
}


def test_every_advertised_api_answers_its_first_request_after_a_lazy_start() -> None:
    # A fresh process: no handler module or wire declaration is loaded before its API's first request. With the
    # client telemetry receiver, which the telemetry APIs are advertised with only.
    with kemu_serve("--override", "kemu.client.telemetry.enable=true") as (process, host, port):
        with KafkaSocket((host, port)) as conn:
            advertised = conn.request(18, 4, {"client_software_name": "kemu-tests",
                                              "client_software_version": "1"})["api_keys"]
        assert len(advertised) == len(all_handlers())
        for entry in advertised:
            key = entry["api_key"]
            # The lowest version served: Produce is advertised from v0 but served from v3 (KAFKA-18659).
            for version in sorted({all_handlers()[key].min_version, entry["max_version"]}):
                with KafkaSocket((host, port)) as conn:  # its own connection: the first of its kind
                    assert isinstance(conn.request(key, version, BODIES.get(key, {})), dict), (key, version)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
        assert process.stderr is not None
        logged = process.stderr.read()
    assert " failed" not in logged and "Traceback" not in logged, logged
