"""AddRaftVoter (key 80), versions 0-1, flexible: add a voter to the metadata quorum (KIP-853).

v1 adds ack_when_committed, which only says when a change that is made would be answered: kemu's static quorum
makes none. The checks and the refusal are the leader's (KafkaRaftClient.handleAddVoterRequest, then
AddVoterHandler), in `_voters`: a request that passes them is UNSUPPORTED_VERSION, "Cluster doesn't support adding
voter because the kraft.version feature is 0".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kemu.handlers import _voters
from kemu.handlers.context import RequestContext
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k80_add_raft_voter import AddRaftVoterRequest, AddRaftVoterResponse

KEY = 80


async def handle(ctx: RequestContext, request: Incoming[AddRaftVoterRequest]) -> AddRaftVoterResponse:
    return _voters.answer(_voters.refused(ctx, request.body, request.body["listeners"]))


def error_response(request: Incoming[Any], code: ErrorCode, message: str | None) -> AddRaftVoterResponse:
    return _voters.error_response(code)
