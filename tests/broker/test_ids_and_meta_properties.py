from __future__ import annotations

import re
from pathlib import Path

import pytest

from kemu.broker import meta_properties
from kemu.broker.ids import new_cluster_id, random_uuid, uuid_text


def test_cluster_ids_look_like_kafkas() -> None:
    for _ in range(200):
        cluster_id = new_cluster_id()
        assert re.fullmatch(r"[A-Za-z0-9_-]{22}", cluster_id) and not cluster_id.startswith("-")


def test_random_uuids_are_v4_and_never_reserved() -> None:
    for _ in range(200):
        value = random_uuid()
        assert value.version == 4 and value.int not in (0, 1)
        assert not uuid_text(value).startswith("-")


def test_meta_properties_pins_the_cluster_id(tmp_path: Path) -> None:
    first = meta_properties.load_or_format(tmp_path, 1, None)
    assert meta_properties.load_or_format(tmp_path, 1, None) == first
    props = meta_properties.read(tmp_path)
    assert props is not None
    assert props["cluster.id"] == first and props["node.id"] == "1" and props["version"] == "1"
    assert "directory.id" in props


def test_meta_properties_refuses_another_node(tmp_path: Path) -> None:
    meta_properties.load_or_format(tmp_path, 1, None)
    with pytest.raises(meta_properties.MetaPropertiesError, match="Stored node id 1 doesn't match"):
        meta_properties.load_or_format(tmp_path, 2, None)
