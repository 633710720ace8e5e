"""The handler registry reads each module's key and version range without importing it; this checks that
what it reads is what the modules, once imported, actually say."""

from __future__ import annotations

import importlib

from kemu.handlers import all_handlers


def test_registry_matches_each_imported_module() -> None:
    handlers = all_handlers()
    assert handlers, "no handler modules found"
    for key, handler in handlers.items():
        module = importlib.import_module(handler._module_name or "")
        assert module.KEY == key
        declared = getattr(module, "VERSIONS", (handler.api.min_version, handler.api.max_version))
        assert (handler.min_version, handler.max_version) == tuple(declared), module.__name__
        assert handler.handle is module.handle
        assert handler.error_response is getattr(module, "error_response", None)


def test_modules_are_imported_only_when_first_used() -> None:
    import sys

    handlers = all_handlers()
    loaded_before = {h._module_name for h in handlers.values() if h._module_name in sys.modules}
    # Nothing about discovery itself may import a handler module; any that are loaded were used by
    # earlier tests in this process.
    for handler in handlers.values():
        if handler._module_name not in loaded_before:
            assert handler._handle is None
