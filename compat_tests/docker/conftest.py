"""Fixtures for the docker image tests: a reachable Docker engine and an image built from this tree.

testcontainers reads its settings from the environment when it is imported, so they are set here,
before any test module imports it (values already in the environment win):
- TESTCONTAINERS_RYUK_DISABLED: the reaper is an image from a registry this machine cannot reach;
  every test stops its own container instead.
- on a machine marked by /.dockerenv (a container, or a VM made from one) testcontainers guesses
  the engine is outside and connects to containers through a docker network's gateway; the engine
  these tests start runs on this machine and publishes ports here, so connect to the docker host
  (TESTCONTAINERS_CONNECTION_MODE=docker_host: for the local socket, localhost).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")
if Path("/.dockerenv").exists():
    os.environ.setdefault("TESTCONTAINERS_CONNECTION_MODE", "docker_host")

from testcontainers.core.config import ConnectionMode, testcontainers_config  # noqa: E402

from compat_tests.external_clients import tool_missing  # noqa: E402

# A test collected earlier (tests/testing imports kemu.testcontainers) may have imported testcontainers
# before the lines above ran: apply what the environment now says to the settings it already read.
testcontainers_config.ryuk_disabled = os.environ["TESTCONTAINERS_RYUK_DISABLED"].lower() == "true"
if os.environ.get("TESTCONTAINERS_CONNECTION_MODE"):
    testcontainers_config.connection_mode_override = ConnectionMode(os.environ["TESTCONTAINERS_CONNECTION_MODE"])

REPO = Path(__file__).resolve().parents[2]
IMAGE_TAG = "kemu:compat-test"
BUILD_TIMEOUT_S = 600.0


@pytest.fixture(scope="session")
def docker_engine() -> None:
    import docker

    try:
        docker.from_env().ping()
    except docker.errors.DockerException as exc:
        tool_missing(f"no Docker engine answers ({exc}); `bash docker/start-dockerd` starts one")


@pytest.fixture(scope="session")
def kemu_image(docker_engine: None) -> str:
    """The image built from this checkout by docker/build-image (its debootstrap base is reused)."""
    try:
        completed = subprocess.run(
            ["bash", str(REPO / "docker" / "build-image"), "--tag", IMAGE_TAG],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail(f"docker/build-image ran longer than {BUILD_TIMEOUT_S:.0f}s", pytrace=False)
    if completed.returncode != 0:
        pytest.fail(
            f"docker/build-image exited {completed.returncode}\n{completed.stdout}\n{completed.stderr}", pytrace=False
        )
    return IMAGE_TAG
