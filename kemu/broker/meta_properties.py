"""The data directory's `meta.properties`, as `kafka-storage.sh format` writes it for a KRaft node.

It pins the cluster id and node id to the directory, so a restart with the same `--data-dir` keeps its
cluster id, and a directory formatted for another node is refused, as Kafka refuses it.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from kemu.broker.ids import new_cluster_id, random_uuid, uuid_text

FILE_NAME = "meta.properties"


class MetaPropertiesError(Exception):
    pass


def read(data_dir: str | os.PathLike[str]) -> dict[str, str] | None:
    path = Path(data_dir) / FILE_NAME
    if not path.exists():
        return None
    props: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "!")) or "=" not in line:
            continue
        key, value = line.split("=", 1)
        props[key.strip()] = value.strip()
    return props


def load_or_format(data_dir: str | os.PathLike[str], node_id: int, cluster_id: str | None) -> str:
    """The directory's cluster id, writing meta.properties first if the directory is new."""
    existing = read(data_dir)
    if existing is not None:
        stored_node = existing.get("node.id")
        if stored_node is not None and stored_node != str(node_id):
            raise MetaPropertiesError(
                f"Stored node id {stored_node} doesn't match previous node id {node_id} in {data_dir}")
        stored_cluster = existing.get("cluster.id")
        if stored_cluster is None:
            raise MetaPropertiesError(f"{Path(data_dir) / FILE_NAME} has no cluster.id")
        if cluster_id is not None and cluster_id != stored_cluster:
            raise MetaPropertiesError(
                f"Invalid cluster.id in {Path(data_dir) / FILE_NAME}. Expected {cluster_id}, "
                f"but read {stored_cluster}")
        return stored_cluster
    chosen = cluster_id or new_cluster_id()
    Path(data_dir).mkdir(parents=True, exist_ok=True)
    text = (f"#\n#{time.strftime('%a %b %d %H:%M:%S UTC %Y', time.gmtime())}\n"
            f"cluster.id={chosen}\ndirectory.id={uuid_text(random_uuid())}\nnode.id={node_id}\nversion=1\n")
    tmp = Path(data_dir) / (FILE_NAME + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, Path(data_dir) / FILE_NAME)
    return chosen
