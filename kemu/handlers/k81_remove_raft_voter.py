"""RemoveRaftVoter (key 81), version 0, flexible: remove a voter, by id and directory id, from the metadata
quorum (KIP-853).

The checks and the refusal are the leader's (KafkaRaftClient.handleRemoveVoterRequest, then
RemoveVoterHandler), in `_voters`: a request that passes them, whether or not it names a voter of the set, is
UNSUPPORTED_VERSION, "Cluster doesn't support removing voter because the kraft.version feature is 0".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kemu.handlers import _voters
from kemu.handlers.context import RequestContext
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k81_remove_raft_voter import RemoveRaftVoterRequest, RemoveRaftVoterResponse

KEY = 81


async def handle(ctx: RequestContext, request: Incoming[RemoveRaftVoterRequest]) -> RemoveRaftVoterResponse:
    return _voters.answer(_voters.refused(ctx, request.body, None))


def error_response(request: Incoming[Any], code: ErrorCode, message: str | None) -> RemoveRaftVoterResponse:
    return _voters.error_response(code)
