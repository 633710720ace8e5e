"""ApiVersions, Kafka against kemu: every key and version range, the supported and finalized features."""

from __future__ import annotations

from typing import Any

import pytest

from compat_tests.differential.compare import check
from compat_tests.differential.targets import Pair, Target

API_VERSIONS = 18


def api_versions(version: int) -> Any:
    def observe(target: Target) -> dict[str, Any]:
        body = target.request(API_VERSIONS, version, {"client_software_name": "kemu-differential",
                                                      "client_software_version": "1"})
        # Keyed by API key and feature name: a missing key is one difference, not a shifted list.
        body["api_keys"] = {str(entry["api_key"]): [entry["min_version"], entry["max_version"]]
                            for entry in body["api_keys"]}
        for name in ("supported_features", "finalized_features"):
            if name in body:
                body[name] = {entry["name"]: {k: v for k, v in entry.items() if k != "name"} for entry in body[name]}
        return body

    return observe


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_api_versions(pair: Pair, version: int) -> None:
    kafka, kemu = pair.both(api_versions(version))
    check(f"api_versions.v{version}", kafka, kemu)
