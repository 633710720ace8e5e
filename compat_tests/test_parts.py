"""The suite's split into two parts (compat_tests/parts.py) and the runner that merges their outcomes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from compat_tests.parts import part_of
from compat_tests.run_parts import CLOSING, merged_closing, merged_code

ROOT = Path(__file__).resolve().parents[1]


def test_the_jvm_folders_and_reference_fixtures_go_to_the_kafka_part() -> None:
    assert part_of("compat_tests/java/test_java_streams.py", []) == "kafka"
    assert part_of("compat_tests/test_share_groups_confluent.py", []) == "kafka"
    assert part_of("compat_tests/test_client_quotas_throttling.py", ["reference_kafka", "tmp_path"]) == "kafka"
    assert part_of("compat_tests/test_x.py", ["authorizer_kafka"]) == "kafka"
    assert part_of("compat_tests/test_x.py", ["secured_pair"]) == "kafka"
    assert part_of("compat_tests/test_produce_consume.py", ["kemu_server", "topic_name"]) == "rest"
    assert part_of("tests/log/test_segments.py", []) == "rest"
    assert part_of("compat_tests/javascript_like/test_x.py", []) == "rest"


def test_the_worst_exit_code_wins() -> None:
    assert merged_code([0, 0]) == 0
    assert merged_code([0, 1]) == 1
    assert merged_code([1, 2]) == 2
    assert merged_code([5, 0]) == 0
    assert merged_code([5, 5]) == 5
    assert merged_code([0, 137]) == 137


def test_the_closing_lines_are_summed_in_pytests_form() -> None:
    line = merged_closing(["=== 1 failed, 700 passed, 5500 deselected, 1 xfailed, 5 warnings in 900.10s (0:15:00) ===",
                           "=== 5500 passed, 3 skipped, 213 warnings in 1000.00s (0:16:40) ==="], 1001.5)
    assert CLOSING.match(line)
    assert line.startswith("======== 1 failed, 6200 passed, 3 skipped, 1 xfailed, 218 warnings in 1001.50s")


def test_a_part_selects_only_its_tests_and_the_two_cover_the_suite() -> None:
    def collected(part: str) -> set[str]:
        out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "compat_tests/test_parts.py",
                              "compat_tests/conformance/test_conformance.py", "-p", "no:cacheprovider"],
                             cwd=ROOT, env=dict(os.environ, KEMU_TEST_PART=part), capture_output=True, text=True,
                             check=False).stdout
        return {line for line in out.splitlines() if "::" in line}
    kafka, rest = collected("kafka"), collected("rest")
    assert kafka and rest and not kafka & rest
    assert all(name.startswith("compat_tests/conformance/") for name in kafka)
    assert all(name.startswith("compat_tests/test_parts.py") for name in rest)
