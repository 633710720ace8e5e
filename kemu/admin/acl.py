"""Authorized-operations bitfields, as a broker without an authorizer reports them.

With no authorizer configured Kafka grants every operation a resource type supports, and encodes the set
as a 32-bit field with bit n set for the ACL operation with code n (READ 3, WRITE 4, CREATE 5, DELETE 6,
ALTER 7, DESCRIBE 8, CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12).
"""

from __future__ import annotations

NOT_REQUESTED = -2147483648  # Integer.MIN_VALUE: the client did not ask


def _bits(*codes: int) -> int:
    return sum(1 << code for code in codes)


TOPIC_OPERATIONS = _bits(3, 4, 5, 6, 7, 8, 10, 11)
CLUSTER_OPERATIONS = _bits(5, 7, 8, 9, 10, 11, 12)
GROUP_OPERATIONS = _bits(3, 6, 8, 10, 11)
TRANSACTIONAL_ID_OPERATIONS = _bits(4, 8)
