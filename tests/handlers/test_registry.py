"""The handler registry takes each key from its module's name and each range from kemu.handlers.versions,
without importing the modules; this checks that what it holds is what the modules, once imported, say."""

from __future__ import annotations

import importlib
import sys

from kemu.handlers import all_handlers
from kemu.handlers.versions import NARROWED


def test_registry_matches_each_imported_module() -> None:
    handlers = all_handlers()
    assert handlers, "no handler modules found"
    for key, handler in handlers.items():
        module = importlib.import_module(handler._module_name or "")
        assert module.KEY == key
        declared = getattr(module, "VERSIONS", (handler.api.min_version, handler.api.max_version))
        assert (handler.min_version, handler.max_version) == declared, module.__name__
        assert handler.handle is module.handle
        assert handler.error_response is getattr(module, "error_response", None)


def test_every_narrowed_range_is_the_one_its_module_declares() -> None:
    handlers = all_handlers()
    for key, versions in NARROWED.items():
        module = importlib.import_module(handlers[key]._module_name or "")
        assert module.VERSIONS == versions, module.__name__
        assert versions != (handlers[key].api.min_version, handlers[key].api.max_version), (
            f"{module.__name__} narrows nothing: drop it from the table")


def test_modules_are_imported_only_when_first_used() -> None:
    handlers = all_handlers()
    loaded_before = {h._module_name for h in handlers.values() if h._module_name in sys.modules}
    # Nothing about discovery itself may import a handler module; any that are loaded were used by
    # earlier tests in this process.
    for handler in handlers.values():
        if handler._module_name not in loaded_before:
            assert handler._handle is None


def test_a_handler_suspends_exactly_when_its_handle_awaits() -> None:
    # The connection runs a handler that never suspends on its reader, so one that awaits without saying
    # SUSPENDS would hold the connection's reading while it waits; one that says it needlessly costs a task.
    # (A handler that waits by returning a Continuation, as Fetch does, awaits in that, not in handle.)
    for handler in all_handlers().values():
        module = importlib.import_module(handler._module_name or "")
        awaits = _awaits(module.handle)
        assert handler.suspends == awaits, (module.__name__, handler.suspends, awaits)


def _awaits(function: object) -> bool:
    """Whether `function`'s own body awaits (not a coroutine function defined inside it)."""
    import ast
    import inspect
    import textwrap

    [definition] = ast.parse(textwrap.dedent(inspect.getsource(function))).body  # type: ignore[arg-type]
    pending: list[ast.AST] = list(ast.iter_child_nodes(definition))
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Await | ast.AsyncFor | ast.AsyncWith):
            return True
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            pending.extend(ast.iter_child_nodes(node))
    return False
