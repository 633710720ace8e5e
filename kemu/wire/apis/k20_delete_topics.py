"""DeleteTopics (key 20), versions 0-6; flexible from v4.

v1 adds throttle time; v3 may answer TOPIC_DELETION_DISABLED; v5 adds per-topic error messages; v6 names
topics by name or by id (a null name), replacing the plain list of names.
"""

from kemu.wire.schema import F, api

API = api(
    20, "DeleteTopics", "0-6", "4+",
    request=[
        F("topics", "[]", "6+", fields=[
            F("name", "string", "6+", nullable="6+", default=None),
            F("topic_id", "uuid", "6+"),
        ]),
        F("topic_names", "[]string", "0-5"),
        F("timeout_ms", "int32"),
    ],
    response=[
        F("throttle_time_ms", "int32", "1+"),
        F("responses", "[]", fields=[
            F("name", "string", nullable="6+"),
            F("topic_id", "uuid", "6+"),
            F("error_code", "int16"),
            F("error_message", "string", "5+", nullable="5+", default=None),
        ]),
    ],
)
