"""Heartbeat (key 12), versions 0-4; flexible from v4.

- v1: throttle_time_ms. v2: throttled responses sent before throttling.
- v3: group_instance_id for static membership (KIP-345). v4: flexible.
"""

from kemu.wire.schema import F, api

API = api(
    12, "Heartbeat", "0-4", "4+",
    request=[
        F("group_id", "string"),
        F("generation_id", "int32"),
        F("member_id", "string"),
        F("group_instance_id", "string", "3+", nullable="3+", default=None),
    ],
    response=[
        F("throttle_time_ms", "int32", "1+"),
        F("error_code", "int16"),
    ],
)
