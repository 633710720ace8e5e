"""The control endpoint: the handle's powers over HTTP/JSON, for tests in any language and against the image.

`kemu serve --control-port PORT` serves it beside the broker (`kemu.testing.serving`); a Python process
holding a `kemu.testing.Broker` can serve one for its handle too (`ControlEndpoint`), e.g. for a child
process in another language. Every operation is a thin call of the handle, so a test in node or curl gets
exactly what `broker.advance(61)` or `broker.records(topic)` gives a Python test. The operations are
documented in `control-openapi.json` beside this module (served at `GET /openapi.json`);
`tests/testing/test_control_openapi.py` holds the server to it, route by route.

It is a test tool: no authentication, bound to the broker's own listen host.

Operations run one at a time, each on a worker thread: the handle's calls block until the broker's loop
answers, and one request restarting the broker while another reads it would find no broker to read.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http import HTTPStatus
from importlib import metadata, resources
from typing import Any

import trio
import trio.lowlevel

from kemu.log.log_cleaner import CleanResult
from kemu.testing.broker import Broker, BrokerError, Record
from kemu.testing.faults import BrokerCrashed, Fault
from kemu.testing.httpd import HttpRequest, HttpResponse, json_body, serve_http
from kemu.wire.errors import ErrorCode

OPENAPI_RESOURCE = "control-openapi.json"

log = logging.getLogger("kemu.control")

JsonObject = dict[str, Any]


def openapi_document() -> JsonObject:
    """The OpenAPI 3 document of the control endpoint, as shipped with the package."""
    document: JsonObject = json.loads(resources.files("kemu.testing").joinpath(OPENAPI_RESOURCE).read_text())
    return document


class ControlError(Exception):
    """A request the endpoint refuses: answered with `status` and {"error": {"code", "message"}}."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


@dataclass(frozen=True, slots=True)
class Call:
    """One request as an operation sees it."""

    params: dict[str, str]  # from the path template
    query: dict[str, list[str]]
    body: bytes

    def json(self) -> JsonObject:
        if not self.body.strip():
            return {}
        try:
            value = json.loads(self.body)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ControlError(HTTPStatus.BAD_REQUEST, "BAD_REQUEST", f"the body is not JSON: {exc}") from None
        if not isinstance(value, dict):
            raise ControlError(HTTPStatus.BAD_REQUEST, "BAD_REQUEST", "the body must be a JSON object")
        return value

    def flag(self, name: str) -> bool:
        values = self.query.get(name)
        if not values:
            return False
        value = values[-1].lower()
        if value in {"", "true", "1", "yes"}:
            return True
        if value in {"false", "0", "no"}:
            return False
        raise ControlError(HTTPStatus.BAD_REQUEST, "BAD_REQUEST", f"{name} takes true or false, not {value!r}")

    def integer(self, name: str) -> int | None:
        values = self.query.get(name)
        if not values:
            return None
        try:
            return int(values[-1])
        except ValueError:
            raise ControlError(HTTPStatus.BAD_REQUEST, "BAD_REQUEST", f"{name} must be an integer") from None


@dataclass(frozen=True, slots=True)
class HttpReply:
    status: int
    body: Any  # JSON-able, or str for text/plain


Operation = Callable[["Control", Call], HttpReply]


@dataclass(frozen=True, slots=True)
class Route:
    method: str
    path: str  # an OpenAPI path template: /topics/{topic}/records
    operation: Operation
    # Reads or changes the core, so it cannot run while a crash fault holds the broker stopped (503); the
    # clock, the faults, the transcript and restart/kill can.
    needs_broker: bool = False

    def match(self, path: str) -> dict[str, str] | None:
        want, got = self.path.strip("/").split("/"), path.strip("/").split("/")
        if len(want) != len(got):
            return None
        params: dict[str, str] = {}
        for template, segment in zip(want, got, strict=True):
            if template.startswith("{") and template.endswith("}"):
                if not segment:
                    return None
                params[template[1:-1]] = segment
            elif template != segment:
                return None
        return params


class Control:
    """The operations on one handle. `handle` is the HTTP entry point, to run on a Trio loop."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self._one_at_a_time = trio.Lock()
        # Faults have no name of their own; a client names one by the id it got when adding it.
        self._fault_ids: dict[int, Fault] = {}
        self._next_fault_id = 1

    async def handle(self, request: HttpRequest) -> HttpResponse:
        routes = [(route, params) for route in ROUTES if (params := route.match(request.path)) is not None]
        if not routes:
            return _error_response(ControlError(HTTPStatus.NOT_FOUND, "NOT_FOUND", f"no route {request.path}"))
        chosen = [(route, params) for route, params in routes if route.method == request.method]
        if not chosen:
            allowed = ", ".join(sorted({route.method for route, _ in routes}))
            refused = ControlError(HTTPStatus.METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED",
                                   f"{request.method} {request.path}; allowed: {allowed}")
            response = _error_response(refused)
            response.headers["Allow"] = allowed
            return response
        route, params = chosen[0]
        call = Call(params, request.query, request.body)
        async with self._one_at_a_time:
            try:
                if route.needs_broker and self.broker.crashed:
                    raise _stopped()
                reply = await trio.to_thread.run_sync(route.operation, self, call)
            except ControlError as refused:
                return _error_response(refused)
            except BrokerError as refused:
                return _error_response(_from_broker_error(refused))
            except (ValueError, TypeError) as refused:  # what the handle and Fault say of a bad argument
                return _error_response(ControlError(HTTPStatus.BAD_REQUEST, "BAD_REQUEST", str(refused)))
            except BrokerCrashed as crashed:
                # This very operation ran into a crash point (an advance that fired a commit's markers): the
                # broker stopped where the test asked it to, which the caller learns as for any later call.
                return _error_response(_stopped(str(crashed)))
            except Exception as failed:
                # The handle's own word that its broker is not running (a crash meanwhile), or a bug: either
                # way the client gets an answer, and the endpoint stays up for the next request.
                if route.needs_broker and self.broker.crashed:
                    return _error_response(_stopped())
                log.exception("control operation %s %s failed", route.method, route.path)
                return _error_response(ControlError(HTTPStatus.INTERNAL_SERVER_ERROR, "INTERNAL_ERROR",
                                                    f"{type(failed).__name__}: {failed}"))
        if isinstance(reply.body, str):
            text = reply.body if reply.body.endswith("\n") else reply.body + "\n"
            return HttpResponse(reply.status, text.encode(), "text/plain; charset=utf-8")
        return HttpResponse(reply.status, json_body(reply.body))

    # ---- the broker -------------------------------------------------------------------------------------
    def info(self, call: Call) -> HttpReply:
        return HttpReply(HTTPStatus.OK, self._info())

    def _info(self) -> JsonObject:
        broker = self.broker
        return {"kemu_version": _version(), "bootstrap_servers": broker.bootstrap_servers,
                "node_id": broker.core.node_id, "cluster_id": broker.core.cluster_id,
                "data_dir": str(broker.data_dir), "crashed": broker.crashed}

    def openapi(self, call: Call) -> HttpReply:
        return HttpReply(HTTPStatus.OK, openapi_document())

    def restart(self, call: Call) -> HttpReply:
        self.broker.restart()
        return HttpReply(HTTPStatus.OK, self._info())

    def kill(self, call: Call) -> HttpReply:
        self.broker.kill()
        return HttpReply(HTTPStatus.OK, self._info())

    def reset(self, call: Call) -> HttpReply:
        self.broker.reset()
        return HttpReply(HTTPStatus.OK, self._info())

    # ---- the clock --------------------------------------------------------------------------------------
    def clock(self, call: Call) -> HttpReply:
        return HttpReply(HTTPStatus.OK, self._clock())

    def _clock(self) -> JsonObject:
        clock = self.broker.clock
        return {"now_ms": clock.now_ms(), "frozen": clock.frozen}

    def advance(self, call: Call) -> HttpReply:
        seconds = call.json().get("seconds")
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            raise ControlError(HTTPStatus.BAD_REQUEST, "BAD_REQUEST", "seconds (a number) is required")
        self.broker.advance(seconds)
        return HttpReply(HTTPStatus.OK, self._clock())

    def freeze(self, call: Call) -> HttpReply:
        self.broker.clock.freeze()
        return HttpReply(HTTPStatus.OK, self._clock())

    def resume(self, call: Call) -> HttpReply:
        self.broker.clock.resume()
        return HttpReply(HTTPStatus.OK, self._clock())

    # ---- faults -----------------------------------------------------------------------------------------
    def faults(self, call: Call) -> HttpReply:
        return HttpReply(HTTPStatus.OK, {"faults": [self._fault_json(fault) for fault in self.broker.faults]})

    def add_fault(self, call: Call) -> HttpReply:
        fault = self.broker.faults.add(Fault.from_json(call.json()))
        return HttpReply(HTTPStatus.CREATED, self._fault_json(fault))

    def clear_faults(self, call: Call) -> HttpReply:
        self.broker.faults.clear()
        self._fault_ids.clear()
        return HttpReply(HTTPStatus.OK, {"faults": []})

    def fault(self, call: Call) -> HttpReply:
        return HttpReply(HTTPStatus.OK, self._fault_json(self._fault_named(call)))

    def remove_fault(self, call: Call) -> HttpReply:
        fault = self._fault_named(call)
        self.broker.faults.remove(fault)
        answer = self._fault_json(fault)
        self._fault_ids = {key: kept for key, kept in self._fault_ids.items() if kept is not fault}
        return HttpReply(HTTPStatus.OK, answer)

    def _fault_json(self, fault: Fault) -> JsonObject:
        key = next((key for key, known in self._fault_ids.items() if known is fault), None)
        if key is None:  # armed by the Python side of the handle: named on first sight
            key, self._next_fault_id = self._next_fault_id, self._next_fault_id + 1
            self._fault_ids[key] = fault
        return {"id": key, **fault.to_json()}

    def _fault_named(self, call: Call) -> Fault:
        armed = {id(fault) for fault in self.broker.faults}
        try:
            fault = self._fault_ids[int(call.params["id"])]
        except (KeyError, ValueError):
            fault = None
        if fault is None or id(fault) not in armed:
            raise ControlError(HTTPStatus.NOT_FOUND, "NOT_FOUND", f"no fault {call.params['id']}")
        return fault

    # ---- inspection and transcript ----------------------------------------------------------------------
    def inspect(self, call: Call) -> HttpReply:
        return HttpReply(HTTPStatus.OK, self.broker.inspect().to_json())

    def inspect_text(self, call: Call) -> HttpReply:
        return HttpReply(HTTPStatus.OK, self.broker.inspect().render() + "\n")

    def transcript(self, call: Call) -> HttpReply:
        entries = self.broker.transcript.to_json()
        last = call.integer("last")
        if last is not None:
            entries = entries[-last:] if last > 0 else []
        return HttpReply(HTTPStatus.OK, {"entries": entries})

    def transcript_text(self, call: Call) -> HttpReply:
        return HttpReply(HTTPStatus.OK, self.broker.transcript.render(call.integer("last")) + "\n")

    # ---- topics and records -----------------------------------------------------------------------------
    def topics(self, call: Call) -> HttpReply:
        def listed() -> list[JsonObject]:
            return [{"name": topic.name, "partitions": len(topic.partitions), "internal": topic.is_internal,
                     "config": dict(topic.configs)}
                    for topic in sorted(self.broker.core.topics, key=lambda t: t.name)]

        return HttpReply(HTTPStatus.OK, {"topics": self.broker.call(listed)})

    def create_topic(self, call: Call) -> HttpReply:
        body = call.json()
        name = _required(body, "name", str)
        partitions = _optional(body, "partitions", int, 1)
        config = _optional(body, "config", dict, {})
        if not all(isinstance(value, str) for value in config.values()):
            raise ControlError(HTTPStatus.BAD_REQUEST, "BAD_REQUEST", "config maps names to string values")
        self.broker.create_topic(name, partitions, config)
        return HttpReply(HTTPStatus.CREATED, {"name": name, "partitions": partitions, "config": config})

    # ---- the cluster's brokers and leaders -------------------------------------------------------------
    def brokers(self, call: Call) -> HttpReply:
        return HttpReply(HTTPStatus.OK, {"brokers": self.broker.call(self._brokers)})

    def _brokers(self) -> list[JsonObject]:
        core = self.broker.core
        out: list[JsonObject] = []
        for node in core.cluster:
            host, port = core.advertised_endpoint(node.node_id)
            out.append({"node_id": node.node_id, "host": host, "port": port, "rack": node.rack,
                        "alive": node.alive})
        return out

    def stop_broker(self, call: Call) -> HttpReply:
        self.broker.stop_broker(_node_id(call))
        return self.brokers(call)

    def start_broker(self, call: Call) -> HttpReply:
        self.broker.start_broker(_node_id(call))
        return self.brokers(call)

    def move_leader(self, call: Call) -> HttpReply:
        topic, node_id = call.params["topic"], _required(call.json(), "node_id", int)
        try:
            index = int(call.params["partition"])
        except ValueError:
            raise ControlError(HTTPStatus.BAD_REQUEST, "BAD_REQUEST", "the partition is a number") from None
        self.broker.move_leader(topic, index, node_id)

        def state() -> JsonObject:
            found = self.broker._partition_any(topic, index)
            return {"topic": topic, "partition": index, "leader": found.leader_id,
                    "leader_epoch": found.leader_epoch, "replicas": list(found.replicas), "isr": list(found.isr)}

        return HttpReply(HTTPStatus.OK, self.broker.call(state))

    def move_coordinator(self, call: Call) -> HttpReply:
        kind, key = call.params["kind"], call.params["key"]
        node_id = _required(call.json(), "node_id", int)
        self.broker.move_coordinator(kind, key, node_id)  # ValueError (400) for a kind other than group/transaction
        return HttpReply(HTTPStatus.OK, {"kind": kind, "key": key, "node_id": self.broker.coordinator(kind, key)})

    def records(self, call: Call) -> HttpReply:
        found = self.broker.records(call.params["topic"], call.integer("partition"),
                                    read_committed=call.flag("read_committed"))
        return HttpReply(HTTPStatus.OK, {"records": [_record_json(record) for record in found]})

    def produce(self, call: Call) -> HttpReply:
        body = call.json()
        partition = _optional(body, "partition", int, 0)
        headers = [(_required(header, "key", str), _payload(header, "value"))
                   for header in _optional(body, "headers", list, [])]
        timestamp = body.get("timestamp")
        if timestamp is not None and (isinstance(timestamp, bool) or not isinstance(timestamp, int)):
            raise ControlError(HTTPStatus.BAD_REQUEST, "BAD_REQUEST", "timestamp must be an integer (ms)")
        offset = self.broker.produce(call.params["topic"], _payload(body, "value"), key=_payload(body, "key"),
                                     partition=partition, headers=headers, timestamp=timestamp)
        return HttpReply(HTTPStatus.CREATED, {"topic": call.params["topic"], "partition": partition, "offset": offset})


    # ---- the log cleaner --------------------------------------------------------------------------------
    def clean(self, call: Call) -> HttpReply:
        topic = _optional(call.json(), "topic", str, None)
        cleaned = [_cleaned_json(result) for result in self.broker.clean_logs(topic)]
        return HttpReply(HTTPStatus.OK, {"cleaned": cleaned})


def _cleaned_json(result: CleanResult) -> JsonObject:
    stats = result.stats
    return {"topic": result.topic, "partition": result.partition,
            "first_dirty_offset": result.first_dirty_offset, "end_offset": result.end_offset,
            "segments_before": stats.segments_before, "segments_after": stats.segments_after,
            "bytes_before": stats.log_bytes_before, "bytes_after": stats.log_bytes_after,
            "records_read": stats.messages_read, "records_kept": stats.messages_written}


def _version() -> str:
    # The room may not import kemu/__init__.py; the installed distribution knows the same version.
    try:
        return metadata.version("kemu")
    except metadata.PackageNotFoundError:
        return "unknown"


def _required(body: Any, name: str, kind: type) -> Any:
    if not isinstance(body, dict) or name not in body:
        raise ControlError(HTTPStatus.BAD_REQUEST, "BAD_REQUEST", f"{name} is required")
    return _optional(body, name, kind, None)


def _optional(body: JsonObject, name: str, kind: type, default: Any) -> Any:
    value = body.get(name, default)
    if value is None:
        return default
    if isinstance(value, bool) and kind is not bool or not isinstance(value, kind):
        raise ControlError(HTTPStatus.BAD_REQUEST, "BAD_REQUEST", f"{name} must be a {kind.__name__}")
    return value


def _payload(body: Any, name: str) -> bytes | None:
    """A key, value or header value given as text (`name`) or as base64 (`name_base64`)."""
    if not isinstance(body, dict):
        raise ControlError(HTTPStatus.BAD_REQUEST, "BAD_REQUEST", "a record and its headers are JSON objects")
    encoded = body.get(f"{name}_base64")
    if encoded is not None:
        try:
            return base64.b64decode(_optional(body, f"{name}_base64", str, ""), validate=True)
        except binascii.Error:
            raise ControlError(HTTPStatus.BAD_REQUEST, "BAD_REQUEST", f"{name}_base64 is not base64") from None
    text = _optional(body, name, str, None)
    return None if text is None else str(text).encode()


def _payload_json(name: str, value: bytes | None) -> JsonObject:
    """Both forms: text for the common case of UTF-8, base64 so no byte is ever lost."""
    if value is None:
        return {name: None, f"{name}_base64": None}
    try:
        text: str | None = value.decode()
    except UnicodeDecodeError:
        text = None
    return {name: text, f"{name}_base64": base64.b64encode(value).decode()}


def _record_json(record: Record) -> JsonObject:
    return {"topic": record.topic, "partition": record.partition, "offset": record.offset,
            "timestamp": record.timestamp, **_payload_json("key", record.key), **_payload_json("value", record.value),
            "headers": [{"key": key, **_payload_json("value", value)} for key, value in record.headers]}


_STATUS_OF_ERROR = {
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: HTTPStatus.NOT_FOUND,
    ErrorCode.TOPIC_ALREADY_EXISTS: HTTPStatus.CONFLICT,
    ErrorCode.BROKER_NOT_AVAILABLE: HTTPStatus.NOT_FOUND,
    ErrorCode.INVALID_REQUEST: HTTPStatus.CONFLICT,  # the last live broker cannot be stopped
}


def _from_broker_error(error: BrokerError) -> ControlError:
    # Kafka's own error name, so a test in any language can match what a Kafka client would report.
    return ControlError(_STATUS_OF_ERROR.get(error.code, HTTPStatus.BAD_REQUEST), error.code.name, str(error))


def _node_id(call: Call) -> int:
    try:
        return int(call.params["node"])
    except ValueError:
        raise ControlError(HTTPStatus.NOT_FOUND, "BROKER_NOT_AVAILABLE", f"no broker {call.params['node']}") from None


def _stopped(why: str = "a crash fault stopped the broker") -> ControlError:
    return ControlError(HTTPStatus.SERVICE_UNAVAILABLE, "BROKER_STOPPED",
                        f"{why}; POST /restart or /kill brings it back")


def _error_response(error: ControlError) -> HttpResponse:
    return HttpResponse(error.status, json_body({"error": {"code": error.code, "message": str(error)}}))


def _routes() -> Iterable[Route]:
    yield Route("GET", "/", Control.info)
    yield Route("GET", "/openapi.json", Control.openapi)
    yield Route("POST", "/restart", Control.restart)
    yield Route("POST", "/kill", Control.kill)
    yield Route("POST", "/reset", Control.reset, needs_broker=True)
    yield Route("GET", "/clock", Control.clock)
    yield Route("POST", "/clock/advance", Control.advance, needs_broker=True)
    yield Route("POST", "/clock/freeze", Control.freeze)
    yield Route("POST", "/clock/resume", Control.resume)
    yield Route("GET", "/faults", Control.faults)
    yield Route("POST", "/faults", Control.add_fault)
    yield Route("DELETE", "/faults", Control.clear_faults)
    yield Route("GET", "/faults/{id}", Control.fault)
    yield Route("DELETE", "/faults/{id}", Control.remove_fault)
    yield Route("GET", "/inspect", Control.inspect, needs_broker=True)
    yield Route("GET", "/inspect/text", Control.inspect_text, needs_broker=True)
    yield Route("GET", "/transcript", Control.transcript)
    yield Route("GET", "/transcript/text", Control.transcript_text)
    yield Route("GET", "/topics", Control.topics, needs_broker=True)
    yield Route("POST", "/topics", Control.create_topic, needs_broker=True)
    yield Route("GET", "/brokers", Control.brokers, needs_broker=True)
    yield Route("POST", "/brokers/{node}/stop", Control.stop_broker, needs_broker=True)
    yield Route("POST", "/brokers/{node}/start", Control.start_broker, needs_broker=True)
    yield Route("POST", "/topics/{topic}/partitions/{partition}/leader", Control.move_leader, needs_broker=True)
    yield Route("POST", "/coordinators/{kind}/{key}/leader", Control.move_coordinator, needs_broker=True)
    yield Route("GET", "/topics/{topic}/records", Control.records, needs_broker=True)
    yield Route("POST", "/topics/{topic}/records", Control.produce, needs_broker=True)
    yield Route("POST", "/cleaner/run", Control.clean, needs_broker=True)


ROUTES: tuple[Route, ...] = tuple(_routes())


async def serve_control(broker: Broker, host: str, port: int, *,
                        task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
    """Serve the control endpoint for `broker` on host:port until cancelled; reports the bound port."""
    await serve_http(Control(broker).handle, host, port, task_status=task_status)


class ControlEndpoint:
    """The control endpoint of a handle in this process, on a thread with its own Trio loop:

        with Broker() as broker, ControlEndpoint(broker) as control:
            subprocess.run(["node", "test.mjs", broker.bootstrap_servers, control.url])
    """

    def __init__(self, broker: Broker, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self.port = 0
        self._token: trio.lowlevel.TrioToken | None = None
        self._scope: trio.CancelScope | None = None
        self._error: BaseException | None = None
        ready = threading.Event()

        async def main() -> None:
            self._token = trio.lowlevel.current_trio_token()
            with trio.CancelScope() as scope:
                self._scope = scope
                async with trio.open_nursery() as nursery:
                    self.port = await nursery.start(serve_control, broker, host, port)
                    ready.set()

        def run() -> None:
            try:
                trio.run(main)
            except BaseException as exc:  # reported to the constructor's thread
                self._error = exc
            finally:
                ready.set()

        self._thread = threading.Thread(target=run, name="kemu-control", daemon=True)
        self._thread.start()
        ready.wait()
        if self._error is not None or not self.port:
            raise RuntimeError("the control endpoint did not start") from self._error

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def close(self) -> None:
        if self._token is not None and self._scope is not None and self._thread.is_alive():
            try:
                self._token.run_sync_soon(self._scope.cancel)
            except trio.RunFinishedError:
                pass
        self._thread.join()

    def __enter__(self) -> ControlEndpoint:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
