"""CRC-32C, from the `crc32c` package's C extension.

The package's `__init__` also imports its command-line tool and `importlib.metadata` (for its version),
which costs tens of milliseconds of every broker start. So the extension module is loaded on its own,
straight from the package's folder, falling back to the ordinary import if that ever fails, and only when
the first checksum is asked for. Read it as `checksum.crc32c` where an import should not load it.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
from collections.abc import Callable


def _load() -> Callable[..., int]:
    spec = importlib.util.find_spec("crc32c")
    folders = spec.submodule_search_locations if spec is not None else None
    for folder in folders or ():
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = f"{folder}/_crc32c{suffix}"
            extension = importlib.util.spec_from_file_location("crc32c._crc32c", path)
            if extension is None or extension.loader is None:
                continue
            try:
                module = importlib.util.module_from_spec(extension)
                extension.loader.exec_module(module)
            except (ImportError, OSError):
                continue
            return module.crc32c  # type: ignore[no-any-return]
    import crc32c

    return crc32c.crc32c


crc32c: Callable[..., int]
"""CRC-32C of the bytes given (after the CRC so far, the second argument). Loaded on first use (`__getattr__`):
a broker serves Metadata and ApiVersions without finding the package or loading its extension."""


def __getattr__(name: str) -> object:
    if name != "crc32c":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    loaded = globals()["crc32c"] = _load()
    return loaded
