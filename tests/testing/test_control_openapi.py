"""The control endpoint against its OpenAPI document (kemu/testing/control-openapi.json), both ways: every
operation the document names is answered with its documented success status and a body that has what the
documented schema requires (each error status it documents too, with the Error body), and every route the
server has is in the document. The requests are the document's own examples, so they stay checked too.

The checks are functions of a base URL (the state they need is arranged through the endpoint too) and of a
way to crash the broker (for the 503 a stopped broker answers), so compat_tests/test_testing_control.py runs
the same ones against a real `kemu serve --control-port`.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import pytest

from compat_tests.polling import wait_for
from kemu.testing import Broker
from kemu.testing.control import ROUTES, ControlEndpoint, openapi_document

DOCUMENT = openapi_document()
METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
ARRANGED_TOPIC = "orders"  # what the document's examples name; made by `arrange` before every operation
UNKNOWN = {"topic": "no-such-topic", "id": "999999", "node": "999999"}


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    spec: dict[str, Any]
    parameters: list[dict[str, Any]]

    @property
    def id(self) -> str:
        return f"{self.method.upper()} {self.path}"

    def success(self) -> tuple[int, dict[str, Any]]:
        [(status, response)] = [(int(code), r) for code, r in self.spec["responses"].items() if code.startswith("2")]
        return status, response

    def errors(self) -> dict[int, dict[str, Any]]:
        return {int(code): r for code, r in self.spec["responses"].items() if code[0] in "45"}

    def example_body(self) -> Any:
        body = self.spec.get("requestBody")
        return None if body is None else body["content"]["application/json"]["example"]


def operations(document: dict[str, Any] = DOCUMENT) -> list[Operation]:
    found = []
    for path, item in document["paths"].items():
        for method in METHODS:
            if method in item:
                spec = item[method]
                found.append(Operation(method, path, spec, [*item.get("parameters", []), *spec.get("parameters", [])]))
    return found


# ---- talking to the endpoint ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Answer:
    status: int
    content_type: str
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def send(base_url: str, method: str, path: str, *, query: dict[str, Any] | None = None,
         body: Any = None, raw_body: bytes | None = None) -> Answer:
    url = urlsplit(base_url)
    assert url.hostname is not None and url.port is not None
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    try:
        target = path + (f"?{urlencode(query)}" if query else "")
        payload = raw_body if raw_body is not None else None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if payload is not None else {}
        connection.request(method.upper(), target, body=payload, headers=headers)
        response = connection.getresponse()
        return Answer(response.status, response.getheader("Content-Type") or "", response.read())
    finally:
        connection.close()


def example_request(operation: Operation, values: dict[str, str]) -> tuple[str, dict[str, Any]]:
    """The operation's path and query from the document's examples, path parameters from `values` (what
    `arrange` made: the examples cannot know a fault's id)."""
    path = operation.path
    query: dict[str, Any] = {}
    for parameter in operation.parameters:
        value = parameter["example"]
        if parameter["in"] == "path":
            value = values.get(parameter["name"], value)
            path = path.replace("{" + parameter["name"] + "}", quote(str(value), safe=""))
        elif parameter["in"] == "query":
            query[parameter["name"]] = str(value).lower() if isinstance(value, bool) else value
    return path, query


def arrange(base_url: str) -> dict[str, str]:
    """What the examples need, made through the endpoint: a running, otherwise empty broker with the topic
    they name (and a record in it), and one armed fault, whose id is returned for `{id}`."""
    if send(base_url, "GET", "/").json()["crashed"]:
        assert send(base_url, "POST", "/restart").status == 200
    for method, path, body in [("POST", "/reset", None), ("DELETE", "/faults", None), ("POST", "/clock/resume", None),
                               ("POST", "/topics", {"name": ARRANGED_TOPIC, "partitions": 2}),
                               ("POST", f"/topics/{ARRANGED_TOPIC}/records", {"key": "k", "value": "first"})]:
        answer = send(base_url, method, path, body=body)
        assert answer.status in {200, 201}, f"{method} {path}: {answer.status} {answer.body!r}"
    # A fault no request of these checks matches: it is there to be named.
    fault = send(base_url, "POST", "/faults", body={"api": "Metadata", "client_id": "nobody", "delay_ms": 1}).json()
    return {"topic": ARRANGED_TOPIC, "id": str(fault["id"])}


def wait_until_crashed(base_url: str, timeout: float = 30.0) -> None:
    wait_for(lambda: send(base_url, "GET", "/").json()["crashed"], what="the broker to stop at the crash point",
             timeout=timeout)


# ---- the schema's required fields ------------------------------------------------------------------------------
_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def resolve(schema: dict[str, Any], document: dict[str, Any] = DOCUMENT) -> dict[str, Any]:
    while "$ref" in schema:
        node: Any = document
        for part in schema["$ref"].removeprefix("#/").split("/"):
            node = node[part]
        schema = node
    return schema


def problems(value: Any, schema: dict[str, Any], where: str = "body") -> Iterator[str]:
    """Where `value` lacks what `schema` requires: its type, its required properties, recursively."""
    schema = resolve(schema)
    for part in schema.get("allOf", []):
        yield from problems(value, part, where)
    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if not any(_TYPES[kind](value) for kind in kinds):
            yield f"{where} is {type(value).__name__}, not {'/'.join(kinds)}: {value!r}"
            return
    if isinstance(value, dict):
        for name in schema.get("required", []):
            if name not in value:
                yield f"{where} lacks {name!r}"
        for name, inner in schema.get("properties", {}).items():
            if name in value:
                yield from problems(value[name], inner, f"{where}.{name}")
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for name, item in value.items():
                if name not in schema.get("properties", {}):
                    yield from problems(item, extra, f"{where}.{name}")
    if isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            yield from problems(item, schema["items"], f"{where}[{index}]")


def assert_answers_as_documented(answer: Answer, status: int, response: dict[str, Any], what: str) -> None:
    assert answer.status == status, f"{what}: {answer.status}, documented {status}: {answer.body!r}"
    [(media, content)] = response["content"].items()
    assert answer.content_type.split(";")[0] == media, f"{what}: {answer.content_type}, documented {media}"
    value = answer.json() if media == "application/json" else answer.body.decode()
    found = list(problems(value, content["schema"]))
    assert not found, f"{what}: the body does not match the documented schema:\n" + "\n".join(found)


# ---- the checks, for any running endpoint ---------------------------------------------------------------------
Crash = Callable[[], None]  # stops the broker at a crash point, through a transaction of its own


def check_success(base_url: str, operation: Operation) -> None:
    path, query = example_request(operation, arrange(base_url))
    answer = send(base_url, operation.method, path, query=query, body=operation.example_body())
    assert_answers_as_documented(answer, *operation.success(), operation.id)


def check_errors(base_url: str, operation: Operation, crash: Crash) -> None:
    """Provoke each documented error status the way its description says, and check the Error body."""
    for status, response in operation.errors().items():
        values = arrange(base_url)
        body = operation.example_body()
        raw: bytes | None = None
        if status == 404:
            values = UNKNOWN
        path, query = example_request(operation, values)
        if status == 400:
            if body is not None:
                raw = b"[1, 2]"  # not an object
            else:
                query = {name: "not-a-number" if name in {"partition", "last"} else "maybe" for name in query}
        elif status == 409:
            send(base_url, operation.method, path, query=query, body=body)  # the second one conflicts
        elif status == 503:
            crash()
            wait_until_crashed(base_url)
        elif status != 404:
            raise AssertionError(f"{operation.id}: no way to provoke a documented {status}")
        answer = send(base_url, operation.method, path, query=query, body=body, raw_body=raw)
        assert_answers_as_documented(answer, status, response, f"{operation.id} ({status})")


def check_routes_documented(base_url: str) -> None:
    """The server's routes are the document's operations, and it serves the document it ships."""
    values = arrange(base_url)
    documented = {(op.method.upper(), op.path) for op in operations()}
    assert {(route.method, route.path) for route in ROUTES} == documented
    assert send(base_url, "GET", "/openapi.json").json() == DOCUMENT
    for method in ("GET", "POST", "PUT", "DELETE", "PATCH"):
        for operation in operations():
            if (method, operation.path) not in documented:
                path, _ = example_request(operation, values)
                answer = send(base_url, method, path)
                assert answer.status == 405, f"{method} {operation.path}: {answer.status}"
                assert set(answer.json()["error"]) == {"code", "message"}
    assert send(base_url, "GET", "/no/such/route").status == 404


# ---- in-process -----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def served() -> Iterator[tuple[Broker, str]]:
    # Two brokers, so that the cluster operations' examples (stop broker 2) have a broker to act on.
    with Broker(brokers=2) as broker, ControlEndpoint(broker) as control:
        yield broker, control.url


def crash_in_process(broker: Broker, base_url: str) -> Crash:
    def crash() -> None:
        assert send(base_url, "POST", "/faults", body={"crash": "after-prepare"}).status == 201
        coordinator = broker.coordinators.txn.coordinator

        def commit() -> None:
            init = coordinator.init_producer_id("crashing", 60_000)
            coordinator.add_partitions("crashing", init.producer_id, init.producer_epoch, [(ARRANGED_TOPIC, 0)])
            coordinator.end_txn("crashing", init.producer_id, init.producer_epoch, commit=True)

        broker.call(commit)  # the markers are written after it returns, on the broker's own time

    return crash


def test_the_document_is_whole() -> None:
    assert DOCUMENT["openapi"].startswith("3.")
    ids = [op.spec["operationId"] for op in operations()]
    assert len(ids) == len(set(ids))
    for operation in operations():
        operation.success()  # exactly one success status
        for response in operation.spec["responses"].values():
            for content in response["content"].values():
                resolve(content["schema"])  # every reference resolves
        for parameter in operation.parameters:
            assert "example" in parameter, f"{operation.id}: {parameter['name']} has no example"
        if "requestBody" in operation.spec:
            schema = operation.spec["requestBody"]["content"]["application/json"]
            assert not list(problems(schema["example"], schema["schema"])), f"{operation.id}: its example"


@pytest.mark.parametrize("operation", operations(), ids=lambda op: op.id)
def test_each_operation_answers_as_documented(served: tuple[Broker, str], operation: Operation) -> None:
    check_success(served[1], operation)


@pytest.mark.parametrize("operation", [op for op in operations() if op.errors()], ids=lambda op: op.id)
def test_each_documented_error_is_answered_as_documented(served: tuple[Broker, str], operation: Operation) -> None:
    broker, url = served
    check_errors(url, operation, crash_in_process(broker, url))


def test_every_route_is_documented(served: tuple[Broker, str]) -> None:
    check_routes_documented(served[1])
