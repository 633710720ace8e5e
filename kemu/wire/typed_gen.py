"""Writes `kemu/wire/messages/kNN_name.py`: one `TypedDict` per API, direction and nested struct, from the
same Field trees the codec compiles (`kemu.wire.apis`). Run `python -m kemu.wire.typed_gen` after changing
a declaration; `tests/wire/test_typed_messages.py` regenerates them and fails on any difference.

What the types say is what the codec does, so mypy checks a handler against the wire's real contract:

- One TypedDict covers every version of a message. A handler branches on `request.version` at run time,
  which mypy cannot narrow on, so per-version types would need a cast in every branch. Each key's comment
  says the versions it is on the wire in.
- A request's keys are all required: the decoder fills every field a version lacks, tagged or absent, with
  its default, so `body["key_type"]` is there even in a v0 FindCoordinator.
- A response's keys are all optional (`total=False`): the encoder writes every field left out as its
  default, which is how the handlers use it. What the type still catches is a key the message does not
  have, the misspelling that would otherwise be dropped silently, and a value of the wrong type.
- A response's arrays are `Sequence`s (the encoder takes any sized iterable; a list of a narrower type
  then still fits), its byte strings any `Buffer` (its records also a file region: `Part`); a request's
  are what the decoder makes: lists, `bytes`, and the frame's views for record batches.
- A nested struct is named by its path: `DescribeGroupsResponseGroupsMembers` is the element of
  `groups[].members[]` in DescribeGroups' response. Kafka's spec names (`DescribedGroupMember`) are not in
  the declarations, and a path is a name a reader can find without them.

At run time nothing changes: the messages stay the decoder's plain dicts, and the handlers import these
modules under `TYPE_CHECKING` only.
"""

from __future__ import annotations

import argparse
import keyword
import sys
from dataclasses import dataclass, field
from pathlib import Path

from kemu.wire.apis import all_apis, declaration_modules
from kemu.wire.schema import NONE, Api, Field, Versions

MESSAGES_DIR = Path(__file__).parent / "messages"

_SCALARS = {"int8": "int", "int16": "int", "int32": "int", "int64": "int", "uint16": "int", "uint32": "int",
            "float64": "float", "bool": "bool", "string": "str", "uuid": "uuid.UUID"}
# The decoder's byte strings: copies for `bytes`; record batches are views of the request frame (bytes when
# construct decoded them, or they sat in a tagged field).
_REQUEST_BYTES = {"bytes": "bytes", "records": "Buffer"}
# A response's records may also be a region of a segment file, sent from it (kemu.wire.file_region).
_RESPONSE_BYTES = {"bytes": "Buffer", "records": "Part"}


def _versions(v: Versions) -> str:
    if v == NONE:
        return "none"
    if v.high is None:
        return f"v{v.low}+"
    return f"v{v.low}" if v.low == v.high else f"v{v.low}-{v.high}"


def _camel(snake: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in snake.split("_"))


@dataclass
class _Module:
    """The TypedDicts of one direction of one API, nested structs before their owners (no forward references)."""

    api: Api
    response: bool
    classes: list[str] = field(default_factory=list)
    names: set[str] = field(default_factory=set)
    uses: set[str] = field(default_factory=set)  # what the module must import: "uuid", "Buffer", "Sequence"

    def struct(self, name: str, fields: tuple[Field, ...], path: str) -> None:
        if name in self.names:
            raise ValueError(f"{self.api.name}: two structs would be named {name}")
        self.names.add(name)
        lines = []
        for f in fields:
            if keyword.iskeyword(f.name) or not f.name.isidentifier():
                raise ValueError(f"{self.api.name}: field {f.name!r} is no identifier, which the class syntax needs")
            notes = [_versions(f.versions)]
            if f.nullable != NONE:
                notes.append(f"nullable {_versions(f.nullable)}")
            if f.tag is not None:
                notes.append(f"tag {f.tag} in {_versions(f.tagged)}")
            lines.append(f"    {f.name}: {self.type_of(f, name, path)}  # {', '.join(notes)}")
        direction = "response" if self.response else "request"
        if not path:
            what = f"The {direction}"
        elif path.endswith("[]"):
            what = f"An element of the {direction}'s `{path}`"
        else:
            what = f"The {direction}'s `{path}`"
        total = ", total=False" if self.response else ""
        self.classes.append("\n".join([f"class {name}(TypedDict{total}):", f'    """{what}."""', *lines]))

    def type_of(self, f: Field, owner: str, path: str) -> str:
        if f.is_struct:
            item = owner + _camel(f.name)
            inner = f"{path}.{f.name}" if path else f.name
            self.struct(item, f.fields, inner + "[]" if f.is_array else inner)
        else:
            item = self.scalar(f.element if f.is_array else f.type)
        if f.is_array:
            if self.response:
                self.uses.add("Sequence")
            item = f"Sequence[{item}]" if self.response else f"list[{item}]"
        # A request's absent field is decoded as its default, which may be None where no version is nullable;
        # a record set's default is None (Kafka's MemoryRecords null).
        if f.nullable != NONE or (not self.response and f.default is None) or f.type == "records":
            item += " | None"
        return item

    def scalar(self, type_name: str) -> str:
        if type_name in _SCALARS:
            if type_name == "uuid":
                self.uses.add("uuid")
            return _SCALARS[type_name]
        made = (_RESPONSE_BYTES if self.response else _REQUEST_BYTES)[type_name]
        if made in ("Buffer", "Part"):
            self.uses.add(made)
        return made


def render(api: Api, module_name: str) -> str:
    parts: list[str] = []
    uses: set[str] = set()
    for response in (False, True):
        module = _Module(api, response)
        module.struct(f"{api.name}{'Response' if response else 'Request'}",
                      api.response if response else api.request, "")
        parts.extend(module.classes)
        uses |= module.uses
    imports = []
    if "uuid" in uses:
        imports.append("import uuid")
    if "Sequence" in uses:
        imports.append("from collections.abc import Sequence")
    imports.append("from typing import TypedDict")
    named = [name for name in ("Buffer", "Part") if name in uses]
    if named:
        imports += ["", f"from kemu.wire.buffers import {', '.join(named)}"]
    header = (f"# Generated by `python -m kemu.wire.typed_gen` from {module_name}; do not edit.\n"
              "# tests/wire/test_typed_messages.py regenerates it and fails on any difference.\n"
              "# ruff: noqa: E501 - a nested struct's name is its path, which may be long\n"
              f'"""{api.name} (key {api.key}), versions {api.min_version}-{api.max_version}: its request and '
              'response as TypedDicts\n(what they promise: kemu.wire.typed_gen)."""\n\n'
              "from __future__ import annotations\n\n")
    return header + "\n".join(imports) + "\n\n\n" + "\n\n\n".join(parts) + "\n"


def generate() -> dict[str, str]:
    """File name -> source, for every declared API."""
    out: dict[str, str] = {}
    modules = declaration_modules()
    for key, api in sorted(all_apis().items()):
        module_name = modules[key]
        out[module_name.rsplit(".", 1)[1] + ".py"] = render(api, module_name)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kemu.wire.typed_gen", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=MESSAGES_DIR, help="where to write (default: %(default)s)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    wanted = generate()
    for stale in sorted(args.out.glob("k[0-9][0-9]_*.py")):
        if stale.name not in wanted:
            stale.unlink()
    for name, text in wanted.items():
        target = args.out / name
        if not target.exists() or target.read_text() != text:
            target.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
