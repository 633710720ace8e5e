"""The TypedDicts of `kemu.wire.messages` are what `kemu.wire.typed_gen` makes of today's declarations, and
mypy --strict holds a handler to them: a misspelt field, read or written, fails the type check."""

from __future__ import annotations

import importlib
import textwrap
from pathlib import Path

import pytest

from kemu.wire import typed_gen
from kemu.wire.apis import all_apis, declaration_modules

REPO = Path(__file__).resolve().parents[2]


def test_the_generated_messages_are_up_to_date(tmp_path: Path) -> None:
    typed_gen.main(["--out", str(tmp_path)])
    fresh = {p.name: p.read_text() for p in tmp_path.glob("k*.py")}
    kept = {p.name: p.read_text() for p in typed_gen.MESSAGES_DIR.glob("k*.py")}
    assert sorted(fresh) == sorted(kept), "run `python -m kemu.wire.typed_gen`: the set of APIs changed"
    stale = [name for name in fresh if fresh[name] != kept[name]]
    assert not stale, f"run `python -m kemu.wire.typed_gen`: {stale} differ from their declarations"
    assert len(fresh) == len(all_apis())


def test_every_message_module_imports_and_holds_both_directions() -> None:
    # At run time they are plain TypedDict classes: importable, with the declaration's keys.
    for key, api in all_apis().items():
        module = importlib.import_module(declaration_modules()[key].replace(".apis.", ".messages."))
        request, response = getattr(module, f"{api.name}Request"), getattr(module, f"{api.name}Response")
        assert set(request.__annotations__) == {f.name for f in api.request}, api.name
        assert set(response.__annotations__) == {f.name for f in api.response}, api.name
        assert request.__total__ and not response.__total__


_HANDLER = '''
from kemu.wire.messages import Incoming
from kemu.wire.messages.k10_find_coordinator import FindCoordinatorRequest, FindCoordinatorResponse


async def handle(request: Incoming[FindCoordinatorRequest]) -> FindCoordinatorResponse:
    body = request.body
    if request.version >= 4:
        return {{"coordinators": [{{"key": key, "node_id": 1, "host": "h", "{port}": 9092, "error_code": 0}}
                                  for key in body["{keys}"]]}}
    return {{"error_code": 0, "node_id": 1, "host": "h", "port": body["key_type"]}}
'''


# Produce's own handler, planted with each misspelling once: where it reads the request's `acks`, and where
# a refused partition's answer is written (`_failed`).
_PRODUCE = REPO / "kemu" / "handlers" / "k00_produce.py"
_PRODUCE_READ = ('acks: int = body["acks"]', 'acks: int = body["ack"]')
_PRODUCE_WRITE = ('"log_append_time_ms": -1,', '"log_append_time": -1,')


def _planted(source: str, found: str, planted: str) -> str:
    assert source.count(found) == 1, f"{found!r} is no longer in {_PRODUCE.name} once: plant another misspelling"
    return source.replace(found, planted)


@pytest.mark.timeout(600)
def test_mypy_strict_fails_a_handler_on_a_misspelt_field(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The planted violations: a request field misspelt where the handler reads it, a response field misspelt
    where it writes it; their correct twin passes. The same in a copy of Produce's handler, typed as every
    handler is (kemu.handlers: `Incoming[ProduceRequest]` in, `ProduceResponse` and its structs out)."""
    api = pytest.importorskip("mypy.api")
    produce = _PRODUCE.read_text()
    files = {
        "correct_twin.py": _HANDLER.format(port="port", keys="coordinator_keys"),
        "misspelt_read.py": _HANDLER.format(port="port", keys="coordinator_key"),
        "misspelt_write.py": _HANDLER.format(port="prot", keys="coordinator_keys"),
        "produce_twin.py": produce,
        "produce_misspelt_read.py": _planted(produce, *_PRODUCE_READ),
        "produce_misspelt_write.py": _planted(produce, *_PRODUCE_WRITE),
    }
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    config = tmp_path / "mypy.ini"
    # Not the repository's configuration (it names the packages to check; these files are others): kemu's own
    # modules are followed silently, so only what the planted files do wrong is reported, whatever the
    # third-party packages kemu imports ship as types.
    config.write_text("[mypy]\n[mypy-kemu.*]\nfollow_imports = silent\n")
    # kemu from this checkout: MYPYPATH comes before an installed kemu, which may be another checkout's.
    monkeypatch.setenv("MYPYPATH", str(REPO))
    stdout, stderr, _ = api.run(["--strict", "--config-file", str(config), "--cache-dir", str(tmp_path / "cache"),
                                 *(str(tmp_path / name) for name in files)])
    errors = [line for line in stdout.splitlines() if ": error:" in line]
    assert not [e for e in errors if "_twin.py" in e], stdout + stderr
    assert [e for e in errors if "/misspelt_read.py" in e and
            'TypedDict "FindCoordinatorRequest" has no key "coordinator_key"' in e], stdout + stderr
    assert [e for e in errors if "/misspelt_write.py" in e and 'Extra key "prot"' in e], stdout + stderr
    assert [e for e in errors if "produce_misspelt_read.py" in e and
            'TypedDict "ProduceRequest" has no key "ack"' in e], stdout + stderr
    assert [e for e in errors if "produce_misspelt_write.py" in e and 'Extra key "log_append_time"' in e], (
        stdout + stderr)
    assert len(errors) == 4, stdout
