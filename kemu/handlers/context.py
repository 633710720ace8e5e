"""What a handler sees besides its request: the broker core, its coordinators, the client, the clock, and
request order."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, TypeVar

from kemu.broker.broker import BrokerCore
from kemu.clock import Clock
from kemu.coordinators import Coordinators

if TYPE_CHECKING:
    from kemu.coordinators.group_service import GroupService
    from kemu.coordinators.txn_service import TxnService


@dataclass(slots=True)
class ClientInfo:
    """One client connection, as the broker knows it."""

    host: str
    port: int
    software_name: str | None = None  # from ApiVersions v3+
    software_version: str | None = None
    # Who the connection authenticated as, in Kafka's "Type:name" form; a PLAINTEXT connection with no
    # SASL is Kafka's ANONYMOUS user. The security layer sets these; the authorizer reads them.
    principal: str = "User:ANONYMOUS"
    token_authenticated: bool = False  # authenticated with a delegation token (SCRAM, tokenauth=true)
    listener_name: str = "PLAINTEXT"
    security_protocol: str = "PLAINTEXT"
    # Kafka's connection id, "localHost:localPort-remoteHost:remotePort-processor-index", which some of its
    # error messages quote (the server sets it; "" where no socket is known).
    connection_id: str = ""


@dataclass(slots=True)
class RequestContext:
    """One request's view of the broker: the core, its coordinators, the client that sent it, and the turn
    it holds in its connection's request order."""

    broker: BrokerCore
    coordinators: Coordinators
    client: ClientInfo
    client_id: str | None
    # The connection's requests reach the core one at a time, in the order they arrived, as on a Kafka
    # broker. A handler about to wait (a long-polling Fetch, a JoinGroup) calls `detach()` so the
    # connection's next request may start; the responses still leave in request order.
    _on_detach: Callable[[], None] = field(default=lambda: None, repr=False)
    # The node of the cluster the request was sent to (None: the first, the one broker of a one-broker kemu);
    # it answers for the partitions it leads and the coordinators it hosts.
    node: int | None = None
    # The throttle time a quota gave the request (Produce, Fetch): the connection reads nothing more from the
    # client for that long once the response is out, as Kafka mutes a throttled channel.
    throttle_ms: int = 0
    # The request's bytes as received (0 where no frame was read): what producer_byte_rate counts.
    request_size: int = 0

    @property
    def node_id(self) -> int:
        return self.broker.node_id if self.node is None else self.node

    @property
    def clock(self) -> Clock:
        return self.broker.clock

    @property
    def groups(self) -> GroupService:
        return self.coordinators.groups

    @property
    def txn(self) -> TxnService:
        return self.coordinators.txn

    def detach(self) -> None:
        self._on_detach()


Body_co = TypeVar("Body_co", covariant=True)


class Continuation(Generic[Body_co]):
    """What a handler returns when its answer has to wait (a long-polling Fetch): `finish()` waits and
    returns the response body, of its API's response type (`Continuation[FetchResponse]`; the dispatcher,
    which loads handlers by name, sees a `dict[str, Any]`, what a TypedDict is at run time). Everything
    before the wait has run, in request order; the connection finishes it in a task of its own while its
    next requests start (as `detach` lets them), so the handler itself never suspends and a request that
    needs no wait costs no task.

    `holds_turn`: the connection's next requests wait until it has finished (Kafka's muted channel), for a
    wait that a later request must not overtake — a Produce retrying its transaction's verification, whose
    producer's next batches would otherwise be appended first."""

    __slots__ = ("finish", "holds_turn")

    def __init__(self, finish: Callable[[], Awaitable[Body_co | None]], holds_turn: bool = False) -> None:
        self.finish = finish
        self.holds_turn = holds_turn
