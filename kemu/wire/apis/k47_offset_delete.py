"""OffsetDelete (key 47), version 0 only, never flexible.

Deletes a group's committed offsets for the given partitions (KIP-496). The response puts its error code
before the throttle time, unlike most.
"""

from kemu.wire.schema import F, api

API = api(
    47, "OffsetDelete", "0", "none",
    request=[
        F("group_id", "string"),
        F("topics", "[]", fields=[
            F("name", "string"),
            F("partitions", "[]", fields=[
                F("partition_index", "int32"),
            ]),
        ]),
    ],
    response=[
        F("error_code", "int16"),
        F("throttle_time_ms", "int32"),
        F("topics", "[]", fields=[
            F("name", "string"),
            F("partitions", "[]", fields=[
                F("partition_index", "int32"),
                F("error_code", "int16"),
            ]),
        ]),
    ],
)
