"""The corpus on disk: compat_tests/conformance/corpus/<area>.json, one file per API or area, each a list of
scripts with their steps (request and Kafka's normalised answer), written with sorted keys and one field a
line so a refreshed corpus diffs readably."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from compat_tests.conformance.steps import Script, shaped
from compat_tests.differential.normalise import Normaliser

CORPUS_DIR = Path(__file__).with_name("corpus")
ABOUT = ("Recorded from Apache Kafka 4.3 by `python -m compat_tests.conformance record`: the requests come from "
         "compat_tests/conformance/scripts, every response from Kafka, normalised by "
         "compat_tests/differential/normalise.py plus the varying fields a step names (with why). Do not edit "
         "responses by hand.")


def normalised(script: Script, answers: list[Any]) -> list[Any]:
    """The answers of one run of a script, normalised with one Normaliser, so a value (a producer id, a
    member id) seen in several steps keeps one placeholder across them."""
    normaliser = Normaliser()
    out = []
    for step, answer in zip(script.steps, answers, strict=True):
        normaliser.next_step()
        out.append(normaliser(shaped(answer, step.key_by, step.only_run, step.varying), step.varying))
    return out


def load(directory: Path = CORPUS_DIR) -> list[Script]:
    scripts = []
    for path in sorted(directory.glob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        scripts += [Script.from_json(raw) for raw in document["scripts"]]
    return scripts


def save(scripts: list[Script], directory: Path = CORPUS_DIR) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    by_area: dict[str, list[Script]] = {}
    for script in scripts:
        by_area.setdefault(script.area, []).append(script)
    written = []
    for area, members in sorted(by_area.items()):
        path = directory / f"{area}.json"
        document = {"about": ABOUT, "scripts": [script.to_json() for script in members]}
        path.write_text(json.dumps(document, indent=1, sort_keys=False, ensure_ascii=False) + "\n",
                        encoding="utf-8")
        written.append(path)
    return written
