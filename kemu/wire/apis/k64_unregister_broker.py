"""UnregisterBroker (key 64), version 0; flexible.

Removes a broker's registration from the KRaft controller (KIP-631): a broker the cluster is done with, so
that it no longer shows among the fenced brokers. A broker forwards it to the controller.
"""

from kemu.wire.schema import F, api

API = api(
    64, "UnregisterBroker", "0", "0+",
    request=[
        F("broker_id", "int32"),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("error_message", "string", nullable="0+", default=None),
    ],
)
