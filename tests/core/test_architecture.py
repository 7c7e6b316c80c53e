"""The shape of the code, checked: the layers and their order (read from docs/architecture.md), no
import cycle, a Qt-free core, small rooms and modules, and no citation of a document outside the repo.

A module may import modules of its own room (package) and of any room in a lower layer; rooms of one
layer (written `a | b`) are independent of each other. Every import counts, wherever it stands: at
the top, inside a function, under `TYPE_CHECKING`.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "mcpmanager"
DESIGN = ROOT / "docs" / "architecture.md"
LAYERS_BLOCK = re.compile(r"<!-- layers -->\s*```text\n(?P<body>.*?)```\s*<!-- /layers -->", re.DOTALL)
QT = ("PySide6", "qasync", "shiboken6")
MAX_CORE_MODULES = 8
MAX_LINES = 500


@dataclass(frozen=True)
class Import:
    line: int
    target: str  # the mcpmanager module it names, or the external top-level name


# Reading the code ---------------------------------------------------------------------------------


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    return {module_name(path): path for path in sorted(root.rglob("*.py"))}


def imports(source: str, package: str, known: set[str]) -> list[Import]:
    """Every module an import names (`from a import b` is `a.b` when that is a module), relative
    imports resolved against `package`, dynamic `import_module("x")` included."""
    found: list[Import] = []

    def add(line: int, name: str) -> None:
        if name.split(".")[0] != "mcpmanager":
            found.append(Import(line, name.split(".")[0]))
            return
        while name not in known and "." in name:  # `mcpmanager.x.Name` → the module `mcpmanager.x`
            name = name.rsplit(".", 1)[0]
        found.append(Import(line, name))

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(node.lineno, alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                prefix = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{prefix}.{base}" if base else prefix
            for alias in node.names:
                add(node.lineno, f"{base}.{alias.name}")
        elif (
            isinstance(node, ast.Call)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None))
            in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            add(node.lineno, node.args[0].value)
    return found


def import_graph() -> dict[str, list[Import]]:
    found = modules()
    known = set(found)
    graph: dict[str, list[Import]] = {}
    for name, path in found.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        graph[name] = imports(path.read_text(encoding="utf-8"), package, known)
    return graph


# The layers ---------------------------------------------------------------------------------------


def read_layers(text: str) -> list[list[str]]:
    """The layer list of the design document, top first: one layer a line, rooms separated by `|`."""
    match = LAYERS_BLOCK.search(text)
    if match is None:
        raise AssertionError(f"{DESIGN}: no layer list (a ```text block between <!-- layers --> markers)")
    return [[room.strip() for room in line.split("|")] for line in match["body"].splitlines() if line.strip()]


class Layers:
    def __init__(self, layers: list[list[str]]) -> None:
        self.rank = {room: level for level, line in enumerate(layers) for room in line}

    def room_of(self, module: str) -> str | None:
        """The most specific room that is the module or holds it; the top package holds only itself."""
        best = None
        for room in self.rank:
            inside = module == room or (module.startswith(room + ".") and "." in room)
            if inside and (best is None or len(room) > len(best)):
                best = room
        return best

    def problems(self, graph: dict[str, list[Import]], paths: dict[str, Path]) -> Iterator[str]:
        for module, found in graph.items():
            room = self.room_of(module)
            if room is None:
                if not found and paths[module].name == "__init__.py":
                    continue  # a room's own package file, with nothing in it but its docstring
                yield f"{module} is in no layer: add it (or its room) to the layer list in {DESIGN.name}"
                continue
            for imp in found:
                target = self.room_of(imp.target)
                if target is None or target == room:
                    continue
                where = f"{paths[module].relative_to(ROOT)}:{imp.line}"
                if self.rank[target] < self.rank[room]:
                    yield (
                        f"{where}: {room} imports {imp.target}, a higher layer ({target}): a back-edge. "
                        f"Lower layers never import higher ones; the order is in docs/architecture.md"
                    )
                elif self.rank[target] == self.rank[room]:
                    yield (
                        f"{where}: {room} imports {imp.target}, but {target} is its sibling in one layer: "
                        "siblings are independent (docs/architecture.md)"
                    )


def cycles(graph: dict[str, list[Import]]) -> list[list[str]]:
    """Every strongly connected group of modules larger than one (Tarjan), each as a cycle path."""
    edges = {m: sorted({i.target for i in found if i.target in graph and i.target != m}) for m, found in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in edges[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(_path(sorted(group), edges))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in edges:
        if node not in index:
            visit(node)
    return groups


def _path(group: list[str], edges: dict[str, list[str]]) -> list[str]:
    """A cycle through the group's first module, for the message: a → b → a."""
    members, start = set(group), group[0]
    queue, came = [start], {start: ""}
    while queue:
        node = queue.pop(0)
        for nxt in edges[node]:
            if nxt == start:
                path = [node]
                while came[path[-1]]:
                    path.append(came[path[-1]])
                return [*reversed(path), start]
            if nxt in members and nxt not in came:
                came[nxt] = node
                queue.append(nxt)
    return group


# The checks ---------------------------------------------------------------------------------------


def test_every_import_follows_the_layers() -> None:
    layers = Layers(read_layers(DESIGN.read_text(encoding="utf-8")))
    problems = list(layers.problems(import_graph(), modules()))
    assert problems == [], "\n".join(problems)


def test_there_is_no_import_cycle() -> None:
    found = cycles(import_graph())
    assert found == [], "import cycles:\n" + "\n".join(" → ".join(c) for c in found)


def test_the_core_never_imports_qt() -> None:
    graph, paths = import_graph(), modules()
    offenders = [
        f"{paths[m].relative_to(ROOT)}:{i.line}: {i.target}"
        for m, found in graph.items()
        if m.startswith("mcpmanager.core")
        for i in found
        if i.target in QT
    ]
    assert len([m for m in graph if m.startswith("mcpmanager.core.")]) >= 50  # the walk found the core
    assert offenders == []


def test_importing_the_core_and_the_cli_loads_no_qt() -> None:
    code = (
        "import json, sys\n"
        "import mcpmanager.core.engine.engine, mcpmanager.cli\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'qasync', 'shiboken6')"
        " or m.startswith('mcpmanager.gui'))))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(result.stdout) == []


def test_the_core_keeps_few_modules_outside_its_rooms() -> None:
    loose = sorted(p.name for p in (PACKAGE / "core").glob("*.py"))
    assert len(loose) <= MAX_CORE_MODULES, loose


def test_no_module_is_longer_than_the_limit() -> None:
    long = {
        str(p.relative_to(ROOT)): n
        for p in sorted(ROOT.glob("mcpmanager/**/*.py"))
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def test_nothing_cites_a_document_outside_the_repository() -> None:
    outside = re.compile(r"\b(?:ARCHITECTURE|TOOLCHAIN|ANCHORS)\b|\bSTYLE\.md|\.\./shared/(?!bench-data)")
    files = [
        p
        for pattern in (
            "mcpmanager/**/*.py",
            "tests/**/*.py",
            "tests/data/**/*.md",
            "scripts/*",
            "packaging/*",
            "docs/*.md",
            "README.md",
        )
        for p in ROOT.glob(pattern)
        if p.is_file() and p.suffix in (".py", ".sh", ".md", ".spec", "")
    ]
    me = Path(__file__).resolve()
    hits = [
        f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
        for p in files
        if p.resolve() != me
        for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
        if outside.search(line)
    ]
    assert hits == [], "\n".join(hits)


# The checker itself -------------------------------------------------------------------------------

SAMPLE_LAYERS = ["app.top", "app.mid | app.side", "app.base", "app"]


def _sample() -> Layers:
    return Layers([[room.strip() for room in line.split("|")] for line in SAMPLE_LAYERS])


@pytest.mark.parametrize(
    ("module", "target", "verdict"),
    [
        ("app.top.x", "app.base.y", None),  # down: fine
        ("app.base.y", "app.top.x", "back-edge"),
        ("app.mid.a", "app.side.b", "sibling"),
        ("app.mid.a", "app.mid.b", None),  # inside one room
        ("app.base.y", "app", None),  # the top package (its version) is the bottom layer
    ],
)
def test_the_layer_check_sees_back_edges_and_siblings(module: str, target: str, verdict: str | None) -> None:
    layers = _sample()
    found = list(layers.problems({module: [Import(3, target)]}, {module: ROOT / "sample.py"}))
    if verdict is None:
        assert found == []
    else:
        assert len(found) == 1 and verdict in found[0] and "sample.py:3" in found[0]


def test_a_module_in_no_layer_is_named() -> None:
    layers = _sample()
    found = list(layers.problems({"app.new": [Import(1, "app.base.y")]}, {"app.new": ROOT / "new.py"}))
    assert found == [f"app.new is in no layer: add it (or its room) to the layer list in {DESIGN.name}"]


def test_the_cycle_check_finds_a_cycle_and_its_path() -> None:
    graph = {
        "a": [Import(1, "b")],
        "b": [Import(1, "c")],
        "c": [Import(1, "a")],
        "d": [Import(1, "a")],
    }
    assert cycles(graph) == [["a", "b", "c", "a"]]
    assert cycles({"a": [Import(1, "b")], "b": []}) == []


def test_the_import_reader_sees_every_form() -> None:
    known = {"mcpmanager", "mcpmanager.gui", "mcpmanager.gui.window", "mcpmanager.core.x", "mcpmanager.core"}
    source = (
        "import PySide6.QtCore\n"
        "from mcpmanager import gui\n"
        "from ..gui import window\n"
        "importlib.import_module('qasync')\n"
        "from mcpmanager.core.x import Thing\n"
        "if TYPE_CHECKING:\n    from mcpmanager.gui.window import Window\n"
        "def f():\n    from mcpmanager.core import x\n"
    )
    found = sorted((i.line, i.target) for i in imports(source, "mcpmanager.core", known))
    assert found == [
        (1, "PySide6"),
        (2, "mcpmanager.gui"),
        (3, "mcpmanager.gui.window"),
        (4, "qasync"),
        (5, "mcpmanager.core.x"),
        (7, "mcpmanager.gui.window"),
        (9, "mcpmanager.core.x"),
    ]
