"""CreatePartitions (key 37), versions 0-3; flexible from v2.

v1 is v0 on the wire (the response may come before throttling); v2 is flexible; v3 may answer
THROTTLING_QUOTA_EXCEEDED (KIP-599). Null assignments let the controller place the new partitions.
"""

from kemu.wire.schema import F, api

API = api(
    37, "CreatePartitions", "0-3", "2+",
    request=[
        F("topics", "[]", fields=[
            F("name", "string"),
            F("count", "int32"),
            F("assignments", "[]", nullable="0+", fields=[
                F("broker_ids", "[]int32"),
            ]),
        ]),
        F("timeout_ms", "int32"),
        F("validate_only", "bool"),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("results", "[]", fields=[
            F("name", "string"),
            F("error_code", "int16"),
            F("error_message", "string", nullable="0+", default=None),
        ]),
    ],
)
