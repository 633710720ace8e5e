"""ShareFetch (key 78), versions 1-2; flexible (KIP-932, share groups).

- v1: the first stable version. Fetches from a share session (epoch 0 opens it, -1 closes it) and carries
  acknowledgements of earlier deliveries; the response names the acquired records (offset ranges with their
  delivery counts) and the acquisition lock timeout. max_records and batch_size bound the acquisition.
- v2: share_acquire_mode (0 batch-optimized, 1 record-limit; KIP-1206) and is_renew_ack, acknowledge type 4
  RENEW extending the locks (KIP-1222).

Acknowledge types: 0 gap, 1 accept, 2 release, 3 reject, 4 renew (v2). Kafka's partition_max_bytes exists in
v0 only, which 4.3 no longer has, so it is left out; the records of a partition are not nullable from v1.
"""

from kemu.wire.schema import F, api

_ACKNOWLEDGEMENT_BATCHES = F("acknowledgement_batches", "[]", fields=[
    F("first_offset", "int64"),
    F("last_offset", "int64"),
    F("acknowledge_types", "[]int8"),
])

_NODE_ENDPOINTS = F("node_endpoints", "[]", fields=[
    F("node_id", "int32"),
    F("host", "string"),
    F("port", "int32"),
    F("rack", "string", nullable="0+", default=None),
])

API = api(
    78, "ShareFetch", "1-2", "0+",
    request=[
        F("group_id", "string", nullable="0+", default=None),
        F("member_id", "string", nullable="0+"),
        F("share_session_epoch", "int32"),
        F("max_wait_ms", "int32"),
        F("min_bytes", "int32"),
        F("max_bytes", "int32", default=0x7FFFFFFF),
        F("max_records", "int32", "1+"),
        F("batch_size", "int32", "1+"),
        F("share_acquire_mode", "int8", "2+", default=0),
        F("is_renew_ack", "bool", "2+", default=False),
        F("topics", "[]", fields=[
            F("topic_id", "uuid"),
            F("partitions", "[]", fields=[
                F("partition_index", "int32"),
                _ACKNOWLEDGEMENT_BATCHES,
            ]),
        ]),
        F("forgotten_topics_data", "[]", fields=[
            F("topic_id", "uuid"),
            F("partitions", "[]int32"),
        ]),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("error_message", "string", nullable="0+", default=None),
        F("acquisition_lock_timeout_ms", "int32", "1+"),
        F("responses", "[]", fields=[
            F("topic_id", "uuid"),
            F("partitions", "[]", fields=[
                F("partition_index", "int32"),
                F("error_code", "int16"),
                F("error_message", "string", nullable="0+", default=None),
                F("acknowledge_error_code", "int16"),
                F("acknowledge_error_message", "string", nullable="0+", default=None),
                F("current_leader", "{}", fields=[
                    F("leader_id", "int32"),
                    F("leader_epoch", "int32"),
                ]),
                F("records", "records", default=b""),  # not nullable from v1: absent is empty
                F("acquired_records", "[]", fields=[
                    F("first_offset", "int64"),
                    F("last_offset", "int64"),
                    F("delivery_count", "int16"),
                ]),
            ]),
        ]),
        _NODE_ENDPOINTS,
    ],
)
