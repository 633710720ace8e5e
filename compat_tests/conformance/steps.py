"""Scripts and steps of the conformance corpus, and running them against a broker.

A script is an ordered list of steps on one connection (a step whose answer is "closed" opens a new one for
the next). A step is one exchange: API key, version, request body. Strings in a body may hold `{run}`,
replaced by a suffix fresh to each run so a used broker serves again (topic, group, transactional ids); a
string that is exactly `{$NAME}` is replaced by the value an earlier step captured (`capture`: NAME -> a
`/`-path into its response: a member id, a producer id, a topic id). In what a broker answers, the run's
suffix is put back as `{run}`.

A step may name fields whose values vary from run to run (`varying`, with its `why`), and error codes on
which it is sent again (`retry_on`): codes that only say Kafka is still settling (a coordinator loading, a
new partition's leader not yet elected), with the same `why`. Only the last answer is compared.
"""

from __future__ import annotations

import json
import socket
import struct
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from compat_tests.conformance import protocol

CLIENT_ID = "kemu-conformance"
CLOSED = "closed"
TIMEOUT_S = 15.0
RETRY_FOR_S = 60.0
RUN_TOKEN = "{run}"
ANY = "any:"


@dataclass
class Step:
    name: str
    api_key: int
    version: int
    request: dict[str, Any]
    varying: dict[str, str] = field(default_factory=dict)
    why: str = ""
    capture: dict[str, str] = field(default_factory=dict)
    retry_on: tuple[int, ...] = ()
    key_by: dict[str, str] = field(default_factory=dict)  # list field -> the element field to key it by
    only_run: tuple[str, ...] = ()  # list fields of which only the elements naming this run are kept
    # What the answer must hold, else the step is sent again (with `why`): a /-path that must exist, "!path"
    # one that must not, "path==JSON" one that must hold that value (see holds)
    retry_unless: str = ""
    node: str = ""  # "{$NAME}": to the broker of that node id; "not {$NAME}": to another one (see _address)
    # Sent on a connection authenticated with SASL/PLAIN as this user (password `<user>-secret`): the `tokens`
    # scripts, whose bootstrap is a SASL_PLAINTEXT listener.
    user: str = ""
    response: Any = None  # what Kafka answered, normalised; CLOSED; None before recording

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"step": self.name, "api": protocol.api_names().get(self.api_key, "unknown"),
                               "api_key": self.api_key, "version": self.version, "request": self.request}
        if self.varying:
            out["varying"] = self.varying
        if self.why:
            out["why"] = self.why
        if self.capture:
            out["capture"] = self.capture
        if self.retry_on:
            out["retry_on"] = list(self.retry_on)
        if self.key_by:
            out["key_by"] = self.key_by
        if self.only_run:
            out["only_run"] = list(self.only_run)
        if self.retry_unless:
            out["retry_unless"] = self.retry_unless
        if self.node:
            out["node"] = self.node
        if self.user:
            out["user"] = self.user
        out["response"] = self.response
        return out

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Step:
        return cls(raw["step"], raw["api_key"], raw["version"], raw["request"], raw.get("varying", {}),
                   raw.get("why", ""), raw.get("capture", {}), tuple(raw.get("retry_on", ())), raw.get("key_by", {}),
                   tuple(raw.get("only_run", ())), raw.get("retry_unless", ""),
                   raw.get("node", ""), raw.get("user", ""), raw["response"])


@dataclass
class Script:
    name: str  # "<area>.<case>": the area names the corpus file, the whole is the scenario's stem
    steps: list[Step]
    # "authorizer": against the Kafka with an authorizer; "cluster": three nodes; "tokens": a SASL listener with
    # delegation tokens enabled (TOKENS_SETTINGS)
    group: str = "default"

    @property
    def area(self) -> str:
        return self.name.split(".", 1)[0]

    def scenario(self, step: Step) -> str:
        return f"conformance.{self.name}.{step.name}"

    def to_json(self) -> dict[str, Any]:
        return {"script": self.name, "group": self.group, "steps": [step.to_json() for step in self.steps]}

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Script:
        return cls(raw["script"], [Step.from_json(step) for step in raw["steps"]], raw.get("group", "default"))


def fresh_run() -> str:
    return uuid.uuid4().hex[:10]


def substitute(value: Any, run: str, captured: dict[str, Any]) -> Any:
    if isinstance(value, dict):
        return {key: substitute(item, run, captured) for key, item in value.items()}
    if isinstance(value, list):
        return [substitute(item, run, captured) for item in value]
    if isinstance(value, str):
        if value.startswith("{$") and value.endswith("}"):
            return captured[value[2:-1]]
        return value.replace(RUN_TOKEN, run)
    return value


def unsubstitute(value: Any, run: str) -> Any:
    if isinstance(value, dict):
        return {key: unsubstitute(item, run) for key, item in value.items()}
    if isinstance(value, list):
        return [unsubstitute(item, run) for item in value]
    if isinstance(value, str):
        return value.replace(run, RUN_TOKEN)
    return value


def shaped(value: Any, key_by: dict[str, str], only_run: tuple[str, ...], varying: dict[str, str]) -> Any:
    """An answer with the lists `key_by` names turned into dicts by a natural id (an order no broker promises
    is not compared) and the lists `only_run` names cut to the elements of this run (a used broker holds
    other runs' groups, topics and transactions), and the fields whose `varying` kind starts with `any:`
    replaced by that kind (a value that changes from one step to the next, a disk's free bytes, would
    otherwise be numbered anew at each)."""
    if isinstance(value, list):
        return [shaped(item, key_by, only_run, varying) for item in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for name, item in value.items():
        if name in varying and varying[name].startswith(ANY) and not isinstance(item, (list, dict)):
            out[name] = f"<{varying[name]}>"
            continue
        if isinstance(item, list) and name in only_run:
            item = [element for element in item if RUN_TOKEN in json.dumps(element)]
        item = shaped(item, key_by, only_run, varying)
        if isinstance(item, list) and name in key_by and all(isinstance(e, dict) for e in item):
            keyed = {str(element.get(key_by[name])): element for element in item}
            item = {key: keyed[key] for key in sorted(keyed, key=lambda key: (len(key), key))}  # stable diffs
        out[name] = item
    return out


def at_path(value: Any, path: str) -> Any:
    """The value a /-path leads to; in a list, a part "field=text" is the element whose field is that text."""
    for part in path.split("/"):
        if isinstance(value, list) and "=" in part:
            field_name, _, text = part.partition("=")
            chosen = [item for item in value if isinstance(item, dict) and str(item.get(field_name)) == text]
            if not chosen:
                raise KeyError(part)
            value = chosen[0]
        else:
            value = value[int(part)] if isinstance(value, list) else value[part]
    return value


def error_codes(value: Any) -> Iterator[int]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "error_code" and isinstance(item, int):
                yield item
            else:
                yield from error_codes(item)
    elif isinstance(value, list):
        for item in value:
            yield from error_codes(item)


class Connection:
    """One TCP connection to a broker, speaking through protocol.py."""

    def __init__(self, address: tuple[str, int], user: str = "") -> None:
        self.address = address
        self.user = user  # authenticate with SASL/PLAIN as this user first (password `<user>-secret`)
        self.sock: socket.socket | None = None
        self.correlation = 0

    def _open(self) -> socket.socket:
        if self.sock is None:
            self.sock = socket.create_connection(self.address, timeout=TIMEOUT_S)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self.user:
                self._login()
        return self.sock

    def _login(self) -> None:
        """SaslHandshake v1 and SaslAuthenticate v2 with PLAIN; an answer that is not a success fails the step."""
        handshake = self.exchange(17, 1, {"mechanism": "PLAIN"})
        token = f"\0{self.user}\0{self.user}-secret".encode().hex()
        answer = handshake if handshake == CLOSED or handshake.get("error_code") else self.exchange(
            36, 2, {"auth_bytes": token})
        if answer == CLOSED or answer.get("error_code"):
            self.close()
            raise ConnectionError(f"SASL/PLAIN as {self.user} failed: {answer}")

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def exchange(self, api_key: int, version: int, body: dict[str, Any]) -> Any:
        """The decoded answer, or CLOSED when the broker closed the connection instead of answering."""
        sock = self._open()
        self.correlation += 1
        payload = protocol.encode_request(api_key, version, self.correlation, CLIENT_ID, body)
        try:
            sock.sendall(struct.pack(">i", len(payload)) + payload)
            size = struct.unpack(">i", self._exactly(sock, 4))[0]
            frame = self._exactly(sock, size)
        except (ConnectionError, EOFError):
            self.close()
            return CLOSED
        if api_key not in protocol.api_names():
            return {"_answered": "an API Kafka 4.3's spec does not have"}
        if api_key != protocol.API_VERSIONS_KEY and version not in protocol.response_spec(api_key).valid:
            return {"_answered": "a version Kafka 4.3's spec does not have"}
        correlation, answer = protocol.decode_response(api_key, version, frame)
        if correlation != self.correlation:
            answer = {"_correlation_id": f"{correlation}, sent {self.correlation}", **answer}
        return answer

    @staticmethod
    def _exactly(sock: socket.socket, count: int) -> bytes:
        chunks = bytearray()
        while len(chunks) < count:
            chunk = sock.recv(count - len(chunks))
            if not chunk:
                raise EOFError
            chunks += chunk
        return bytes(chunks)


def _settling(step: Step, answer: Any) -> bool:
    if set(error_codes(answer)) & set(step.retry_on):
        return True
    return bool(step.retry_unless) and not holds(answer, step.retry_unless)


def holds(answer: Any, condition: str) -> bool:
    """Whether an answer meets a step's `retry_unless`: a path that exists, "!path" one that does not,
    "path==JSON" one whose value is that."""
    path, _, expected = condition.partition("==")
    absent = path.startswith("!")
    try:
        value = at_path(answer, path.removeprefix("!"))
    except (KeyError, IndexError, TypeError, ValueError):
        return absent
    if absent:
        return False
    return not expected or value == json.loads(expected)


def _address(step: Step, bootstrap: tuple[str, int], captured: dict[str, Any]) -> tuple[str, int]:
    """Where a step goes: the bootstrap, or (`node`) the broker of that node id ("2") or of the one an earlier
    step captured ("{$NAME}"), or (`node` "not {$NAME}") the broker of lowest node id other than that one; the
    brokers' addresses are those a Metadata step captured as `brokers`."""
    if not step.node:
        return bootstrap
    brokers = {broker["node_id"]: (broker["host"], broker["port"]) for broker in captured["brokers"]}
    avoid = step.node.startswith("not ")
    node = substitute(step.node.removeprefix("not "), "", captured)
    if isinstance(node, str) and node.isdigit():  # a node id given as it is
        node = int(node)
    if avoid:
        return brokers[min(node_id for node_id in brokers if node_id != node)]
    return brokers[node]


def run_script(script: Script, address: tuple[str, int], run: str | None = None) -> list[Any]:
    """Every step's answer (raw: not normalised, the run's suffix put back as {run}), in order."""
    run = run or fresh_run()
    captured: dict[str, Any] = {}
    answers: list[Any] = []
    connections: dict[tuple[str, int, str], Connection] = {}
    try:
        for step in script.steps:
            request = substitute(step.request, run, captured)
            deadline = time.monotonic() + RETRY_FOR_S
            while True:
                try:
                    target = _address(step, address, captured)
                    connection = connections.setdefault((*target, step.user), Connection(target, step.user))
                    answer = connection.exchange(step.api_key, step.version, request)
                except (OSError, protocol.ProtocolError, ValueError, TypeError, KeyError, struct.error) as exc:
                    for opened in connections.values():
                        opened.close()
                    answer = {"_failed": f"{type(exc).__name__}: {exc}"}
                if answer == CLOSED or time.monotonic() > deadline or not _settling(step, answer):
                    break
                time.sleep(0.2)
            for token, path in step.capture.items():
                try:
                    captured[token] = at_path(answer, path)
                except (KeyError, IndexError, TypeError):
                    captured[token] = None
            answers.append(unsubstitute(answer, run))
    finally:
        for connection in connections.values():
            connection.close()
    return answers
