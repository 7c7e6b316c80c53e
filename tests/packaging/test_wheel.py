"""mcpmanager installed as a Python tool is (`pipx install`, `uv tool install`): a wheel built from the
checkout, installed into a fresh virtualenv that has nothing of this one, run from there with little
of this machine's environment: `--version`, `serve --stdio` on the bundled demo for a real SDK
client, and the window offscreen on the demo with its icon drawn."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from mcp import StdioServerParameters

from mcpmanager import __version__
from tests.helpers.installed import it_serves_the_demo_over_stdio, plain_env, run, the_window_opens_on_the_demo

ROOT = Path(__file__).resolve().parents[2]
PROBE = Path(__file__).resolve().parent / "window_probe.py"
BUILD_TIMEOUT = 300  # seconds; the build's own setuptools is installed first
INSTALL_TIMEOUT = 900  # pip downloads PySide6 and the rest the first time; its cache makes it fast after
# What a wheel build reads; nothing else of the checkout (resources/ least of all) may be needed.
BUILD_INPUTS = ("pyproject.toml", "README.md", "LICENSE", "mcpmanager/")

pytestmark = pytest.mark.timeout(180, func_only=True)


def checked(command: list[str], timeout: float, env: dict[str, str] | None = None) -> None:
    try:
        done = subprocess.run(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout, env=env, check=False
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{command[:3]} did not finish within {timeout} s:\n{exc.output}")
    assert done.returncode == 0, f"{command[:3]} failed ({done.returncode}):\n{done.stdout}"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`python -m build --wheel` over a copy of the build's inputs as git would commit them: a stale
    build/ folder in the checkout could carry removed modules into the wheel."""
    source = tmp_path_factory.mktemp("source")
    tracked = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    listed = subprocess.run(tracked, cwd=ROOT, capture_output=True, check=True).stdout.decode()
    for name in listed.split("\0"):
        if name.startswith(BUILD_INPUTS) and (ROOT / name).is_file():  # a file deleted, not yet committed, is listed
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    dist = tmp_path_factory.mktemp("dist")
    checked([sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(source)], BUILD_TIMEOUT)
    [built] = dist.glob("mcpmanager-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv (no system site-packages) with the wheel and its dependencies installed."""
    folder = tmp_path_factory.mktemp("venv")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    checked([sys.executable, "-m", "venv", str(folder)], 120, env=env)
    checked([str(folder / "bin" / "python"), "-m", "pip", "install", str(wheel)], INSTALL_TIMEOUT, env=env)
    return folder


def test_the_wheel_carries_mcpmanager_and_its_data_only(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert {name.split("/")[0] for name in names} == {"mcpmanager", f"mcpmanager-{__version__}.dist-info"}
    data = {
        "mcpmanager/demo/demo_config.json",
        "mcpmanager/demo/notes_server.py",
        "mcpmanager/demo/clock_server.py",
        "mcpmanager/gui/icons/mcpmanager.svg",
        "mcpmanager/core/search/data/vectors.npy",
        "mcpmanager/core/search/data/minilm-int8.npz",
    }
    assert data <= names, sorted(data - names)


def test_the_installed_command_prints_its_version(venv: Path, tmp_path: Path) -> None:
    done = run([str(venv / "bin" / "mcpmanager"), "--version"], plain_env(tmp_path))
    assert (done.returncode, done.stdout, done.stderr) == (0, f"mcpmanager {__version__}\n", "")


async def test_the_installed_command_serves_the_demo_over_stdio(venv: Path, tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=str(venv / "bin" / "mcpmanager"),
        args=["serve", "--stdio", "--demo", "--mode", "direct"],
        env=plain_env(tmp_path),
        cwd=tmp_path,
    )
    await it_serves_the_demo_over_stdio(params, tmp_path / "serve.log", "from the wheel")


def test_the_installed_window_opens_on_the_demo_with_its_icon(venv: Path, tmp_path: Path) -> None:
    home, probed = tmp_path / "home", tmp_path / "probed"
    home.mkdir()
    probed.mkdir()
    the_window_opens_on_the_demo([str(venv / "bin" / "mcpmanager")], home, tmp_path / "window.log")
    # The same window in the installed package, looked at from inside: its icon and the About
    # dialog's are drawn from the SVG the wheel carries, and About shows the licence.
    done = run([str(venv / "bin" / "python"), str(PROBE)], plain_env(probed, QT_QPA_PLATFORM="offscreen"))
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert Path(seen["package"]).is_relative_to(venv), seen["package"]  # not this checkout's
    assert seen["servers"] == {"notes": "ready", "clock": "ready"}
    assert seen["window_icon"] > seen["icon_area"] // 4, seen
    assert seen["about_icon"] > seen["icon_area"] // 4, seen
    assert seen["licence"] == "MIT License"  # from the wheel's metadata: no LICENSE lies beside the package
