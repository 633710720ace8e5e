"""One fuzzing session: `kemu serve` on a fresh data dir behind the recording proxy, the corpus, the canary
records, then the fuzzer; what the CI test and `python -m compat_tests.fuzz` both run."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from compat_tests.fuzz.corpus import RecordingProxy, drive_clients
from compat_tests.fuzz.server_fuzzer import CANARY, ServerFuzzer, Stats
from compat_tests.kemu_process import KemuServeProcess
from kemu.testing.ports import free_port

CANARY_RECORDS = 200


def fuzz_session(frames: int, *, seed: int = 0, connections: int = 16, deadline_s: float = 1.0,
                 progress: Callable[[Stats], None] | None = None) -> tuple[Stats, int, int]:
    """(the fuzzer's figures, the corpus size, the broker's resident memory at the end in KiB)."""
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
            fuzzer = ServerFuzzer(("127.0.0.1", port), corpus, seed=seed, connections=connections,
                                  deadline_s=deadline_s, canary=canary, alive=server.is_running)
            stats = fuzzer.run(frames, progress)
            return stats, len(corpus), _rss_kib(server.pid)
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
