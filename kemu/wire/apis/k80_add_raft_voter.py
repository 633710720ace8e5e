"""AddRaftVoter (key 80), versions 0-1; flexible in all versions.

Adds a voter to the KRaft quorum of the metadata log (KIP-853, dynamic quorums); a broker forwards it to the
controller. v1 adds ack_when_committed (false: answer once the leader wrote the new voter set, not once it is
committed).
"""

from kemu.wire.schema import F, api

API = api(
    80, "AddRaftVoter", "0-1", "0+",
    request=[
        F("cluster_id", "string", nullable="0+"),
        F("timeout_ms", "int32"),
        F("voter_id", "int32"),
        F("voter_directory_id", "uuid"),
        F("listeners", "[]", fields=[
            F("name", "string"),
            F("host", "string"),
            F("port", "uint16"),
        ]),
        F("ack_when_committed", "bool", "1+", default=True),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("error_message", "string", nullable="0+", default=None),
    ],
)
