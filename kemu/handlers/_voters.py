"""What AddRaftVoter and RemoveRaftVoter share: the checks KafkaRaftClient makes of a voter change before its
AddVoterHandler or RemoveVoterHandler looks at the quorum, and the refusal kemu's quorum gives every change.

kemu's controller is the one voter of a KRaft quorum with a static voter set (kraft.version 0: as a node started
with `controller.quorum.voters`, the way Kafka's reference node is; see k55_describe_quorum). The request is the
controller's to answer (a broker forwards it), once ALTER on the cluster is allowed, and the controller is the
quorum's leader, so it is checked as the leader checks it: the cluster id, when the request names one, must be
the cluster's (INCONSISTENT_CLUSTER_ID); the voter must have an id of 0 or more and a directory id
(INVALID_REQUEST); AddRaftVoter's listeners must include the quorum's CONTROLLER listener (INVALID_REQUEST). A
request that passes asks for a reconfiguration that kraft.version 0 does not support: UNSUPPORTED_VERSION, the
voter set unchanged. No request reaches the steps after that check (whether the voter is in the set, the new
voter's ApiVersions, its catch-up), so kemu has none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.handlers.k55_describe_quorum import CONTROLLER_LISTENER
from kemu.hashing import java_hash_order, java_string_hash
from kemu.wire.errors import ErrorCode
from kemu.wire.schema import ZERO_UUID

if TYPE_CHECKING:
    from kemu.wire.messages.k80_add_raft_voter import AddRaftVoterRequestListeners, AddRaftVoterResponse
    from kemu.wire.messages.k81_remove_raft_voter import RemoveRaftVoterRequest

KRAFT_VERSION_FEATURE = "kraft.version"
KRAFT_VERSION = 0  # a static voter set: no reconfiguration (KRaftVersion.isReconfigSupported is false)

Refusal = tuple[ErrorCode, str]


def refused(ctx: RequestContext, body: RemoveRaftVoterRequest,
            listeners: list[AddRaftVoterRequestListeners] | None) -> Refusal:
    """Why the voter change is refused: an AddRaftVoter's with its `listeners`, a RemoveRaftVoter's without
    (AddRaftVoter's request is RemoveRaftVoter's with more fields, so either fits `body`); after the checks
    every change fails on the kraft.version."""
    change = "Remove" if listeners is None else "Add"
    authz.require_cluster(ctx, authz.ALTER)
    given = body["cluster_id"]
    if given is not None and given != ctx.broker.cluster_id:
        return (ErrorCode.INCONSISTENT_CLUSTER_ID,
                f'The given id "{given}" doesn\'t match the cluster id "{ctx.broker.cluster_id}"')
    if body["voter_id"] < 0 or body["voter_directory_id"] == ZERO_UUID:
        return ErrorCode.INVALID_REQUEST, f"{change} voter request didn't include a valid voter"
    if listeners is not None:
        endpoints = _endpoints(listeners)
        if CONTROLLER_LISTENER not in endpoints:
            return ErrorCode.INVALID_REQUEST, (
                f"Add voter request didn't include the endpoint ({_endpoints_text(endpoints)}) for the default "
                f"listener ListenerName({CONTROLLER_LISTENER})")
    verb = "adding" if change == "Add" else "removing"
    return (ErrorCode.UNSUPPORTED_VERSION,
            f"Cluster doesn't support {verb} voter because the {KRAFT_VERSION_FEATURE} feature is {KRAFT_VERSION}")


def _endpoints(listeners: list[AddRaftVoterRequestListeners]) -> dict[str, str]:
    """Endpoints.fromAddVoterRequest: each listener by its normalised (upper-case) name, the last of a name
    winning, to its unresolved address as Java's InetSocketAddress prints it."""
    found: dict[str, str] = {}
    for listener in listeners:
        found[listener["name"].upper()] = f"{listener['host']}/<unresolved>:{listener['port']}"
    return found


def _endpoints_text(endpoints: dict[str, str]) -> str:
    """Endpoints.toString: its HashMap, made `new HashMap<>(listeners.size())`, keyed by ListenerName (whose
    hash is its name's)."""
    ordered = java_hash_order(endpoints, java_string_hash, sized=len(endpoints))
    return "Endpoints(endpoints={" + ", ".join(f"ListenerName({name})={endpoints[name]}" for name in ordered) + "})"


def answer(refusal: Refusal) -> AddRaftVoterResponse:
    # RemoveRaftVoter's response has the same fields: the one type is the other's.
    code, message = refusal
    return {"error_code": int(code), "error_message": message}


def error_response(code: ErrorCode) -> AddRaftVoterResponse:
    """Add/RemoveRaftVoterRequest.getErrorResponse: the error with its default message (Errors.message), not the
    exception's."""
    return {"error_code": int(code), "error_message": code.message}
