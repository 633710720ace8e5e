"""`KemuContainer`: kemu's docker image for testcontainers, a drop-in for its `KafkaContainer`.

    from kemu.testcontainers import KemuContainer

    with KemuContainer() as kafka:  # image: $KEMU_IMAGE, else kemu:local (docker/build-image)
        bootstrap = kafka.get_bootstrap_server()

Needs the `testcontainers` package (`pip install 'kemu[testcontainers]'`).

As KafkaContainer does, the container port (9092) is published on a host port docker picks, and
the broker advertises the address a client on the test's side reaches it by: the host and mapped
port testcontainers reports. That port is known only once the container runs, so the entrypoint
waits for it: the container starts with KEMU_ADVERTISED_LISTENERS_FILE set, `start()` writes the
listener into that file, and `kemu serve` starts then. (Publishing a free host port under the same
number inside the container would need no waiting, but the port could be taken between picking
and binding it.) The container counts as started once the broker answers a Kafka ApiVersions
request. Setting KAFKA_ADVERTISED_LISTENERS yourself (`with_env`) skips the waiting.

`with_sasl_ssl(certificate_chain, private_key, users)` adds a SASL_SSL listener (container port 9094,
published the same way) with those PEM credentials, SCRAM-SHA-512/256 and PLAIN for `users`;
`get_bootstrap_server("SASL_SSL")` is its address.

The container also serves kemu's control endpoint (KEMU_CONTROL_PORT, container port 9080, published
like the broker's): `kafka.control()` is a small client of it, for what a Python test does through
`kemu.testing.Broker` — `control.advance(61)`, `control.add_fault({...})`, `control.inspect()`,
`control.restart()` — against the container. `KemuContainer(control_port=None)` leaves it off.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from datetime import timedelta
from typing import Any, Protocol, Self
from urllib.parse import quote, urlencode

from testcontainers.core.container import DockerContainer
from testcontainers.core.exceptions import ContainerStartException
from testcontainers.core.waiting_utils import WaitStrategy, WaitStrategyTarget

from kemu.probe import api_versions_round_trip

DEFAULT_IMAGE = "kemu:local"
KAFKA_PORT = 9092
SASL_SSL_PORT = 9094
ADVERTISED_LISTENERS_FILE = "/tmp/kemu-advertised-listeners"
STARTUP_TIMEOUT_S = 60.0
# Not a Kafka port, so no KafkaContainer-style `port=` collides with it.
CONTROL_PORT = 9080
CONTROL_TIMEOUT_S = 60.0


class KafkaApiVersionsWaitStrategy(WaitStrategy):
    """Ready once the broker in the container answers ApiVersions: a Kafka round trip, not an open
    port (docker's port proxy accepts connections before anything listens behind it) — and, when the
    container serves one, once the control endpoint answers too (it starts just after the broker)."""

    def __init__(self, port: int, control_port: int | None = None) -> None:
        super().__init__()
        self.port = port
        # The control endpoint starts just after the broker answers: a test that asks it at once must
        # find it up, so with one the container is ready once it answers too.
        self.control_port = control_port
        # The broker is up ~0.2 s after the container starts, and every poll interval is added to start():
        # probe often, but ask the engine whether the container died only now and then (an API round trip).
        self._poll_interval = 0.02
        self._status_interval = 0.25

    def with_startup_timeout(self, timeout: float | timedelta) -> Self:
        """WaitStrategy's own, taking fractional seconds too: it is annotated `int | timedelta` but stores
        `float(timeout)`, which is what this does for a number."""
        if isinstance(timeout, timedelta):
            return super().with_startup_timeout(timeout)
        self._startup_timeout = float(timeout)
        return self

    def wait_until_ready(self, container: WaitStrategyTarget) -> None:
        deadline = time.monotonic() + self._startup_timeout
        host = container.get_container_host_ip()
        port = container.get_exposed_port(self.port)
        status_due = 0.0
        while True:
            if time.monotonic() >= status_due:
                container.reload()
                if container.status in {"exited", "dead"}:
                    raise ContainerStartException(
                        f"kemu container {container.status} before it answered ApiVersions:\n{_logs(container)}"
                    )
                status_due = time.monotonic() + self._status_interval
            try:
                api_versions_round_trip(host, port, client_id="kemu-testcontainers")
                if self.control_port is not None:
                    control = f"http://{host}:{container.get_exposed_port(self.control_port)}/"
                    with urllib.request.urlopen(control, timeout=5):
                        pass
                return
            except (OSError, ValueError) as exc:
                last_error = exc
            if time.monotonic() >= deadline:
                raise TimeoutError(
                    f"kemu at {host}:{port} did not answer ApiVersions within {self._startup_timeout:.0f}s "
                    f"({last_error}):\n{_logs(container)}"
                )
            time.sleep(self._poll_interval)


def _logs(container: WaitStrategyTarget) -> str:
    stdout, stderr = container.get_logs()
    return stdout.decode(errors="replace") + stderr.decode(errors="replace")


class ImageMissing(RuntimeError):
    """KemuContainer's image is not on this machine and cannot be pulled by its name."""


class KemuContainer(DockerContainer):
    """A kemu broker in docker, used like testcontainers' KafkaContainer.

    `port` is the port the broker listens on inside the container (KafkaContainer's `port`).
    Other containers on a shared docker network are told the same host-side address as the test,
    since kemu has one listener (KafkaContainer adds a second one, BROKER, for them).
    """

    def __init__(self, image: str | None = None, port: int = KAFKA_PORT, *, control_port: int | None = CONTROL_PORT,
                 **kwargs: Any) -> None:
        super().__init__(image or os.environ.get("KEMU_IMAGE", DEFAULT_IMAGE), **kwargs)
        self.port = port
        self.control_port = control_port
        self.sasl_ssl_port: int | None = None
        self.with_exposed_ports(port)
        self.with_env("KAFKA_LISTENERS", f"PLAINTEXT://0.0.0.0:{port}")
        if control_port is not None:
            self.with_exposed_ports(control_port)
            self.with_env("KEMU_CONTROL_PORT", str(control_port))
        self._kafka_ready = KafkaApiVersionsWaitStrategy(port, control_port).with_startup_timeout(STARTUP_TIMEOUT_S)

    def with_startup_timeout(self, seconds: float) -> Self:
        """How long start() waits for the broker to answer ApiVersions (default 60 s)."""
        self._kafka_ready.with_startup_timeout(seconds)
        return self

    def with_sasl_ssl(self, certificate_chain: str, private_key: str, users: Mapping[str, str], *,
                      mechanisms: tuple[str, ...] = ("SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN"),
                      port: int = SASL_SSL_PORT) -> Self:
        """A SASL_SSL listener on container `port` beside the PLAINTEXT one: the broker's certificate chain and
        (unencrypted PKCS#8) key in PEM, and `users` (name: password) as PLAIN and SCRAM users — Kafka's
        settings, given as the KAFKA_* variables a Kafka image takes."""
        self.sasl_ssl_port = port
        self.with_exposed_ports(port)
        self.with_env("KAFKA_LISTENERS", f"PLAINTEXT://0.0.0.0:{self.port},SASL_SSL://0.0.0.0:{port}")
        self.with_env("KAFKA_INTER_BROKER_LISTENER_NAME", "PLAINTEXT")
        self.with_env("KAFKA_SSL_KEYSTORE_TYPE", "PEM")
        self.with_env("KAFKA_SSL_KEYSTORE_CERTIFICATE_CHAIN", certificate_chain)
        self.with_env("KAFKA_SSL_KEYSTORE_KEY", private_key)
        self.with_env("KAFKA_LISTENER_NAME_SASL__SSL_SASL_ENABLED_MECHANISMS", ",".join(mechanisms))
        if "PLAIN" in mechanisms:
            options = " ".join(f'user_{name}="{password}"' for name, password in users.items())
            self.with_env("KAFKA_LISTENER_NAME_SASL__SSL_PLAIN_SASL_JAAS_CONFIG",
                          f"org.apache.kafka.common.security.plain.PlainLoginModule required {options};")
        scram = [f"{m}=[name={name},password={password}]" for m in mechanisms if m.startswith("SCRAM-")
                 for name, password in users.items()]
        if scram:
            self.with_env("KAFKA_KEMU_SCRAM_CREDENTIALS", ";".join(scram))
        return self

    def with_kraft(self) -> Self:
        """KafkaContainer's switch from ZooKeeper to KRaft; kemu needs neither, so there is nothing to
        switch, and code written for KafkaContainer runs unchanged."""
        return self

    def start(self, timeout: float | None = None) -> Self:
        """Start the container and wait until the broker answers ApiVersions; `timeout` (seconds), as
        KafkaContainer.start takes it, overrides with_startup_timeout."""
        if timeout is not None:
            self.with_startup_timeout(timeout)
        self._require_local_image()
        advertise_on_start = "KAFKA_ADVERTISED_LISTENERS" not in self.env
        if advertise_on_start:
            self.with_env("KEMU_ADVERTISED_LISTENERS_FILE", ADVERTISED_LISTENERS_FILE)
        # A strategy the caller added with waiting_for() runs once kemu is up, not while the
        # entrypoint still waits for its advertised listener.
        callers_strategy, self._wait_strategy = self._wait_strategy, None
        try:
            super().start()
        finally:
            self._wait_strategy = callers_strategy
        if advertise_on_start:
            listener = f"PLAINTEXT://{self.get_bootstrap_server()}"
            if self.sasl_ssl_port is not None:
                listener += f",SASL_SSL://{self.get_bootstrap_server('SASL_SSL')}"
            listener += "\n"
            self.copy_into_container(listener.encode(), ADVERTISED_LISTENERS_FILE)
        self._kafka_ready.wait_until_ready(self)
        if callers_strategy is not None:
            callers_strategy.wait_until_ready(self)
        return self

    def _require_local_image(self) -> None:
        """An image named without a registry (kemu:local, the default) can only have been built here: docker
        would look for it on Docker Hub and fail with a registry's error. Say it is missing and how to
        build it instead. A name with a registry is left to docker to pull."""
        if "/" in self.image:
            return
        if not self.get_docker_client().client.images.list(name=self.image):
            raise ImageMissing(f"the docker image {self.image} is not on this machine: build it with "
                               f"`bash docker/build-image --tag {self.image}` from a kemu checkout, or set "
                               "KEMU_IMAGE to an image your docker can pull")

    def get_bootstrap_server(self, listener: str = "PLAINTEXT") -> str:
        """Where a client on the test's side reaches the PLAINTEXT listener, or the SASL_SSL one."""
        if listener.upper() == "SASL_SSL":
            if self.sasl_ssl_port is None:
                raise RuntimeError("this KemuContainer has no SASL_SSL listener: call with_sasl_ssl() first")
            return f"{self.get_container_host_ip()}:{self.get_exposed_port(self.sasl_ssl_port)}"
        return f"{self.get_container_host_ip()}:{self.get_exposed_port(self.port)}"

    def control(self) -> KemuControl:
        """A client of the container's control endpoint, on the host port docker published it on."""
        if self.control_port is None:
            raise RuntimeError("this KemuContainer was made with control_port=None: it serves no control endpoint")
        return KemuControl(f"http://{self.get_container_host_ip()}:{self.get_exposed_port(self.control_port)}")


class KemuControlError(Exception):
    """The control endpoint refused a request: `status` is the HTTP status, `code` its error code (Kafka's
    error name where the broker refused, e.g. TOPIC_ALREADY_EXISTS; BROKER_STOPPED after a crash fault)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code


class _AsJson(Protocol):
    def to_json(self) -> dict[str, Any]: ...


class KemuControl:
    """A small client of kemu's control endpoint (`kemu serve --control-port`, the image's
    KEMU_CONTROL_PORT); the operations are documented in kemu/testing/control-openapi.json. Standard
    library only, so it needs nothing a test does not have already."""

    def __init__(self, base_url: str, timeout: float = CONTROL_TIMEOUT_S) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout

    def request(self, method: str, path: str, body: Mapping[str, Any] | None = None,
                query: Mapping[str, Any] | None = None) -> Any:
        """One request; the JSON (or, for a text/plain answer, the text) it was answered with."""
        url = self.base_url + path + (f"?{urlencode(query)}" if query else "")
        data = None if body is None else json.dumps(body).encode()
        headers = {} if data is None else {"Content-Type": "application/json"}
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                text = response.read().decode()
                kind = response.headers.get_content_type()
        except urllib.error.HTTPError as refused:
            raw = refused.read().decode(errors="replace")
            try:
                error = json.loads(raw)["error"]
                code, message = str(error["code"]), str(error["message"])
            except (ValueError, KeyError, TypeError):
                code, message = "HTTP_ERROR", raw
            raise KemuControlError(refused.code, code, message) from None
        return json.loads(text) if kind == "application/json" else text

    # ---- the broker ----------------------------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        """bootstrap_servers, node_id, cluster_id, data_dir, crashed."""
        answer: dict[str, Any] = self.request("GET", "/")
        return answer

    def restart(self) -> dict[str, Any]:
        answer: dict[str, Any] = self.request("POST", "/restart")
        return answer

    def kill(self) -> dict[str, Any]:
        answer: dict[str, Any] = self.request("POST", "/kill")
        return answer

    def reset(self) -> dict[str, Any]:
        answer: dict[str, Any] = self.request("POST", "/reset")
        return answer

    # ---- the clock -----------------------------------------------------------------------------------
    def now_ms(self) -> int:
        return int(self.request("GET", "/clock")["now_ms"])

    def advance(self, seconds: float) -> int:
        """Move the broker's clock; what fell due has fired when this returns. The new reading (ms)."""
        return int(self.request("POST", "/clock/advance", {"seconds": seconds})["now_ms"])

    def freeze(self) -> None:
        self.request("POST", "/clock/freeze")

    def resume(self) -> None:
        self.request("POST", "/clock/resume")

    # ---- faults --------------------------------------------------------------------------------------
    def add_fault(self, fault: Mapping[str, Any] | _AsJson) -> dict[str, Any]:
        """Arm a fault given as its JSON form (or a `kemu.testing.Fault`); returns it with its `id`."""
        data = fault if isinstance(fault, Mapping) else fault.to_json()
        answer: dict[str, Any] = self.request("POST", "/faults", data)
        return answer

    def faults(self) -> list[dict[str, Any]]:
        answer: list[dict[str, Any]] = self.request("GET", "/faults")["faults"]
        return answer

    def fault(self, fault_id: int) -> dict[str, Any]:
        """One fault as it is now: its `hits` so far."""
        answer: dict[str, Any] = self.request("GET", f"/faults/{fault_id}")
        return answer

    def remove_fault(self, fault_id: int) -> None:
        self.request("DELETE", f"/faults/{fault_id}")

    def clear_faults(self) -> None:
        self.request("DELETE", "/faults")

    # ---- inspection and transcript -------------------------------------------------------------------
    def inspect(self) -> dict[str, Any]:
        """The broker's state and the exactly-once checker's `violations`."""
        answer: dict[str, Any] = self.request("GET", "/inspect")
        return answer

    def inspect_text(self) -> str:
        return str(self.request("GET", "/inspect/text"))

    def transcript(self, last: int | None = None) -> list[dict[str, Any]]:
        answer: list[dict[str, Any]] = self.request("GET", "/transcript",
                                                    query=None if last is None else {"last": last})["entries"]
        return answer

    # ---- topics and records --------------------------------------------------------------------------
    def create_topic(self, name: str, partitions: int = 1, config: Mapping[str, str] | None = None) -> None:
        self.request("POST", "/topics", {"name": name, "partitions": partitions, "config": dict(config or {})})

    def topics(self) -> list[dict[str, Any]]:
        answer: list[dict[str, Any]] = self.request("GET", "/topics")["topics"]
        return answer

    def produce(self, topic: str, value: str | None, *, key: str | None = None, partition: int = 0) -> int:
        """Append one record (text key and value); returns its offset."""
        body = {"value": value, "key": key, "partition": partition}
        return int(self.request("POST", f"/topics/{quote(topic, safe='')}/records", body)["offset"])

    def records(self, topic: str, partition: int | None = None, *,
                read_committed: bool = False) -> list[dict[str, Any]]:
        """Every record from the log start (key and value as text, and as base64)."""
        query: dict[str, Any] = {"read_committed": "true" if read_committed else "false"}
        if partition is not None:
            query["partition"] = partition
        answer: list[dict[str, Any]] = self.request("GET", f"/topics/{quote(topic, safe='')}/records",
                                                    query=query)["records"]
        return answer
