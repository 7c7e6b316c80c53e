"""The desktop app as a person gets it: `packaging/build.sh` builds the onedir app and its tarball
(once per session); the frozen binary opens the window (offscreen) on the bundled demo servers,
serves a real SDK client over stdio, and is what `connect` starts and `install` writes; the
desktop entry validates; the install script installs from the tarball and from the checkout, and
uninstalls exactly what it installed."""

from __future__ import annotations

import json
import os
import subprocess
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from mcpmanager import __version__
from mcpmanager.core.engine.advertisement import read_advertisements
from tests.helpers.engines import stop_engines, wait_for
from tests.helpers.installed import has, it_serves_the_demo_over_stdio, plain_env, run, the_window_opens_on_the_demo

ROOT = Path(__file__).resolve().parents[2]
BUILD_TIMEOUT = 900  # PyInstaller takes about a minute here; pip may first download it

pytestmark = pytest.mark.timeout(180, func_only=True)


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("dist")
    try:
        done = subprocess.run(
            ["bash", str(ROOT / "packaging" / "build.sh"), "--dist", str(folder)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=BUILD_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"packaging/build.sh did not finish within {BUILD_TIMEOUT} s:\n{exc.output}")
    assert done.returncode == 0, f"packaging/build.sh failed ({done.returncode}):\n{done.stdout}"
    return folder


@pytest.fixture
def app(dist: Path) -> Path:
    return dist / "mcpmanager" / "mcpmanager"


def test_the_build_makes_a_onedir_app_and_a_tarball_of_it(dist: Path, app: Path) -> None:
    assert os.access(app, os.X_OK)
    assert (dist / "mcpmanager" / "install.sh").is_file()
    tarball = dist / f"mcpmanager-{__version__}-linux-{os.uname().machine}.tar.gz"
    with tarfile.open(tarball) as archive:
        names = set(archive.getnames())
    assert {"mcpmanager/mcpmanager", "mcpmanager/install.sh", "mcpmanager/_internal/LICENSE"} <= names
    done = run([str(app), "--version"], plain_env(dist))
    assert (done.returncode, done.stdout) == (0, f"mcpmanager {__version__}\n")
    # Search's static vectors (and the opt-in encoder's weights) are in the app; the vectors load: a
    # paraphrase sharing no word with its tool.
    data = "mcpmanager/_internal/mcpmanager/core/search/data"
    shipped = {"vectors.npy", "minilm-int8.npz", "vocab.txt", "LICENSE-Apache-2.0.txt", "NOTICE.md"}
    assert {f"{data}/{name}" for name in shipped} <= names
    catalogue = dist / "home-tools.json"
    catalogue.write_text(json.dumps(HOME_TOOLS), encoding="utf-8")
    done = run([str(app), "search", "--catalogue", str(catalogue), "--json", "sprinkle the lawn"], plain_env(dist))
    assert done.returncode == 0, done.stderr
    assert "water_garden" in done.stdout and "lock_door" not in done.stdout, done.stdout


HOME_TOOLS = [
    {"server": "home", "name": "water_garden", "description": "Turn on the garden irrigation for some minutes."},
    {"server": "home", "name": "lock_door", "description": "Lock or unlock the front door."},
]


def test_the_frozen_app_opens_the_window_on_the_demo_servers(app: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    the_window_opens_on_the_demo([str(app)], home, tmp_path / "window.log")


async def test_the_frozen_app_serves_a_real_client_over_stdio(app: Path, tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=str(app), args=["serve", "--stdio", "--demo", "--mode", "direct"], env=plain_env(tmp_path)
    )
    await it_serves_the_demo_over_stdio(params, tmp_path / "serve.log", "frozen")


async def test_connect_from_the_app_starts_the_app_and_install_writes_the_app(app: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    try:
        params = StdioServerParameters(command=str(app), args=["connect", "--mode", "direct"], env=plain_env(home))
        with (tmp_path / "connect.log").open("a") as errlog:
            async with Client(stdio_client(params, errlog=errlog), cache=None) as client:
                await wait_for(lambda: has(client, {"add_note"}), timeout=60)
        [engine] = read_advertisements(home / "run")
        assert engine["front_end"] == "background"
        assert Path(f"/proc/{engine['pid']}/exe").resolve() == app.resolve()  # the app binary, not a Python
    finally:
        stop_engines(home)
    (home / ".cursor").mkdir()
    done = run([str(app), "install", "--client", "cursor"], plain_env(home))
    assert done.returncode == 0, done.stderr
    entry = json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]["mcpmanager"]
    assert entry == {"command": str(app.resolve()), "args": ["connect"]}


def test_the_frozen_app_keeps_a_secret_in_the_keyring_it_finds_itself(app: Path, tmp_path: Path) -> None:
    """No OS keyring here: the frozen app must find keyrings.alt's file backend by its entry point,
    as a headless user's install does (no PYTHON_KEYRING_BACKEND)."""
    home, data = tmp_path / "home", tmp_path / "data"
    home.mkdir()
    (home / "config.json").write_text(
        json.dumps({"mcpServers": {"gh": {"command": "true", "env": {"GITHUB_TOKEN": "${keyring:gh-token}"}}}})
    )
    env = plain_env(home, XDG_DATA_HOME=str(data))
    stored = subprocess.run(
        [str(app), "secrets", "set", "gh-token"], input="frozen-s3cret\n", env=env, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    assert stored.returncode == 0, stored.stderr
    listed = run([str(app), "secrets", "list", "--json"], env)
    assert listed.returncode == 0, listed.stderr
    described = json.loads(listed.stdout)
    assert "PlaintextKeyring" in described["keyring"]
    assert [(r["name"], r["present"]) for r in described["references"]] == [("gh-token", True)]
    assert (data / "python_keyring" / "keyring_pass.cfg").is_file()
    assert not any(b"frozen-s3cret" in path.read_bytes() for path in home.rglob("*") if path.is_file())


def test_the_desktop_entry_validates() -> None:
    done = run(["desktop-file-validate", str(ROOT / "resources" / "mcpmanager.desktop")], dict(os.environ))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


@pytest.fixture
def unpacked(dist: Path, tmp_path: Path) -> Iterator[Path]:
    """The tarball unpacked where a user would, e.g. their Downloads folder."""
    downloads = tmp_path / "Downloads"
    downloads.mkdir()
    with tarfile.open(dist / f"mcpmanager-{__version__}-linux-{os.uname().machine}.tar.gz") as archive:
        archive.extractall(downloads, filter="tar")
    yield downloads / "mcpmanager"


def installed_files(home: Path) -> set[str]:
    """Every file under home, except the app's own copy (its many files are the app, not the install)."""
    app = home / ".local" / "share" / "mcpmanager" / "app"
    return {str(p.relative_to(home)) for p in home.rglob("*") if not p.is_dir() and app not in p.parents}


ICON_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
EXPECTED = {
    ".local/bin/mcpmanager",
    ".local/share/applications/mcpmanager.desktop",
    ".local/share/icons/hicolor/scalable/apps/mcpmanager.svg",
    ".local/share/mcpmanager/installed-files",
    *(f".local/share/icons/hicolor/{s}x{s}/apps/mcpmanager.png" for s in ICON_SIZES),
}


def test_install_from_the_tarball_then_uninstall(unpacked: Path, tmp_path: Path) -> None:
    home = tmp_path / "user"
    home.mkdir()
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    done = run(["bash", str(unpacked / "install.sh")], env)
    assert done.returncode == 0, done.stderr
    assert installed_files(home) == EXPECTED
    app = home / ".local" / "share" / "mcpmanager" / "app" / "mcpmanager"
    entry = (home / ".local" / "share" / "applications" / "mcpmanager.desktop").read_text()
    assert f'Exec="{app}"\n' in entry and f"TryExec={app}\n" in entry
    validated = run(["desktop-file-validate", str(home / ".local/share/applications/mcpmanager.desktop")], env)
    assert (validated.returncode, validated.stdout, validated.stderr) == (0, "", "")
    assert os.readlink(home / ".local" / "bin" / "mcpmanager") == str(app)
    # The copy runs on its own: the unpacked folder can go.
    subprocess.run(["rm", "-rf", str(unpacked)], check=True)
    assert run([str(home / ".local" / "bin" / "mcpmanager"), "--version"], env).stdout == f"mcpmanager {__version__}\n"
    (home / ".config" / "mcpmanager").mkdir(parents=True)
    (home / ".config" / "mcpmanager" / "config.json").write_text("{}")  # the user's own: kept

    done = run(["bash", str(app.parent / "install.sh"), "--uninstall"], env)
    assert done.returncode == 0, done.stderr
    assert installed_files(home) == {".config/mcpmanager/config.json"}
    assert not (home / ".local" / "share" / "mcpmanager").exists()


def test_install_from_the_checkout_points_at_its_virtualenv(tmp_path: Path) -> None:
    home = tmp_path / "user"
    home.mkdir()
    (home / ".local" / "bin").mkdir(parents=True)
    (home / ".local" / "bin" / "mcpmanager").write_text("#!/bin/sh\n")  # someone else's: left alone
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    done = run(["bash", str(ROOT / "resources" / "install.sh")], env)
    assert done.returncode == 0, done.stderr
    assert "left" in done.stdout and "(it is not ours)" in done.stdout
    entry = (home / ".local" / "share" / "applications" / "mcpmanager.desktop").read_text()
    venv = ROOT / ".venv" / "bin" / "mcpmanager"
    assert f'Exec="{venv}"\n' in entry
    assert installed_files(home) == EXPECTED  # their .local/bin/mcpmanager among them, not replaced
    assert (home / ".local" / "bin" / "mcpmanager").read_text() == "#!/bin/sh\n"
    done = run(["bash", str(ROOT / "resources" / "install.sh"), "--uninstall"], env)
    assert done.returncode == 0, done.stderr
    assert installed_files(home) == {".local/bin/mcpmanager"}  # theirs, still there
    assert (home / ".local" / "bin" / "mcpmanager").read_text() == "#!/bin/sh\n"
