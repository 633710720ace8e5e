"""ErrorCode, made by enum._simple_enum for a quicker start-up, is the IntEnum its class statement makes the
ordinary way: the standard library's own check of a simple enum against its ordinary twin passes."""

from __future__ import annotations
import __future__

import ast
import enum
import pickle
from enum import IntEnum
from pathlib import Path
from typing import Any

import pytest

from kemu.wire import errors
from kemu.wire.errors import ErrorCode


def ordinary_error_code() -> type[IntEnum]:
    """`class ErrorCode(IntEnum)` with the body of kemu/wire/errors.py's ErrorCode, made by EnumType."""
    tree = ast.parse(Path(errors.__file__).read_text(encoding="utf-8"))
    [definition] = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "ErrorCode"]
    definition.decorator_list = []
    definition.bases = [ast.Name("IntEnum", ast.Load())]
    module = ast.fix_missing_locations(ast.Module([definition], type_ignores=[]))
    namespace: dict[str, Any] = {"IntEnum": IntEnum, "__name__": errors.__name__}
    exec(compile(module, errors.__file__, "exec", flags=__future__.annotations.compiler_flag), namespace)
    made: type[IntEnum] = namespace["ErrorCode"]
    return made


@pytest.mark.skipif(not hasattr(enum, "_simple_enum"), reason="made the ordinary way on this Python")
def test_error_code_is_the_enum_its_class_statement_makes() -> None:
    ordinary = ordinary_error_code()
    enum._test_simple_enum(ordinary, ErrorCode)  # type: ignore[attr-defined]  # raises TypeError on a difference
    assert [(m.name, m.value, m.retriable, m.message) for m in ErrorCode] == [
        (m.name, m.value, m.retriable, m.message) for m in ordinary]  # type: ignore[attr-defined]


def test_error_code_behaves_as_an_int_enum() -> None:
    assert isinstance(ErrorCode.NONE, IntEnum) and type(ErrorCode) is enum.EnumType
    assert ErrorCode(3) is ErrorCode.UNKNOWN_TOPIC_OR_PARTITION is ErrorCode["UNKNOWN_TOPIC_OR_PARTITION"]
    assert ErrorCode(3).retriable and ErrorCode(3).message == "This server does not host this topic-partition."
    assert repr(ErrorCode(3)) == "<ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: 3>" and ErrorCode(3) == 3
    assert pickle.loads(pickle.dumps(ErrorCode.NOT_COORDINATOR)) is ErrorCode.NOT_COORDINATOR
    with pytest.raises(ValueError, match="999 is not a valid ErrorCode"):
        ErrorCode(999)
