"""DeleteShareGroupOffsets (key 92), version 0; flexible (KIP-932, share groups).

Deletes a share group's state of whole topics (every share-partition of each); Kafka allows it only while
the group has no members.
"""

from kemu.wire.schema import F, api

API = api(
    92, "DeleteShareGroupOffsets", "0", "0+",
    request=[
        F("group_id", "string"),
        F("topics", "[]", fields=[
            F("topic_name", "string"),
        ]),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("error_message", "string", nullable="0+", default=None),
        F("responses", "[]", fields=[
            F("topic_name", "string"),
            F("topic_id", "uuid"),
            F("error_code", "int16"),
            F("error_message", "string", nullable="0+", default=None),
        ]),
    ],
)
