"""One declaration per Kafka API, in modules named by key (`k18_api_versions.py`), each exporting `API`."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from kemu.wire.schema import Api


@cache
def all_apis() -> dict[int, Api]:
    found: dict[int, Api] = {}
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("k"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        declared: Api = module.API
        if declared.key in found:
            raise RuntimeError(f"API key {declared.key} declared twice")
        found[declared.key] = declared
    return found


def get_api(key: int) -> Api | None:
    return all_apis().get(key)
