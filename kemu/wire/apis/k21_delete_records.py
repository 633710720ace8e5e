"""DeleteRecords (key 21), versions 0-2; flexible from v2.

v1 is v0 on the wire (the response may come before throttling); v2 is the first flexible version.
"""

from kemu.wire.schema import F, api

API = api(
    21, "DeleteRecords", "0-2", "2+",
    request=[
        F("topics", "[]", fields=[
            F("name", "string"),
            F("partitions", "[]", fields=[
                F("partition_index", "int32"),
                F("offset", "int64"),
            ]),
        ]),
        F("timeout_ms", "int32"),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("topics", "[]", fields=[
            F("name", "string"),
            F("partitions", "[]", fields=[
                F("partition_index", "int32"),
                F("low_watermark", "int64"),
                F("error_code", "int16"),
            ]),
        ]),
    ],
)
