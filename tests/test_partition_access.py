"""No module outside kemu/log and kemu/broker reaches a partition's log (issue 30): kemu.broker's `Partition`
offers what its callers need, the log behind it is the broker's and the log room's own.

The rule, checked with `ast` over every module of `kemu/` but those two rooms: no attribute `log` or `_log`
(read, written or deleted) on anything, nor one named by a string to getattr, setattr, hasattr, delattr or
operator.attrgetter, whatever the value's type. The one exception is a name the module binds to a logger
(`log = logging.getLogger(...)`) or to the `logging` module itself, whose `.log(level, ...)` is no partition's.
"""

from __future__ import annotations

import ast
from pathlib import Path

KEMU = Path(__file__).resolve().parent.parent / "kemu"
OWNERS = ("log", "broker")  # the rooms the partition log belongs to
REACHING = frozenset({"log", "_log"})
BY_NAME = frozenset({"getattr", "setattr", "hasattr", "delattr", "attrgetter"})


def _loggers(tree: ast.Module) -> set[str]:
    """The module-level names bound to the logging module or to a logger of it."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names.update(a.asname or a.name for a in node.names if a.name == "logging")
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            value = node.value
            if (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
                    and value.func.attr == "getLogger" and isinstance(value.func.value, ast.Name)
                    and value.func.value.id == "logging"):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _called_name(node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def reaches_in(source: str, where: str) -> list[str]:
    """Where `source` reaches a partition's log: "file:line: expression" each."""
    tree = ast.parse(source)
    loggers = _loggers(tree)
    found: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in REACHING:
            if isinstance(node.value, ast.Name) and node.value.id in loggers and node.attr == "log":
                continue
            found.append(node)
        elif isinstance(node, ast.Call) and _called_name(node) in BY_NAME:
            if any(isinstance(a, ast.Constant) and a.value in REACHING for a in node.args):
                found.append(node)
    found.sort(key=lambda n: (n.lineno, n.col_offset))
    return [f"{where}:{n.lineno}: {ast.unparse(n)}" for n in found]


def reaches(root: Path) -> list[str]:
    """Every reach for a partition's log in the modules under `root` outside the rooms that own it."""
    found = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative.parts[0] in OWNERS:
            continue
        found += reaches_in(path.read_text(encoding="utf-8"), str(relative))
    return found


def test_no_module_outside_log_and_broker_reaches_a_partitions_log() -> None:
    assert reaches(KEMU) == []


def test_a_planted_reach_is_found_and_loggers_are_not(tmp_path: Path) -> None:
    (tmp_path / "handlers").mkdir()
    (tmp_path / "handlers" / "k99_planted.py").write_text(
        "import logging\n"
        "import operator\n"
        "log = logging.getLogger(__name__)\n"
        "def handle(partition, ctx):\n"
        "    log.log(logging.INFO, 'fine: a logger')\n"
        "    logging.log(logging.INFO, 'fine: the logging module')\n"
        "    end = partition.log.log_end_offset\n"
        "    other = ctx.broker.partition('t', 0)._log\n"
        "    sneaky = getattr(partition, 'log')\n"
        "    getter = operator.attrgetter('log')\n"
        "    return end, other, sneaky, getter\n",
        encoding="utf-8")
    # The owning rooms may reach their own log.
    (tmp_path / "broker").mkdir()
    (tmp_path / "broker" / "partition.py").write_text("def f(p):\n    return p.log\n", encoding="utf-8")
    found = reaches(tmp_path)
    assert [line.split(": ", 1)[1] for line in found] == [
        "partition.log", "ctx.broker.partition('t', 0)._log", "getattr(partition, 'log')",
        "operator.attrgetter('log')"]
    assert all(line.startswith("handlers/k99_planted.py:") for line in found)


def test_a_logger_of_another_name_is_no_exception() -> None:
    # Only the names bound to loggers are: a local variable called log is someone's log.
    source = ("import logging\nlogger = logging.getLogger('x')\n"
              "def f(log, p):\n    logger.log(10, 'x')\n    return p.log\n")
    assert [line.split(": ", 1)[1] for line in reaches_in(source, "m.py")] == ["p.log"]
