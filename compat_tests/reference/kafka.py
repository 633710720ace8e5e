"""Apache Kafka itself, started as the reference broker: single-node (or three-node) KRaft, broker and
controller in each process, on free loopback ports, in a folder of its own that is removed at the end.

The jars are the `kafka-4.3` set of compat_tests/maven (compat_tests/jars.py resolves it); `java` is the one on
PATH, or `$KEMU_REFERENCE_JAVA`. Each node gets a `server.properties` written here from the settings a
development single-node Kafka is run with: Kafka's shipped KRaft `server.properties` (internal topics with one
replica, no initial rebalance delay), plus `REFERENCE_SETTINGS` below and the caller's overrides. The storage is
formatted with a fresh cluster id; the broker is ready when every node answers ApiVersions and Metadata lists
all of them. `restart` stops the nodes (gracefully, or killed) and starts them again on the same ports and log dirs.

With `sasl` (a `SaslListener`), each node also has a SASL_PLAINTEXT client listener (`sasl_addresses`) with those
mechanisms, a JAAS entry each (PLAIN's with the listener's users); the PLAINTEXT listener stays the inter-broker
one. An authorizer is a setting like any other (`authorizer.class.name`, `super.users`).
"""

from __future__ import annotations

import base64
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from kemu.testing.ports import distinct_free_ports
from kemu.wire import codec
from tests.server.kafka_socket import KafkaSocket

KAFKA_JAR_SET = "kafka-4.3"
JAVA_ENV_VAR = "KEMU_REFERENCE_JAVA"
START_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 30.0
FORMAT_TIMEOUT_S = 60.0
HOST = "127.0.0.1"
METADATA_KEY, METADATA_VERSION = 3, 12
API_VERSIONS_KEY = 18

# Kafka's shipped config/server.properties for a KRaft node, as far as it differs from the broker's defaults
# (and what a one-node cluster cannot do without: internal topics with one replica).
SHIPPED_SETTINGS: dict[str, str] = {
    "num.partitions": "1",
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
    "group.initial.rebalance.delay.ms": "0",
}
# What the reference needs beyond that to share a 2-core machine with the tests: few threads.
REFERENCE_SETTINGS: dict[str, str] = {
    "num.network.threads": "2",
    "num.io.threads": "2",
    "num.recovery.threads.per.data.dir": "1",
    "background.threads": "2",
    "log.cleaner.threads": "1",
}
# A small heap, the serial collector and C1 alone: a test broker that starts in ~2 s and holds ~350 MB.
QUICK_JVM_OPTIONS = ("-Xms128m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                     "-XX:MaxMetaspaceSize=256m", "-Djava.awt.headless=true")
LOG4J2 = """\
status = warn
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = {level}
rootLogger.appenderRef.file.ref = FILE
logger.kafka.name = kafka
logger.kafka.level = {level}
logger.kafka.additivity = false
logger.kafka.appenderRef.file.ref = FILE
"""


class ReferenceKafkaError(RuntimeError):
    """The reference Kafka did not format, start or stop; the message carries the tail of its log."""


def random_cluster_id() -> str:
    """A cluster id as Kafka's `Uuid.randomUuid().toString()` makes one: 16 random bytes, URL-safe base64,
    unpadded, never starting with '-' (Kafka draws again when it would)."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode("ascii")
        if not text.startswith("-"):
            return text


def find_java() -> str | None:
    configured = os.environ.get(JAVA_ENV_VAR)
    return configured if configured else shutil.which("java")


SASL_LISTENER = "SASL_PLAINTEXT"
_JAAS_MODULES = {"PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
                 "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
                 "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
                 # The broker logs in with an unsecured token of its own (the login module needs a subject);
                 # clients' tokens are checked by the unsecured validator, the broker's default.
                 "OAUTHBEARER": 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required '
                                'unsecuredLoginStringClaim_sub="broker"'}


@dataclass(frozen=True)
class SaslListener:
    """A SASL_PLAINTEXT client listener: its mechanisms (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER with
    unsecured tokens), PLAIN's users
    and passwords (SCRAM users are made with AlterUserScramCredentials), and any listener settings of its own
    (`connections.max.reauth.ms`, ...; given without the `listener.name.` prefix)."""

    mechanisms: Sequence[str] = ("PLAIN",)
    plain_users: Mapping[str, str] = field(default_factory=dict)
    listener_settings: Mapping[str, str] = field(default_factory=dict)

    def settings(self) -> dict[str, str]:
        prefix = f"listener.name.{SASL_LISTENER.lower()}."
        found = {"sasl.enabled.mechanisms": ",".join(self.mechanisms)}
        for mechanism in self.mechanisms:
            options = "".join(f' user_{user}="{password}"' for user, password in self.plain_users.items()
                              if mechanism == "PLAIN")
            module = _JAAS_MODULES[mechanism]
            module = module if " required" in module else f"{module} required"
            found[f"{prefix}{mechanism.lower()}.sasl.jaas.config"] = f"{module}{options};"
        found.update({f"{prefix}{name}": value for name, value in self.listener_settings.items()})
        return found


@dataclass
class Node:
    node_id: int
    port: int
    controller_port: int
    directory: Path
    process: subprocess.Popen[bytes] | None = None
    sasl_port: int | None = None

    @property
    def log(self) -> Path:
        return self.directory / "kafka.log"

    @property
    def properties(self) -> Path:
        return self.directory / "server.properties"

    def log_tail(self, lines: int = 60) -> str:
        texts = []
        for path in (self.log, self.directory / "stdout.log"):
            if path.is_file():
                texts.append(f"--- {path} ---\n" + "\n".join(path.read_text(errors="replace").splitlines()[-lines:]))
        return "\n".join(texts)


@dataclass
class ReferenceKafka:
    """A KRaft cluster of `nodes` Kafka processes (1 or 3); `with ReferenceKafka(...) as kafka:` or start/stop.

    `bootstrap` is `127.0.0.1:PORT` of the first node. `settings` override the generated server.properties on
    every node, `node_settings` (by node id) on one (a rack each); `features` are the feature levels the storage
    is formatted with (kafka-storage format --feature, e.g. {"transaction.version": 1}), Kafka 4.3's defaults for
    the rest; `jvm_options` replace the quick-start ones (a benchmark wants C2 and a bigger heap)."""

    classpath: str
    java: str = "java"
    nodes: int = 1
    settings: Mapping[str, str] = field(default_factory=dict)
    node_settings: Mapping[int, Mapping[str, str]] = field(default_factory=dict)
    jvm_options: Sequence[str] = QUICK_JVM_OPTIONS
    work_dir: Path | None = None
    log_level: str = "INFO"
    cluster_id: str = field(default_factory=random_cluster_id)
    sasl: SaslListener | None = None
    features: Mapping[str, int] = field(default_factory=dict)
    _nodes: list[Node] = field(default_factory=list, init=False)
    _owned_dir: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        if self.nodes not in (1, 3):
            raise ValueError("a reference Kafka has 1 or 3 nodes")

    @property
    def bootstrap(self) -> str:
        return f"{HOST}:{self._require_nodes()[0].port}"

    @property
    def addresses(self) -> list[tuple[str, int]]:
        return [(HOST, node.port) for node in self._require_nodes()]

    @property
    def sasl_addresses(self) -> list[tuple[str, int]]:
        """Each node's SASL_PLAINTEXT listener (with `sasl` only)."""
        return [(HOST, node.sasl_port) for node in self._require_nodes() if node.sasl_port is not None]

    @property
    def node_ids(self) -> list[int]:
        return [node.node_id for node in self._require_nodes()]

    def pids(self) -> list[int]:
        return [node.process.pid for node in self._nodes if node.process is not None]

    def __enter__(self) -> ReferenceKafka:
        self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()

    # --- set-up -------------------------------------------------------------------------------------------

    def server_properties(self, node: Node) -> dict[str, str]:
        voters = ",".join(f"{other.node_id}@{HOST}:{other.controller_port}" for other in self._nodes)
        replicas = "1" if self.nodes == 1 else "3"
        listeners = f"PLAINTEXT://{HOST}:{node.port}"
        protocols = "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"
        sasl: dict[str, str] = {}
        if self.sasl is not None:
            listeners += f",{SASL_LISTENER}://{HOST}:{node.sasl_port}"
            protocols += f",{SASL_LISTENER}:{SASL_LISTENER}"
            sasl = self.sasl.settings()
        return {
            "process.roles": "broker,controller",
            "node.id": str(node.node_id),
            "controller.quorum.voters": voters,
            "listeners": f"{listeners},CONTROLLER://{HOST}:{node.controller_port}",
            "advertised.listeners": listeners,
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": protocols,
            **sasl,
            "log.dirs": str(node.directory / "data"),
            **SHIPPED_SETTINGS,
            "offsets.topic.replication.factor": replicas,
            "transaction.state.log.replication.factor": replicas,
            "share.coordinator.state.topic.replication.factor": replicas,
            **REFERENCE_SETTINGS,
            **self.settings,
            **self.node_settings.get(node.node_id, {}),
        }

    def _layout(self) -> None:
        if self.work_dir is None:
            self.work_dir = Path(tempfile.mkdtemp(prefix="kemu-reference-kafka-"))
            self._owned_dir = True
        ports = distinct_free_ports(self.nodes * 3)
        self._nodes = [Node(node_id=index + 1, port=ports[3 * index], controller_port=ports[3 * index + 1],
                            directory=self.work_dir / f"node-{index + 1}",
                            sasl_port=None if self.sasl is None else ports[3 * index + 2])
                       for index in range(self.nodes)]
        for node in self._nodes:
            node.directory.mkdir(parents=True, exist_ok=True)
            properties = self.server_properties(node)
            node.properties.write_text("".join(f"{key}={value}\n" for key, value in properties.items()))
            (node.directory / "log4j2.properties").write_text(LOG4J2.format(log=node.log, level=self.log_level))

    def _java(self, node: Node, main: str, *args: str, options: Sequence[str]) -> list[str]:
        return [self.java, *options, f"-Dlog4j2.configurationFile={node.directory / 'log4j2.properties'}",
                "-cp", self.classpath, main, *args]

    def _format(self, node: Node) -> None:
        argv = self._java(node, "kafka.tools.StorageTool", "format", "--cluster-id", self.cluster_id,
                          "--config", str(node.properties), "--ignore-formatted",
                          *(arg for name, level in self.features.items() for arg in ("--feature", f"{name}={level}")),
                          options=("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m"))
        completed = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                   timeout=FORMAT_TIMEOUT_S, check=False)
        if completed.returncode != 0:
            raise ReferenceKafkaError(f"formatting node {node.node_id} failed ({completed.returncode}):\n"
                                      f"{completed.stdout}\n{completed.stderr}")

    # --- life ---------------------------------------------------------------------------------------------

    def prepare(self) -> list[list[str]]:
        """Lay out and format every node without starting one; the argv that starts each node. For a caller
        that runs the processes itself (benchmarks/ times spawn to first answer); stop() removes the folder."""
        if any(node.process is not None for node in self._nodes):
            raise RuntimeError("the reference Kafka is already running")
        self._layout()
        for node in self._nodes:
            self._format(node)
        return [self._java(node, "kafka.Kafka", str(node.properties), options=self.jvm_options)
                for node in self._nodes]

    def start(self, timeout: float = START_TIMEOUT_S) -> None:
        self._run(self.prepare(), timeout)  # prepare() first: it lays out self._nodes

    def restart(self, *, kill: bool = False, timeout: float = START_TIMEOUT_S,
                stop_timeout: float = STOP_TIMEOUT_S) -> None:
        """Stop every node and start it again in place: the same ports, server.properties and log dirs, the
        storage not formatted again. SIGTERM (Kafka's controlled shutdown; a node still running after
        `stop_timeout` is an error), or with `kill` SIGKILL to each node's process group: a crash."""
        nodes = self._require_nodes()
        if not self._halt(kill, stop_timeout):
            self.stop()
            raise ReferenceKafkaError(f"a Kafka node outlived SIGTERM for {stop_timeout:.0f}s and was killed")
        self._run([self._java(node, "kafka.Kafka", str(node.properties), options=self.jvm_options)
                   for node in nodes], timeout, again=True)

    def _run(self, commands: list[list[str]], timeout: float, again: bool = False) -> None:
        for node, argv in zip(self._nodes, commands, strict=True):
            stdout = (node.directory / "stdout.log").open("ab" if again else "wb")
            node.process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=stdout, stderr=subprocess.STDOUT,
                                            start_new_session=True)
            stdout.close()
        try:
            self.wait_ready(timeout)
        except BaseException:
            self.stop()
            raise

    def wait_ready(self, timeout: float = START_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout
        pending = list(self._nodes)
        last_error = ""
        while pending:
            node = pending[0]
            assert node.process is not None
            if node.process.poll() is not None:
                raise ReferenceKafkaError(f"Kafka node {node.node_id} exited with {node.process.returncode}\n"
                                          + node.log_tail())
            try:
                brokers = metadata_brokers((HOST, node.port))
                if len(brokers) == self.nodes:
                    pending.pop(0)
                    continue
                last_error = f"Metadata lists brokers {sorted(brokers)}"
            except (OSError, ValueError, codec.DecodeError) as exc:
                last_error = f"{type(exc).__name__}: {exc}"
            if time.monotonic() > deadline:
                raise ReferenceKafkaError(f"Kafka node {node.node_id} not ready after {timeout:.0f}s "
                                          f"({last_error})\n" + node.log_tail())
            time.sleep(0.1)

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> None:
        """SIGTERM every node (Kafka's controlled shutdown), SIGKILL those that outlive `timeout`, and remove
        the folder this made."""
        self._halt(False, timeout)
        if self._owned_dir and self.work_dir is not None:
            shutil.rmtree(self.work_dir, ignore_errors=True)
            self.work_dir = None
            self._owned_dir = False

    def _halt(self, kill: bool, timeout: float) -> bool:
        """SIGTERM every node's process (SIGKILL to its process group with `kill`) and wait for it to exit,
        SIGKILL for those that outlive `timeout`; whether none had to be killed after the SIGTERM."""
        for node in self._nodes:
            if node.process is not None and node.process.poll() is None:
                if kill:
                    os.killpg(node.process.pid, signal.SIGKILL)
                else:
                    node.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        in_time = True
        for node in self._nodes:
            if node.process is None:
                continue
            try:
                node.process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                in_time = False
                os.killpg(node.process.pid, signal.SIGKILL)
                node.process.wait()
            node.process = None
        return in_time

    def is_running(self) -> bool:
        return bool(self._nodes) and all(node.process is not None and node.process.poll() is None
                                         for node in self._nodes)

    def log_tail(self, lines: int = 60) -> str:
        return "\n".join(node.log_tail(lines) for node in self._nodes)

    def _require_nodes(self) -> list[Node]:
        if not self._nodes:
            raise RuntimeError("the reference Kafka was never started")
        return self._nodes


def metadata_brokers(address: tuple[str, int]) -> set[int]:
    """The node ids a Metadata request (no topics) lists: a node is ready once it knows its whole cluster."""
    with KafkaSocket(address, client_id="kemu-reference") as connection:
        connection.sock.settimeout(5.0)
        answer = connection.request(METADATA_KEY, METADATA_VERSION,
                                    {"topics": [], "allow_auto_topic_creation": False,
                                     "include_topic_authorized_operations": False})
    return {broker["node_id"] for broker in answer["brokers"]}
