"""ApiVersions (key 18), versions 0-4.

v1 adds throttle time; v3 is flexible and the client names its software (recorded on the connection;
a name or version outside Kafka's pattern is INVALID_REQUEST); v3+ responses carry the supported and
finalized features (kemu.broker.features: as a new Kafka 4.3 cluster, transaction.version 2 among them, so
the Java producer runs transactions version 2; UpdateFeatures changes them) and zk_migration_ready false;
v4 lists the supported features whose minimum level is 0, which v3 leaves out (KAFKA-17492).
GetTelemetrySubscriptions and PushTelemetry (71, 72) are listed only with a client telemetry receiver
(`kemu.client.telemetry.enable`), as Kafka lists them only when a metrics reporter implements ClientTelemetry;
without one they are still served when asked, as by Kafka.

A request of a version kemu does not support is answered by the server as version 0 with
UNSUPPORTED_VERSION and ApiVersions' own range (KIP-511), before reaching this module.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, cast

from kemu.handlers import all_handlers
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import error_responder
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k18_api_versions import ApiVersionsRequest, ApiVersionsResponse, ApiVersionsResponseApiKeys

KEY = 18

_SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")
_TELEMETRY_KEYS = frozenset({71, 72})


def supported_api_keys(telemetry: bool) -> list[ApiVersionsResponseApiKeys]:
    return [{"api_key": h.key, "min_version": h.advertised_min_version, "max_version": h.max_version}
            for h in all_handlers().values() if telemetry or h.key not in _TELEMETRY_KEYS]


async def handle(ctx: RequestContext, request: Incoming[ApiVersionsRequest]) -> ApiVersionsResponse:
    body = request.body
    telemetry = ctx.broker.config.kemu_client_telemetry_enable
    if request.version >= 3:
        name, version = body["client_software_name"], body["client_software_version"]
        if not (_SOFTWARE.fullmatch(name) and _SOFTWARE.fullmatch(version)):
            return cast("ApiVersionsResponse", error_response(request, ErrorCode.INVALID_REQUEST, None))
        ctx.client.software_name, ctx.client.software_version = name, version
        features = ctx.broker.features
        return {"error_code": 0, "api_keys": supported_api_keys(telemetry),
                "supported_features": features.supported_keys(request.version),
                "finalized_features_epoch": features.epoch, "finalized_features": features.finalized_keys()}
    return {"error_code": 0, "api_keys": supported_api_keys(telemetry)}


def unsupported_version_response() -> dict[str, Any]:
    handler = all_handlers()[KEY]
    return {"error_code": int(ErrorCode.UNSUPPORTED_VERSION),
            "api_keys": [{"api_key": KEY, "min_version": handler.min_version,
                          "max_version": handler.max_version}]}


_no_api_keys = error_responder(KEY)


def error_response(request: Incoming[Any], code: ErrorCode, message: str | None) -> dict[str, Any]:
    if code == ErrorCode.UNSUPPORTED_VERSION:
        return unsupported_version_response()
    return _no_api_keys(request, code, message)
