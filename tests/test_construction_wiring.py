"""No object of kemu is handed its callbacks after it was made (issue 30: cores wired by their constructors).

Two shapes gave a core its collaborators late, and each let a core and its shell call each other in loops
that no constructor showed: a callback attribute born as a no-op lambda for someone to replace
(`self.on_change = lambda deadline: None`), and another object's attribute set to one of this object's
methods or to a lambda (`coordinator.complete_pending = self._complete_now`). Collaborators are passed to
the constructor instead (`TransactionCoordinator(..., shell=self)`, `TestClock(settle=...)`,
`Coordinators(core, crash_hook=...)`).

`ALLOWED` names the places that keep the late shape, with why.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# (path, attribute): why it may be set late.
ALLOWED = {
    ("kemu/broker/housekeeping.py", "_wake"): "the server's housekeeper task wakes on it: the task and the Trio "
    "token it wakes through exist only once the loop runs, after the core is made, and a reset hands the same "
    "task a new core (`set_waker`)",
    ("kemu/testing/transcript.py", "sink"): "`kemu serve --transcript FILE` attaches its file to the transcript the "
    "broker's handle already keeps, on the broker's thread, so the file starts with what the transcript holds and "
    "no exchange falls between the two",
}


def _methods(tree: ast.Module) -> dict[ast.AST, set[str]]:
    """For every node inside a class, the names of that class's methods."""
    owner: dict[ast.AST, set[str]] = {}
    for cls in ast.walk(tree):
        if isinstance(cls, ast.ClassDef):
            names = {f.name for f in cls.body if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
                     and not any(isinstance(d, ast.Name) and d.id == "property" for d in f.decorator_list)}
            for node in ast.walk(cls):
                owner[node] = names
    return owner


def late_wiring(source: str, path: str) -> list[str]:
    """Every late wiring in one module's source, as 'path:line: code'."""
    tree = ast.parse(source)
    methods = _methods(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        own_method = (isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name)
                      and value.value.id == "self" and value.attr in methods.get(node, set()))
        for target in targets:
            if not isinstance(target, ast.Attribute) or (path, target.attr) in ALLOWED:
                continue
            on_self = isinstance(target.value, ast.Name) and target.value.id == "self"
            if (on_self and isinstance(value, ast.Lambda)) or (not on_self and (own_method
                                                                               or isinstance(value, ast.Lambda))):
                found.append(f"{path}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_object_of_kemu_gets_its_callbacks_after_construction() -> None:
    found = [hit for file in sorted((ROOT / "kemu").rglob("*.py"))
             for hit in late_wiring(file.read_text(), file.relative_to(ROOT).as_posix())]
    assert found == [], "\n".join(found)


def test_the_allowed_late_wiring_is_still_there() -> None:
    # An allowance that nothing needs any more goes, so that it cannot hide a new one.
    for path, attribute in ALLOWED:
        source = (ROOT / path).read_text()
        assert f".{attribute} = " in source, f"{path} no longer sets {attribute}: drop it from ALLOWED"


PLANTED = '''
class Coordinator:
    def __init__(self):
        self.on_change = lambda deadline: None
        self.quiet = None


class Shell:
    def __init__(self, coordinator):
        coordinator.complete_pending = self._complete_now
        coordinator.on_change = lambda deadline: print(deadline)
        coordinator.quiet = self._error        # an attribute, not a method: no callback
        self.settle = self._complete_now       # its own attribute: no one else's wiring

    def _complete_now(self, transactional_id):
        pass
'''


def test_late_wiring_is_found_in_a_planted_module() -> None:
    found = late_wiring(PLANTED, "kemu/planted.py")
    assert found == [
        "kemu/planted.py:4: self.on_change = lambda deadline: None",
        "kemu/planted.py:10: coordinator.complete_pending = self._complete_now",
        "kemu/planted.py:11: coordinator.on_change = lambda deadline: print(deadline)",
    ]
