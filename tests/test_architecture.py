"""The import contract: every import in kemu/ against the rooms table of ARCHITECTURE.md.

The tables there are the only copy of the rules; this module parses them and walks the code with `ast`
(module-level imports, imports inside functions and imports under `if TYPE_CHECKING:` all count). The
checker is plain functions over a package directory and the page's text, so the tests at the bottom can
run it on a planted tree and see it fail.
"""

from __future__ import annotations

import ast
import re
import sys
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "kemu"
PAGE = REPO / "ARCHITECTURE.md"

NONE_MARKS = {"", "—", "-"}
ROOMS_HEADER = ["room", "holds", "may import from kemu", "may import from outside"]
ALLOWANCES_HEADER = ["module", "may also import", "why"]
GUARDED_LINE = "Guarded standard-library modules:"


# --- the contract ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Contract:
    rooms: dict[str, frozenset[str]]  # room -> the other rooms it may import
    outside: dict[str, frozenset[str]]  # room -> third-party packages and guarded stdlib modules it may import
    guarded: frozenset[str]  # standard-library modules a room imports only where listed
    allowances: dict[str, frozenset[str]]  # dotted module -> extra imports: outside names or lazy kemu modules


def _backticked(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def _table_after(text: str, heading: str, header: list[str]) -> list[list[str]]:
    """The rows of the first markdown table under `heading`, whose header must be `header`."""
    lines = text.splitlines()
    try:
        start = lines.index(heading)
    except ValueError:
        raise ValueError(f"no {heading!r} section") from None
    rows: list[list[str]] = []
    for line in lines[start + 1:]:
        if line.startswith("#"):
            break
        if not line.startswith("|"):
            if rows:
                break
            continue
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    if len(rows) < 2 or rows[0] != header:
        raise ValueError(f"the table under {heading!r} must have the header {header}")
    return rows[2:]


def _room_of_path(cell: str) -> str:
    names = _backticked(cell)
    if len(names) != 1 or not re.fullmatch(r"kemu/(\w+/|\w+\.py)", names[0]):
        raise ValueError(f"a room cell names one `kemu/<package>/` or `kemu/<module>.py`, not {cell!r}")
    return names[0].removeprefix("kemu/").removesuffix("/").removesuffix(".py")


def _names(cell: str) -> frozenset[str]:
    if cell in NONE_MARKS:
        return frozenset()
    names = _backticked(cell)
    if not names:
        raise ValueError(f"list names in backticks, or — for none: {cell!r}")
    return frozenset(names)


def parse_contract(text: str) -> Contract:
    rooms: dict[str, frozenset[str]] = {}
    outside: dict[str, frozenset[str]] = {}
    for cells in _table_after(text, "## Rooms", ROOMS_HEADER):
        room = _room_of_path(cells[0])
        if room in rooms:
            raise ValueError(f"room {room} has two rows")
        rooms[room] = _names(cells[2])
        outside[room] = _names(cells[3])
    allowances: dict[str, frozenset[str]] = {}
    for cells in _table_after(text, "## Allowances", ALLOWANCES_HEADER):
        (path,) = _backticked(cells[0])
        if not cells[2]:
            raise ValueError(f"the allowance for {path} needs its reason")
        allowances[path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")] = _names(cells[1])
    if text.count(GUARDED_LINE) != 1:
        raise ValueError(f"the page must say {GUARDED_LINE!r} once")
    sentence = re.split(r"\.(?:\s|$)", text.split(GUARDED_LINE, 1)[1], maxsplit=1)[0]  # it may wrap
    return Contract(rooms, outside, frozenset(_backticked(sentence)), allowances)


# --- the code ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Import:
    importer: str  # dotted module name
    path: str  # file, relative to the package's parent
    line: int
    target: str  # an existing kemu module, or the imported dotted name outside kemu
    kind: str  # "module", "function" or "type-checking"

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


def modules_of(package: Path) -> dict[str, Path]:
    root = package.parent
    found: dict[str, Path] = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(tree: ast.Module) -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
    def walk(node: ast.AST, kind: str) -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, kind
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            kind = "function" if kind == "module" else kind
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for statement in node.body:
                yield from walk(statement, "type-checking")
            for statement in node.orelse:
                yield from walk(statement, kind)
            return
        for child in ast.iter_child_nodes(node):
            yield from walk(child, kind)

    yield from walk(tree, "module")


def _resolve(name: str, modules: dict[str, Path]) -> str:
    """The longest prefix of `name` that is a module of the tree (the package itself at worst)."""
    parts = name.split(".")
    while parts and ".".join(parts) not in modules:
        parts.pop()
    return ".".join(parts) if parts else name


def collect_imports(package: Path) -> list[Import]:
    modules = modules_of(package)
    top = package.name
    found: list[Import] = []
    for module, path in modules.items():
        relpath = path.relative_to(package.parent).as_posix()
        is_package = path.name == "__init__.py"
        for node, kind in _import_nodes(ast.parse(path.read_text(encoding="utf-8"), relpath)):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = module.split(".")
                    anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                           for alias in node.names]
            for target in dict.fromkeys(targets):
                if target == top or target.startswith(top + "."):
                    target = _resolve(target, modules)
                found.append(Import(module, relpath, node.lineno, target, kind))
    return found


def room_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return components


def check_contract(contract: Contract) -> list[str]:
    """The table's own faults: rows naming unknown rooms, and cycles among the rows."""
    findings = [f"ARCHITECTURE.md: room {room} may import {other}, which has no row"
                for room, others in sorted(contract.rooms.items()) for other in sorted(others - contract.rooms.keys())]
    for cycle in _cycles({room: set(others) for room, others in contract.rooms.items()}):
        findings.append(f"ARCHITECTURE.md: the rooms {', '.join(cycle)} may import each other in a circle")
    return findings


def check(package: Path, contract: Contract) -> list[str]:
    """Every breach of `contract` by the code under `package`, as "path:line: what" lines."""
    findings = check_contract(contract)
    modules = modules_of(package)
    imports = collect_imports(package)
    top = package.name

    present = {room_of(module) for module in modules}
    findings += [f"{top}/: room {room} has no row in the rooms table"
                 for room in sorted(present - contract.rooms.keys())]
    findings += [f"ARCHITECTURE.md: the row for {room} names no room of the code"
                 for room in sorted(contract.rooms.keys() - present)]
    findings += [f"ARCHITECTURE.md: the allowance for {module} names no module of the code"
                 for module in sorted(contract.allowances.keys() - modules.keys())]

    used_allowances: set[tuple[str, str]] = set()
    lazy_edges: set[tuple[str, str]] = set()
    module_edges: dict[str, set[str]] = defaultdict(set)
    room_edges: dict[str, dict[str, Import]] = defaultdict(dict)
    for imp in imports:
        room = room_of(imp.importer)
        extra = contract.allowances.get(imp.importer, frozenset())
        if imp.target == top or imp.target.startswith(top + "."):
            target_room = room_of(imp.target)
            if target_room != room and target_room not in contract.rooms.get(room, frozenset()):
                findings.append(f"{imp.where}: {room} may not import {target_room} ({imp.target})")
            if target_room != room:
                room_edges[room].setdefault(target_room, imp)
            if imp.target in extra:
                used_allowances.add((imp.importer, imp.target))
                if imp.kind != "module":
                    lazy_edges.add((imp.importer, imp.target))
                    continue
                findings.append(f"{imp.where}: the allowance of {imp.target} is for a lazy import, "
                                "but this one runs at module level")
            if imp.target != imp.importer:
                module_edges[imp.importer].add(imp.target)
            continue
        name = imp.target.split(".")[0]
        free = name in sys.stdlib_module_names and name not in contract.guarded
        if name in extra:
            used_allowances.add((imp.importer, name))
        elif not free and name not in contract.outside.get(room, frozenset()):
            what = "the guarded standard-library module" if name in sys.stdlib_module_names else "the package"
            findings.append(f"{imp.where}: {room} may not import {what} {name}")

    for module, names in sorted(contract.allowances.items()):
        for name in sorted(names):
            if (module, name) not in used_allowances:
                findings.append(f"ARCHITECTURE.md: the allowance of {name} in {module} is no longer used")

    for cycle in _cycles({room: set(targets) for room, targets in room_edges.items()}):
        witnesses = [room_edges[a][b].where + f" ({a} -> {b})"
                     for a in cycle for b in cycle if b in room_edges.get(a, {})]
        findings.append(f"import cycle between the rooms {', '.join(cycle)}: {'; '.join(witnesses)}")

    by_edge = {(imp.importer, imp.target): imp for imp in imports if (imp.importer, imp.target) not in lazy_edges}
    for cycle in _cycles(module_edges):
        members = set(cycle)
        witnesses = [f"{by_edge[a, b].where} ({a} -> {b})"
                     for a in cycle for b in sorted(module_edges[a] & members)]
        findings.append(f"import cycle between the modules {', '.join(cycle)}: {'; '.join(witnesses)}")
    return findings


# --- the tests ---------------------------------------------------------------------------------------------


def test_the_code_keeps_the_rooms_of_architecture_md() -> None:
    findings = check(PACKAGE, parse_contract(PAGE.read_text(encoding="utf-8")))
    assert not findings, "the import contract of ARCHITECTURE.md is broken:\n" + "\n".join(findings)


def test_the_page_is_read_in_full() -> None:
    contract = parse_contract(PAGE.read_text(encoding="utf-8"))
    assert {"wire", "log", "txn", "groups", "broker", "admin", "coordinators", "handlers", "server"} <= set(
        contract.rooms)
    assert contract.rooms["wire"] == frozenset()
    assert contract.outside["wire"] == {"construct", "cramjam", "crc32c"}
    assert "trio" in contract.outside["server"] and "socket" in contract.guarded
    assert {"socket", "threading", "subprocess"} <= contract.guarded


def test_every_kind_of_import_is_collected() -> None:
    kinds = {(imp.importer, imp.target): imp.kind for imp in collect_imports(PACKAGE)}
    assert kinds["kemu.log.partition_log", "kemu.log.config"] == "module"
    assert kinds["kemu.handlers.k42_delete_groups", "kemu.wire.messages"] == "type-checking"
    assert kinds["kemu.cli", "trio"] in {"function", "type-checking"}
    assert kinds["kemu.server.admission", "kemu.handlers.k18_api_versions"] == "function"
    assert kinds["kemu.admin.configs", "kemu.admin.loggers"] == "module"  # `from kemu.admin import loggers`


# A small contract and a tree that breaks it in every way the checker knows.
PLANTED_PAGE = """\
## Rooms

| room | holds | may import from kemu | may import from outside |
|---|---|---|---|
| `kemu/wire/` | the codec | — | `construct` |
| `kemu/log/` | segments | `wire` | — |
| `kemu/server/` | the shell | `log`, `wire` | `trio`, `socket` |
| `kemu/gone/` | a room that was removed | — | — |
| `kemu/__init__.py` | the version | — | — |

Guarded standard-library modules: `socket`,
`threading`.

## Allowances

| module | may also import | why |
|---|---|---|
| `kemu/log/segment.py` | `threading` | planted |
| `kemu/log/__init__.py` | `kemu.log.lazy` | the package loads it on first use |
"""

PLANTED_TREE = {
    "__init__.py": "",
    "wire/__init__.py": "",
    "wire/codec.py": "import construct\nimport trio\n",
    "wire/bad.py": "def later():\n    from kemu.server import shell\n",  # upward, inside a function
    "log/__init__.py": "from kemu.log import segment\n\ndef load():\n    import kemu.log.lazy\n",
    "log/lazy.py": "from kemu.log import segment\n",
    "log/lazy_cycle.py": "from kemu import log\n",  # log/__init__ does not import it: no cycle
    "log/segment.py": "import socket\nfrom kemu.wire import codec\nfrom kemu.log import a\n",
    "log/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from kemu.log.segment import Segment\n",
    "server/__init__.py": "",
    "server/shell.py": "import socket\nimport trio\nimport threading\nfrom kemu.log import segment\n",
    "extra/__init__.py": "import requests\n",
}


def _plant(root: Path, files: dict[str, str]) -> Path:
    for name, source in files.items():
        path = root / "kemu" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    return root / "kemu"


def _matching(findings: Iterable[str], *parts: str) -> list[str]:
    return [finding for finding in findings if all(part in finding for part in parts)]


def test_the_checker_reports_a_planted_tree(tmp_path: Path) -> None:
    findings = check(_plant(tmp_path, PLANTED_TREE), parse_contract(PLANTED_PAGE))
    expected = [
        ("kemu/wire/codec.py:2:", "wire may not import the package trio"),
        ("kemu/wire/bad.py:2:", "wire may not import server (kemu.server.shell)"),
        ("kemu/log/segment.py:1:", "log may not import the guarded standard-library module socket"),
        ("kemu/server/shell.py:3:", "server may not import the guarded standard-library module threading"),
        ("kemu/extra/__init__.py:1:", "extra may not import the package requests"),
        ("room extra has no row",),
        ("the row for gone names no room",),
        ("allowance of threading in kemu.log.segment is no longer used",),
        ("import cycle between the rooms log, server, wire",),
        ("import cycle between the modules kemu.log.a, kemu.log.segment", "kemu/log/a.py:3"),
    ]
    for parts in expected:
        assert _matching(findings, *parts), f"not reported: {parts}\n" + "\n".join(findings)
    # The documented lazy import of kemu.log.lazy closes no cycle; nothing else is reported.
    assert not _matching(findings, "kemu.log.lazy,"), findings
    assert len(findings) == len(expected), "\n".join(findings)


def test_a_clean_tree_passes(tmp_path: Path) -> None:
    tree = {name: source for name, source in PLANTED_TREE.items()
            if name not in {"wire/bad.py", "extra/__init__.py", "log/a.py"}}
    tree["wire/codec.py"] = "import construct\n"
    tree["log/segment.py"] = "import threading\nfrom kemu.wire import codec\n"
    tree["server/shell.py"] = "import socket\nimport trio\nfrom kemu.log import segment\n"
    page = PLANTED_PAGE.replace("| `kemu/gone/` | a room that was removed | — | — |\n", "")
    assert check(_plant(tmp_path, tree), parse_contract(page)) == []


def test_a_lazy_allowance_must_stay_lazy(tmp_path: Path) -> None:
    tree = dict(PLANTED_TREE, **{"log/__init__.py": "from kemu.log import segment\nimport kemu.log.lazy\n"})
    findings = check(_plant(tmp_path, tree), parse_contract(PLANTED_PAGE))
    assert _matching(findings, "kemu/log/__init__.py:2:", "runs at module level"), findings


@pytest.mark.parametrize("rows, message", [
    ("| `kemu/a/` | x | `b` | — |\n| `kemu/b/` | y | `a` | — |\n", "may import each other in a circle"),
    ("| `kemu/a/` | x | `nowhere` | — |\n", "which has no row"),
])
def test_the_table_itself_is_checked(rows: str, message: str) -> None:
    page = ("## Rooms\n\n| room | holds | may import from kemu | may import from outside |\n|---|---|---|---|\n"
            + rows + "\nGuarded standard-library modules: `socket`.\n\n## Allowances\n\n"
            "| module | may also import | why |\n|---|---|---|\n")
    assert _matching(check_contract(parse_contract(page)), message)
