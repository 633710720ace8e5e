"""No class name is defined in two rooms of kemu (ARCHITECTURE.md's rooms: the packages under kemu/ and its
top-level modules): a reader, a traceback or a type error naming a class names one thing."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

KEMU = Path(__file__).resolve().parents[1] / "kemu"


def room_of(relative: str) -> str:
    """`broker/broker.py` is in the room `broker`, `clock.py` in `clock`."""
    first = relative.split("/", 1)[0]
    return first.removesuffix(".py")


def classes_in_two_rooms(sources: dict[str, str]) -> dict[str, list[str]]:
    """Each class name defined (at any depth) in modules of more than one room, with where."""
    places: dict[str, list[str]] = defaultdict(list)
    for relative, text in sources.items():
        for node in ast.walk(ast.parse(text, filename=relative)):
            if isinstance(node, ast.ClassDef):
                places[node.name].append(f"{relative}:{node.lineno}")
    return {name: where for name, where in places.items()
            if len({room_of(place.split(":")[0]) for place in where}) > 1}


def _kemu_sources() -> dict[str, str]:
    return {str(path.relative_to(KEMU)): path.read_text(encoding="utf-8") for path in sorted(KEMU.rglob("*.py"))}


def test_no_class_name_is_defined_in_two_rooms() -> None:
    assert classes_in_two_rooms(_kemu_sources()) == {}


def test_a_planted_second_definition_is_found() -> None:
    sources = _kemu_sources()
    planted = {**sources, "server/planted.py": "class BrokerCore:\n    pass\n"}
    assert classes_in_two_rooms(planted) == {"BrokerCore": ["broker/broker.py:" + _line_of(sources, "BrokerCore"),
                                                            "server/planted.py:1"]}


def test_one_name_twice_in_one_room_is_the_rooms_business() -> None:
    assert classes_in_two_rooms({"groups/a.py": "class X: ...\n", "groups/b.py": "class X: ...\n"}) == {}


def _line_of(sources: dict[str, str], name: str) -> str:
    tree = ast.parse(sources["broker/broker.py"])
    return str(next(node.lineno for node in ast.walk(tree) if isinstance(node, ast.ClassDef) and node.name == name))
