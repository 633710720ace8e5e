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
    0: (3, 11),  # Produce: Kafka 4 dropped the pre-record-batch versions
    1: (4, 17),  # Fetch: likewise
    2: (1, 11),  # ListOffsets: Kafka 4 dropped v0
    8: (2, 10),  # OffsetCommit: Kafka 4 dropped v0-1 (KIP-896)
    9: (1, 10),  # OffsetFetch: Kafka 4 dropped v0 (KIP-896)
    19: (2, 7),  # CreateTopics: Kafka 4 dropped v0-1 (KIP-896)
    20: (1, 6),  # DeleteTopics: Kafka 4 dropped v0 (KIP-896)
    23: (2, 4),  # OffsetForLeaderEpoch: Kafka 4 dropped v0-1
    26: (0, 4),  # EndTxn: v5 needs transaction version 2
    27: (1, 2),  # WriteTxnMarkers: Kafka 4 dropped v0 (KIP-896)
    29: (1, 3),  # DescribeAcls: Kafka 4 dropped v0 (KIP-896)
    30: (1, 3),  # CreateAcls: likewise
    31: (1, 3),  # DeleteAcls: likewise
    32: (1, 4),  # DescribeConfigs: Kafka 4 dropped v0 (KIP-896)
    35: (1, 5),  # DescribeLogDirs: Kafka 4 dropped v0 (KIP-896)
})
