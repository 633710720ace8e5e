"""One declaration per Kafka API, in modules named by key (`k18_api_versions.py`), each exporting `API`.

A declaration is imported when its API is first used (`get_api`): a broker answering its first requests
should not pay for declaring the ~50 APIs it may never be asked for. `VERSIONS` holds each declaration's
version range, so the broker can advertise them all (ApiVersions) without importing one; a declaration
whose range differs from its entry here is refused when it loads (tests/wire/test_api_registry.py loads
them all).
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from types import MappingProxyType
from typing import Final

from kemu.wire.schema import Api

VERSIONS: Final[Mapping[int, tuple[int, int]]] = MappingProxyType({
    0: (0, 13),  # Produce
    1: (0, 18),  # Fetch
    2: (0, 11),  # ListOffsets
    3: (0, 13),  # Metadata
    8: (0, 10),  # OffsetCommit
    9: (0, 10),  # OffsetFetch
    10: (0, 6),  # FindCoordinator
    11: (0, 9),  # JoinGroup
    12: (0, 4),  # Heartbeat
    13: (0, 5),  # LeaveGroup
    14: (0, 5),  # SyncGroup
    15: (0, 6),  # DescribeGroups
    16: (0, 5),  # ListGroups
    17: (0, 1),  # SaslHandshake
    18: (0, 4),  # ApiVersions
    19: (0, 7),  # CreateTopics
    20: (0, 6),  # DeleteTopics
    21: (0, 2),  # DeleteRecords
    22: (0, 5),  # InitProducerId
    23: (0, 4),  # OffsetForLeaderEpoch
    24: (0, 5),  # AddPartitionsToTxn
    25: (0, 4),  # AddOffsetsToTxn
    26: (0, 5),  # EndTxn
    27: (0, 2),  # WriteTxnMarkers
    28: (0, 5),  # TxnOffsetCommit
    29: (0, 3),  # DescribeAcls
    30: (0, 3),  # CreateAcls
    31: (0, 3),  # DeleteAcls
    32: (0, 4),  # DescribeConfigs
    33: (0, 2),  # AlterConfigs
    34: (1, 2),  # AlterReplicaLogDirs
    35: (0, 5),  # DescribeLogDirs
    36: (0, 2),  # SaslAuthenticate
    37: (0, 3),  # CreatePartitions
    38: (1, 3),  # CreateDelegationToken
    39: (1, 2),  # RenewDelegationToken
    40: (1, 2),  # ExpireDelegationToken
    41: (1, 3),  # DescribeDelegationToken
    42: (0, 2),  # DeleteGroups
    43: (0, 2),  # ElectLeaders
    44: (0, 1),  # IncrementalAlterConfigs
    45: (0, 1),  # AlterPartitionReassignments
    46: (0, 0),  # ListPartitionReassignments
    47: (0, 0),  # OffsetDelete
    48: (0, 1),  # DescribeClientQuotas
    49: (0, 1),  # AlterClientQuotas
    50: (0, 0),  # DescribeUserScramCredentials
    51: (0, 0),  # AlterUserScramCredentials
    55: (0, 2),  # DescribeQuorum
    57: (0, 2),  # UpdateFeatures
    60: (0, 2),  # DescribeCluster
    61: (0, 0),  # DescribeProducers
    64: (0, 0),  # UnregisterBroker
    65: (0, 0),  # DescribeTransactions
    66: (0, 2),  # ListTransactions
    68: (0, 1),  # ConsumerGroupHeartbeat
    69: (0, 1),  # ConsumerGroupDescribe
    71: (0, 0),  # GetTelemetrySubscriptions
    72: (0, 0),  # PushTelemetry
    74: (0, 1),  # ListConfigResources
    75: (0, 0),  # DescribeTopicPartitions
    76: (1, 1),  # ShareGroupHeartbeat (declared only: no handler yet, so not advertised)
    77: (1, 1),  # ShareGroupDescribe (declared only)
    78: (1, 2),  # ShareFetch (declared only)
    79: (1, 2),  # ShareAcknowledge (declared only)
    80: (0, 1),  # AddRaftVoter
    81: (0, 0),  # RemoveRaftVoter
    88: (0, 0),  # StreamsGroupHeartbeat
    89: (0, 0),  # StreamsGroupDescribe
    90: (0, 1),  # DescribeShareGroupOffsets
    91: (0, 0),  # AlterShareGroupOffsets
    92: (0, 0),  # DeleteShareGroupOffsets
})

_MODULE_NAME = re.compile(r"k(\d\d)_\w+")
_loaded: dict[int, Api] = {}


def source_modules(folders: Iterable[str]) -> Iterator[str]:
    """The names of the modules (`name.py`) in a package's folders, each once, folder by folder in file-name
    order: what `pkgutil.iter_modules` lists of kemu's own packages, which hold only source modules, without
    importing pkgutil or asking every file name of every suffix an import could load (~1 ms of a start)."""
    seen: set[str] = set()
    for folder in folders:
        try:
            files = sorted(os.listdir(folder))
        except OSError:
            continue
        for file in files:
            name, dot, suffix = file.partition(".")
            if dot and suffix == "py" and name != "__init__" and name not in seen:
                seen.add(name)
                yield name


@cache
def declaration_modules() -> Mapping[int, str]:
    """Each API key's declaration module, by its file name (nothing imported)."""
    found: dict[int, str] = {}
    for module in source_modules(__path__):
        name = _MODULE_NAME.fullmatch(module)
        if name is None:
            continue
        key = int(name.group(1))
        if key in found:
            raise RuntimeError(f"API key {key} declared twice: {found[key]} and {module}")
        found[key] = f"{__name__}.{module}"
    return MappingProxyType(found)


def get_api(key: int) -> Api | None:
    api = _loaded.get(key)
    if api is not None:
        return api
    module_name = declaration_modules().get(key)
    if module_name is None:
        return None
    declared: Api = importlib.import_module(module_name).API
    if declared.key != key:
        raise RuntimeError(f"{module_name} declares API key {declared.key}")
    if VERSIONS.get(key) != (declared.min_version, declared.max_version):
        raise RuntimeError(f"{module_name} declares versions {declared.min_version}-{declared.max_version}; "
                           f"kemu.wire.apis.VERSIONS says {VERSIONS.get(key)}")
    _loaded[key] = declared
    return declared


def all_apis() -> dict[int, Api]:
    found: dict[int, Api] = {}
    for key in declaration_modules():
        api = get_api(key)
        assert api is not None
        found[key] = api
    return found
