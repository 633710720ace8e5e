"""UnregisterBroker (key 64), version 0, flexible: the controller forgets a broker's registration.

As ControllerApis.handleUnregisterBroker and ReplicationControlManager.unregisterBroker answer it (a broker
forwards the request to the controller): ALTER on the cluster is required; an id no broker is registered with
(never one of the cluster's, or unregistered already) is BROKER_ID_NOT_REGISTERED, "Broker ID <id> is not
currently registered". A registered broker is unregistered (BrokerCore.unregister_node): a stopped one is no
longer listed among the fenced brokers; a running one leaves its partitions' ISRs and leaderships, as a fenced
one does, and stays unregistered (still serving its listener) until it is next started, as a Kafka broker
whose heartbeats the controller refuses until it restarts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k64_unregister_broker import UnregisterBrokerRequest, UnregisterBrokerResponse

KEY = 64


async def handle(ctx: RequestContext, request: Incoming[UnregisterBrokerRequest]) -> UnregisterBrokerResponse:
    # The controller authorizes it (ControllerApis), and its refusal quotes the request as AuthHelper words it.
    authz.authorize_cluster_operation(ctx, request, authz.ALTER)
    ctx.broker.unregister_node(request.body["broker_id"])
    return {"error_code": 0, "error_message": None}


def error_response(request: Request, code: ErrorCode, message: str | None) -> dict[str, Any]:
    """UnregisterBrokerRequest.getErrorResponse: the error with the exception's own message."""
    return {"error_code": int(code), "error_message": code.message if message is None else message}
