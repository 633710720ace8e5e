"""AlterClientQuotas (key 49), versions 0-1 (KIP-546); v1 is flexible, and nothing else changes.

As ControllerApis.handleAlterClientQuotas over ClientQuotaControlManager.alterClientQuotas: ALTER_CONFIGS on
the cluster is required (else every entry gets CLUSTER_AUTHORIZATION_FAILED). An entry's entity is a map, a
type named twice keeping its last name; its ops set a key or, with `remove`, remove it (a key the entity
does not have is no change). Each entity is validated (types user, client-id and ip; ip alone, an address;
no empty names; the keys its types allow, each value positive and whole where the key is an integer), and
refused with INVALID_REQUEST and Kafka's message; a key twice, or an entity twice, refuses the entity. What
passes is applied together unless `validate_only`, and enforced from the next request on. The results come
one per entity, in Kafka's HashMap order. More than the controller's 10,000 changes (a key set to a new value
or removed, one record each) apply none, validate_only or not: the request's error response, every entry
POLICY_VIOLATION with that error's own message (the controller's is not passed on).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kemu.broker.client_quotas import Alteration, Op, entity_data, request_order
from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k49_alter_client_quotas import AlterClientQuotasRequest, AlterClientQuotasResponse

KEY = 49


async def handle(ctx: RequestContext, request: Incoming[AlterClientQuotasRequest]) -> AlterClientQuotasResponse:
    authz.require_cluster(ctx, authz.ALTER_CONFIGS)
    body = request.body
    alterations = []
    for entry in body["entries"]:
        entity, shown = request_order([(part["entity_type"], part["entity_name"]) for part in entry["entity"]])
        alterations.append(Alteration(entity, [Op(op["key"], None if op["remove"] else op["value"])
                                               for op in entry["ops"]], shown))
    broker = ctx.broker
    results = broker.client_quotas.alter(alterations, body["validate_only"])
    if not body["validate_only"]:
        broker.client_quotas_changed()
    return {"entries": [{"error_code": code, "error_message": message, "entity": entity_data(shown)}
                        for shown, code, message in results]}


def error_response(request: Request, code: ErrorCode, message: str | None) -> dict[str, Any]:
    """AlterClientQuotasRequest.getErrorResponse: every entry, its entity as sent, gets the error with
    Errors.message()."""
    return {"entries": [{"error_code": code, "error_message": code.message, "entity": [
        {"entity_type": part["entity_type"], "entity_name": part["entity_name"]} for part in entry["entity"]]}
        for entry in request.body["entries"]]}
