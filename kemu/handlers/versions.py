"""The version ranges of the APIs kemu answers in fewer versions than `kemu.wire.apis` declares.

The registry reads this table instead of the handler modules so that start-up does not import them: all of
them together pull in the core packages and cost about 110 ms before a broker can answer its first
Metadata. Each narrowed module sets its own `VERSIONS` from here, so the two cannot disagree. Why a range
stops where it does is in that module's opening note; an API missing here is answered in every version
its wire declaration has.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

NARROWED: Final[Mapping[int, tuple[int, int]]] = MappingProxyType({
    0: (3, 13),  # Produce: Kafka 4 dropped the pre-record-batch versions (advertised from 0: ADVERTISED_MIN)
    1: (4, 18),  # Fetch: likewise
    2: (1, 11),  # ListOffsets: Kafka 4 dropped v0
    8: (2, 10),  # OffsetCommit: Kafka 4 dropped v0-1 (KIP-896)
    9: (1, 10),  # OffsetFetch: Kafka 4 dropped v0 (KIP-896)
    19: (2, 7),  # CreateTopics: Kafka 4 dropped v0-1 (KIP-896)
    20: (1, 6),  # DeleteTopics: Kafka 4 dropped v0 (KIP-896)
    23: (2, 4),  # OffsetForLeaderEpoch: Kafka 4 dropped v0-1
    27: (1, 2),  # WriteTxnMarkers: Kafka 4 dropped v0 (KIP-896)
    29: (1, 3),  # DescribeAcls: Kafka 4 dropped v0 (KIP-896)
    30: (1, 3),  # CreateAcls: likewise
    31: (1, 3),  # DeleteAcls: likewise
    32: (1, 4),  # DescribeConfigs: Kafka 4 dropped v0 (KIP-896)
    35: (1, 5),  # DescribeLogDirs: Kafka 4 dropped v0 (KIP-896)
})

ADVERTISED_MIN: Final[Mapping[int, int]] = MappingProxyType({
    # Produce: Kafka 4 serves v3+ and closes the connection on v0-2, yet advertises v0 in ApiVersions
    # on its broker listener (ApiKeys.PRODUCE_API_VERSIONS_RESPONSE_MIN_VERSION): librdkafka's compressed
    # produce fails unless the broker lists Produce v0 (KAFKA-18659).
    0: 0,
})
"""The minimum ApiVersions advertises where it is below the lowest version served (NARROWED)."""
