"""Spark pipelines against a `kemu serve` child: the session's broker of compat_tests/conftest.py and the
`kemu_spark` fixture of kemu's own pytest plugin (registered by its entry point once kemu is installed; loaded
here when a checkout runs without that install)."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark", reason="the Spark tests need pyspark: pip install -e '.[spark]'")


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin("kemu_spark"):
        config.pluginmanager.import_plugin("kemu.spark.plugin")
