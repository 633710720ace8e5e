"""UpdateFeatures (key 57), versions 0-2: `kafka-features upgrade/downgrade`, Admin.updateFeatures.

As Kafka's controller (QuorumController.updateFeatures, FeatureControlManager) takes it, ALTER on the
cluster asked first: every update is checked in turn, and the first refused one refuses them all —
INVALID_UPDATE_VERSION with "The update failed for all features since the following feature had an error: "
and its reason (kemu.broker.features.Features.update has the checks); otherwise all are made at once,
unless `validate_only` (v1+). The upgrade type is v1's field, 1 (upgrade) unless given: v0's allow_downgrade
is not read (the controller reads only the upgrade type, whose default is an upgrade), so a v0 downgrade is
refused as Kafka refuses it. Up to v1 a success lists each feature with NONE (and "NONE" for its message,
Errors.NONE's, as Kafka sends it); v2 lists none, nor does an error in any version.

A client sees a new finalized level, and the epoch moved on, in the ApiVersions of its next connection.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import error_responder
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k57_update_features import (
        UpdateFeaturesRequest,
        UpdateFeaturesResponse,
        UpdateFeaturesResponseResults,
    )

KEY = 57
FIRST_WITH_UPGRADE_TYPE = 1
LAST_WITH_RESULTS = 1
_UPGRADE = 1


async def handle(ctx: RequestContext, request: Incoming[UpdateFeaturesRequest]) -> UpdateFeaturesResponse:
    body, version = request.body, request.version
    authz.authorize_cluster_operation(ctx, request, authz.ALTER)
    updates = {entry["feature"]: (entry["feature"], entry["max_version_level"],
                                  entry["upgrade_type"] if version >= FIRST_WITH_UPGRADE_TYPE else _UPGRADE)
               for entry in body["feature_updates"]}
    validate_only = bool(body["validate_only"]) if version >= FIRST_WITH_UPGRADE_TYPE else False
    refused = ctx.broker.features.update(list(updates.values()), validate_only, ctx.broker.controller_id)
    if refused is not None:
        return {"error_code": ErrorCode.INVALID_UPDATE_VERSION, "results": [], "error_message":
                f"The update failed for all features since the following feature had an error: {refused}"}
    results: list[UpdateFeaturesResponseResults] = [
        {"feature": name, "error_code": 0, "error_message": ErrorCode.NONE.name} for name in updates
    ] if version <= LAST_WITH_RESULTS else []
    return {"error_code": 0, "error_message": None, "results": results}


error_response = error_responder(KEY)
