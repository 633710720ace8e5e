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
    try:
        with open(os.path.join(data_dir, FILE_NAME), encoding="utf-8") as file:
            text = file.read()
    except (FileNotFoundError, NotADirectoryError):  # as Path.exists: none there
        return None
    props: dict[str, str] = {}
    for line in text.splitlines():
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
    os.makedirs(data_dir, exist_ok=True)
    text = (f"#\n#{time.strftime('%a %b %d %H:%M:%S UTC %Y', time.gmtime())}\n"
            f"cluster.id={chosen}\ndirectory.id={uuid_text(random_uuid())}\nnode.id={node_id}\nversion=1\n")
    # os rather than pathlib: every test broker writes this file, and pathlib's paths cost more than the writing.
    path = os.path.join(data_dir, FILE_NAME)
    with open(path + ".tmp", "w", encoding="utf-8") as file:
        file.write(text)
    os.replace(path + ".tmp", path)
    return chosen
