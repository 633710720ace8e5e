"""RemoveRaftVoter (key 81), version 0; flexible.

Removes a voter, named by its id and directory id, from the KRaft quorum of the metadata log (KIP-853); a
broker forwards it to the controller.
"""

from kemu.wire.schema import F, api

API = api(
    81, "RemoveRaftVoter", "0", "0+",
    request=[
        F("cluster_id", "string", nullable="0+"),
        F("voter_id", "int32"),
        F("voter_directory_id", "uuid"),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("error_message", "string", nullable="0+", default=None),
    ],
)
