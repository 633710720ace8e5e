"""StreamsGroupHeartbeat (key 88), version 0; flexible (KIP-1071, streams groups).

Kafka 4.3 serves v0 only. A Kafka Streams member joins with epoch 0 and its whole topology (sub-topologies,
their source, repartition and changelog topics, co-partition groups), heartbeats with the tasks it owns
(active, standby, warm-up; null when unchanged) and leaves with -1 (-2 for a static member coming back). The
response carries the tasks the broker assigned it, the group's status (missing or mis-partitioned topics),
and the partitions each user endpoint serves for interactive queries.
"""

from kemu.wire.apis._streams import ENDPOINT, KEY_VALUE, TASK_IDS, TASK_OFFSET, TOPIC_INFO
from kemu.wire.schema import F, api

API = api(
    88, "StreamsGroupHeartbeat", "0", "0+",
    request=[
        F("group_id", "string"),
        F("member_id", "string"),
        F("member_epoch", "int32"),
        F("endpoint_information_epoch", "int32"),
        F("instance_id", "string", nullable="0+", default=None),
        F("rack_id", "string", nullable="0+", default=None),
        F("rebalance_timeout_ms", "int32", default=-1),
        F("topology", "{}", nullable="0+", default=None, fields=[
            F("epoch", "int32"),
            F("subtopologies", "[]", fields=[
                F("subtopology_id", "string"),
                F("source_topics", "[]string"),
                F("source_topic_regex", "[]string"),
                F("state_changelog_topics", "[]", fields=TOPIC_INFO),
                F("repartition_sink_topics", "[]string"),
                F("repartition_source_topics", "[]", fields=TOPIC_INFO),
                F("copartition_groups", "[]", fields=[
                    F("source_topics", "[]int16"),
                    F("source_topic_regex", "[]int16"),
                    F("repartition_source_topics", "[]int16"),
                ]),
            ]),
        ]),
        F("active_tasks", "[]", nullable="0+", default=None, fields=TASK_IDS),
        F("standby_tasks", "[]", nullable="0+", default=None, fields=TASK_IDS),
        F("warmup_tasks", "[]", nullable="0+", default=None, fields=TASK_IDS),
        F("process_id", "string", nullable="0+", default=None),
        F("user_endpoint", "{}", nullable="0+", default=None, fields=ENDPOINT),
        F("client_tags", "[]", nullable="0+", default=None, fields=KEY_VALUE),
        F("task_offsets", "[]", nullable="0+", default=None, fields=TASK_OFFSET),
        F("task_end_offsets", "[]", nullable="0+", default=None, fields=TASK_OFFSET),
        F("shutdown_application", "bool", default=False),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("error_message", "string", nullable="0+", default=None),
        F("member_id", "string"),
        F("member_epoch", "int32"),
        F("heartbeat_interval_ms", "int32"),
        F("acceptable_recovery_lag", "int32"),
        F("task_offset_interval_ms", "int32"),
        F("status", "[]", nullable="0+", fields=[
            F("status_code", "int8"),
            F("status_detail", "string"),
        ]),
        F("active_tasks", "[]", nullable="0+", default=None, fields=TASK_IDS),
        F("standby_tasks", "[]", nullable="0+", default=None, fields=TASK_IDS),
        F("warmup_tasks", "[]", nullable="0+", default=None, fields=TASK_IDS),
        F("endpoint_information_epoch", "int32"),
        F("partitions_by_user_endpoint", "[]", nullable="0+", default=None, fields=[
            F("user_endpoint", "{}", fields=ENDPOINT),
            F("active_partitions", "[]", fields=[
                F("topic", "string"),
                F("partitions", "[]int32"),
            ]),
            F("standby_partitions", "[]", fields=[
                F("topic", "string"),
                F("partitions", "[]int32"),
            ]),
        ]),
    ],
)
