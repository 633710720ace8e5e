"""SyncGroup (key 14), versions 0-5; flexible from v4.

- v1: throttle_time_ms. v2: throttled responses sent before throttling.
- v3: group_instance_id for static membership (KIP-345). v4: flexible.
- v5: protocol_type and protocol_name both ways; the broker answers INCONSISTENT_GROUP_PROTOCOL when the
  request's disagree with the group's (KIP-559).
"""

from kemu.wire.schema import F, api

API = api(
    14, "SyncGroup", "0-5", "4+",
    request=[
        F("group_id", "string"),
        F("generation_id", "int32"),
        F("member_id", "string"),
        F("group_instance_id", "string", "3+", nullable="3+", default=None),
        F("protocol_type", "string", "5+", nullable="5+", default=None),
        F("protocol_name", "string", "5+", nullable="5+", default=None),
        F("assignments", "[]", fields=[
            F("member_id", "string"),
            F("assignment", "bytes"),
        ]),
    ],
    response=[
        F("throttle_time_ms", "int32", "1+"),
        F("error_code", "int16"),
        F("protocol_type", "string", "5+", nullable="5+", default=None),
        F("protocol_name", "string", "5+", nullable="5+", default=None),
        F("assignment", "bytes"),
    ],
)
