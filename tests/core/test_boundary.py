"""The core never imports Qt: it must run headless (`mcpmanager serve`) and be testable without a display."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import mcpmanager.core

CORE = Path(mcpmanager.core.__file__).resolve().parent
FORBIDDEN = ("PySide6", "qasync", "mcpmanager.gui")


def _forbidden(module: str) -> bool:
    return any(module == name or module.startswith(name + ".") for name in FORBIDDEN)


def _imports(tree: ast.AST, package: str) -> list[tuple[int, str]]:
    """Every module an import statement names, relative imports resolved against `package`."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            # `from mcpmanager import gui` names the module in the alias, not in `module`.
            found.extend((node.lineno, f"{module}.{alias.name}") for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)
            in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append((node.lineno, node.args[0].value))
    return found


def test_the_static_check_sees_every_import_form() -> None:
    source = (
        "import PySide6.QtCore\n"
        "from qasync import QEventLoop\n"
        "from mcpmanager import gui\n"
        "from ..gui import window\n"
        "importlib.import_module('PySide6')\n"
        "import json\n"
    )
    hits = [(line, m) for line, m in _imports(ast.parse(source), "mcpmanager.core") if _forbidden(m)]
    assert {line for line, _ in hits} == {1, 2, 3, 4, 5}  # every form but the last line's
    assert ("mcpmanager.gui", 4) in {(m, line) for line, m in hits}  # the relative import, resolved


def test_no_core_module_imports_qt() -> None:
    files = sorted(CORE.rglob("*.py"))
    assert len(files) >= 10  # the walk found the package, not an empty folder
    offenders = []
    for path in files:
        package = ".".join(("mcpmanager", *path.relative_to(CORE.parent).parent.parts))
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        offenders += [
            f"{path.relative_to(CORE.parent)}:{line}: {m}" for line, m in _imports(tree, package) if _forbidden(m)
        ]
    assert offenders == []


def test_importing_the_core_and_the_cli_loads_no_qt() -> None:
    code = (
        "import json, sys\n"
        "import mcpmanager.core.engine, mcpmanager.cli\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'qasync', 'shiboken6')"
        " or m.startswith('mcpmanager.gui'))))\n"
        "print(json.dumps('mcpmanager.core.engine' in sys.modules and 'mcpmanager.cli' in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    loaded, imported = (json.loads(line) for line in result.stdout.splitlines())
    assert imported is True
    assert loaded == []
