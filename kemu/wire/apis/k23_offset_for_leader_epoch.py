"""OffsetForLeaderEpoch (key 23), versions 0-4; flexible from v4.

v1 adds the leader epoch to the response; v2 adds the current leader epoch (fencing) to the request and the
throttle time to the response; v3 adds the replica id (default -2, a "debug" consumer); v4 is flexible.
"""

from kemu.wire.schema import F, api

API = api(
    23, "OffsetForLeaderEpoch", "0-4", "4+",
    request=[
        F("replica_id", "int32", "3+", default=-2),
        F("topics", "[]", fields=[
            F("topic", "string"),
            F("partitions", "[]", fields=[
                F("partition", "int32"),
                F("current_leader_epoch", "int32", "2+", default=-1),
                F("leader_epoch", "int32"),
            ]),
        ]),
    ],
    response=[
        F("throttle_time_ms", "int32", "2+"),
        F("topics", "[]", fields=[
            F("topic", "string"),
            F("partitions", "[]", fields=[
                F("error_code", "int16"),
                F("partition", "int32"),
                F("leader_epoch", "int32", "1+", default=-1),
                F("end_offset", "int64", default=-1),
            ]),
        ]),
    ],
)
