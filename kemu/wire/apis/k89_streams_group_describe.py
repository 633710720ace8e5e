"""StreamsGroupDescribe (key 89), version 0; flexible (KIP-1071, streams groups).

Kafka 4.3 serves v0 only. Describes streams groups: state, group and assignment epochs, the topology the
group was initialized with (its sub-topologies with the partition counts of their internal topics resolved;
null sub-topologies while the group is not configured), and every member with its process, endpoint, client
tags, task offsets, and current and target assignment of active, standby and warm-up tasks.
"""

from kemu.wire.apis._streams import ENDPOINT, KEY_VALUE, TASK_IDS, TASK_OFFSET, TOPIC_INFO
from kemu.wire.schema import F, api

_ASSIGNMENT = [
    F("active_tasks", "[]", fields=TASK_IDS),
    F("standby_tasks", "[]", fields=TASK_IDS),
    F("warmup_tasks", "[]", fields=TASK_IDS),
]

API = api(
    89, "StreamsGroupDescribe", "0", "0+",
    request=[
        F("group_ids", "[]string"),
        F("include_authorized_operations", "bool"),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("groups", "[]", fields=[
            F("error_code", "int16"),
            F("error_message", "string", nullable="0+", default=None),
            F("group_id", "string"),
            F("group_state", "string"),
            F("group_epoch", "int32"),
            F("assignment_epoch", "int32"),
            F("topology", "{}", nullable="0+", default=None, fields=[
                F("epoch", "int32"),
                F("subtopologies", "[]", nullable="0+", default=None, fields=[
                    F("subtopology_id", "string"),
                    F("source_topics", "[]string"),
                    F("repartition_sink_topics", "[]string"),
                    F("state_changelog_topics", "[]", fields=TOPIC_INFO),
                    F("repartition_source_topics", "[]", fields=TOPIC_INFO),
                ]),
            ]),
            F("members", "[]", fields=[
                F("member_id", "string"),
                F("member_epoch", "int32"),
                F("instance_id", "string", nullable="0+", default=None),
                F("rack_id", "string", nullable="0+", default=None),
                F("client_id", "string"),
                F("client_host", "string"),
                F("topology_epoch", "int32"),
                F("process_id", "string"),
                F("user_endpoint", "{}", nullable="0+", default=None, fields=ENDPOINT),
                F("client_tags", "[]", fields=KEY_VALUE),
                F("task_offsets", "[]", fields=TASK_OFFSET),
                F("task_end_offsets", "[]", fields=TASK_OFFSET),
                F("assignment", "{}", fields=_ASSIGNMENT),
                F("target_assignment", "{}", fields=_ASSIGNMENT),
                F("is_classic", "bool"),
            ]),
            F("authorized_operations", "int32", default=-2147483648),
        ]),
    ],
)
