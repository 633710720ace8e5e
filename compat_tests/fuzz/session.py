"""One fuzzing session: `kemu serve` on a fresh data dir behind the recording proxy, the corpus, the canary
records, then the fuzzer; what the CI test and `python -m compat_tests.fuzz` both run."""

from __future__ import annotations

import random
import tempfile
from collections.abc import Callable
from pathlib import Path

from compat_tests.fuzz.corpus import RecordingProxy, drive_clients
from compat_tests.fuzz.server_fuzzer import CANARY, ServerFuzzer, Stats
from compat_tests.fuzz.structured import StructuredFrames
from compat_tests.kemu_process import KemuServeProcess
from kemu.testing.ports import free_port

CANARY_RECORDS = 200


TRACEBACK = "Traceback (most recent call last)"
# The line before a traceback that only continues the one before it.
CHAINED = ("During handling of the above exception", "The above exception was the direct cause")


def fuzz_session(frames: int, *, seed: int = 0, connections: int = 16, deadline_s: float = 1.0,
                 structured_share: float = 0.5, progress: Callable[[Stats], None] | None = None,
                 seconds: float | None = None) -> tuple[Stats, int, int, str]:
    """(the fuzzer's figures, the corpus size, the broker's resident memory at the end in KiB, its output).

    `structured_share` of the frames come from the specs (structured.py), the rest from the recorded
    clients' requests, replayed, mutated or random."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    proxy = RecordingProxy()
    with tempfile.TemporaryDirectory(prefix="kemu-fuzz-") as data_dir:
        # The banner names the advertised (proxy's) port, so the broker's own is chosen here.
        port = free_port()
        server = KemuServeProcess(Path(data_dir), port=port, extra_args=("--advertised-port", str(proxy.port)))
        server.start()
        try:
            proxy.upstream = ("127.0.0.1", port)
            bootstrap = f"127.0.0.1:{proxy.port}"
            drive_clients(bootstrap)
            corpus = list(proxy.frames)
            admin = AdminClient({"bootstrap.servers": bootstrap})
            for future in admin.create_topics([NewTopic(CANARY, 1, 1)]).values():
                future.result(30)
            producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True})
            canary = [f"canary-{i}".encode() * 3 for i in range(CANARY_RECORDS)]
            for value in canary:
                producer.produce(CANARY, value=value, partition=0)
            assert producer.flush(30) == 0
            frames_from_specs = StructuredFrames(random.Random(seed + 1))
            fuzzer = ServerFuzzer(("127.0.0.1", port), corpus, seed=seed, connections=connections,
                                  deadline_s=deadline_s, canary=canary, alive=server.is_running,
                                  structured=frames_from_specs.next, structured_share=structured_share)
            stats = fuzzer.run(frames, progress, seconds=seconds)
            rss = _rss_kib(server.pid)
            output = server.output()
            stats.tracebacks = count_tracebacks(output)
            return stats, len(corpus), rss, output
        finally:
            proxy.close()
            if server.is_running():
                server.stop_cleanly()


def _rss_kib(pid: int | None) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return -1


def count_tracebacks(output: str) -> int:
    """The failures the broker printed a traceback for: a chained traceback is its first one's."""
    lines = [line for line in output.splitlines() if line.strip()]
    return sum(1 for index, line in enumerate(lines)
               if TRACEBACK in line and not (index and lines[index - 1].startswith(CHAINED)))


def tracebacks_of(output: str, context: int = 30) -> str:
    """The broker output's tracebacks, each with the lines after its first line (at most `context`)."""
    lines = output.splitlines()
    found = [index for index, line in enumerate(lines) if TRACEBACK in line]
    return "\n\n".join("\n".join(lines[max(0, index - 2):index + context]) for index in found)
