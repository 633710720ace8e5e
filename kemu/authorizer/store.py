"""The ACLs of a broker, kept in `kemu-acls.json` in its data directory (Kafka keeps them as
AccessControlEntryRecords in its metadata log), so they survive a restart."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from kemu.authorizer.acls import AclBinding, AclOperation, PatternType, PermissionType, ResourceType

ACLS_FILE = "kemu-acls.json"
_FORMAT_VERSION = 1


class AclStore:
    """A set of ACLs in the order they were created; every change is written through before it returns."""

    def __init__(self, data_dir: Path) -> None:
        self._path = data_dir / ACLS_FILE
        self._acls: dict[AclBinding, None] = {}
        if self._path.exists():
            doc = json.loads(self._path.read_text())
            for entry in doc.get("acls", []):
                self._acls[_from_json(entry)] = None

    def __iter__(self) -> Iterator[AclBinding]:
        return iter(list(self._acls))

    def __len__(self) -> int:
        return len(self._acls)

    def __contains__(self, acl: object) -> bool:
        return acl in self._acls

    def add(self, acls: Iterable[AclBinding]) -> None:
        before = len(self._acls)
        self._acls.update(dict.fromkeys(acls))
        if len(self._acls) != before:
            self._save()

    def remove(self, acls: Iterable[AclBinding]) -> None:
        removed = [acl for acl in acls if self._acls.pop(acl, 0) is None]
        if removed:
            self._save()

    def _save(self) -> None:
        doc = {"version": _FORMAT_VERSION, "acls": [_to_json(acl) for acl in self._acls]}
        tmp = self._path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(doc, indent=1))
        os.replace(tmp, self._path)


def _to_json(acl: AclBinding) -> dict[str, Any]:
    return {"resource_type": acl.resource_type.name, "name": acl.name, "pattern_type": acl.pattern_type.name,
            "principal": acl.principal, "host": acl.host, "operation": acl.operation.name,
            "permission": acl.permission.name}


def _from_json(entry: dict[str, Any]) -> AclBinding:
    return AclBinding(ResourceType[entry["resource_type"]], entry["name"], PatternType[entry["pattern_type"]],
                      entry["principal"], entry["host"], AclOperation[entry["operation"]],
                      PermissionType[entry["permission"]])
