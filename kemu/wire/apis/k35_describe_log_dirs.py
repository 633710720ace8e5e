"""DescribeLogDirs (key 35), versions 0-5; flexible from v2.

v1 is v0 on the wire (the response may come before throttling); v2 is flexible; v3 adds a top-level error
code to the response; v4 adds each log directory's total and usable bytes; v5 whether it is cordoned
(KIP-1066). A null topic list asks for all.
"""

from kemu.wire.schema import F, api

API = api(
    35, "DescribeLogDirs", "0-5", "2+",
    request=[
        F("topics", "[]", nullable="0+", fields=[
            F("topic", "string"),
            F("partitions", "[]int32"),
        ]),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16", "3+"),
        F("results", "[]", fields=[
            F("error_code", "int16"),
            F("log_dir", "string"),
            F("topics", "[]", fields=[
                F("name", "string"),
                F("partitions", "[]", fields=[
                    F("partition_index", "int32"),
                    F("partition_size", "int64"),
                    F("offset_lag", "int64"),
                    F("is_future_key", "bool"),
                ]),
            ]),
            F("total_bytes", "int64", "4+", default=-1),
            F("usable_bytes", "int64", "4+", default=-1),
            F("is_cordoned", "bool", "5+", default=False),
        ]),
    ],
)
