"""Finding a server's command the way the user's shell would.

A GUI started from the Dock (launchd), a .desktop file or the Start menu does not run the user's
shell profile, so its PATH lacks what nvm, Homebrew, uv, cargo & co. added there: `npx` is "not
found" although it works in a terminal. We search the inherited PATH first (the user's explicit
choice always wins), then the usual install locations that exist, and give the child that same PATH
so that `npx` in turn finds `node`. On Windows a bare `npx` is `npx.cmd` (PATHEXT), and a batch
file runs through cmd.exe (`windows_cmd`).

Every function takes the platform, the environment, the home folder and (for absolute system
folders) a root, so the rules of all three systems are tested on any of them with fake trees.
Paths are joined and checked with the host's `os.path`; the platform only chooses the rules.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from mcpmanager.core.system.windows_cmd import argv_for, env_value, is_windows, spawn_target

logger = logging.getLogger(__name__)

_DEFAULT_PATHEXT = ".COM;.EXE;.BAT;.CMD"
_VERSION = re.compile(r"v?(\d+)(?:\.(\d+))?(?:\.(\d+))?")
_WINDOWS_PYTHON = re.compile(r"Python(\d)(\d+)(.*)", re.IGNORECASE)
_ROOT = Path("/")
_announced: set[tuple[str, str]] = set()  # (command, path) already logged as found outside PATH


def _home(env: Mapping[str, str], platform: str, home: Path | None) -> Path:
    if home is not None:
        return home
    value = env_value(env, "USERPROFILE" if is_windows(platform) else "HOME", platform)
    return Path(value) if value else Path.home()


def _version(text: str) -> tuple[int, ...] | None:
    match = _VERSION.fullmatch(text.strip())
    return tuple(int(part) for part in match.groups() if part is not None) if match else None


# The PATH ------------------------------------------------------------------------------------------


def search_path(
    env: Mapping[str, str], platform: str = sys.platform, home: Path | None = None, *, root: Path = _ROOT
) -> list[str]:
    """The PATH a child should search: `env`'s PATH first, then the usual places that exist.

    Order after PATH, and why:
    - POSIX: per-user tools first, as a login shell has them (profiles prepend them): `~/.local/bin`
      (uv, pipx, pip --user), then the Node managers (volta, nvm's default or newest version, fnm's
      default), mise/asdf/pyenv shims, bun, deno, cargo; then the package managers' shared folders
      (Homebrew on Apple silicon, `/usr/local/bin` for Intel Homebrew and manual installs,
      Linuxbrew, snap); `/usr/bin` and `/bin` last, in case PATH was unset.
    - Windows: Windows builds PATH as the machine's then the user's, so we follow that: volta's
      shims (they must shadow node), `%ProgramFiles%\\nodejs`, `%APPDATA%\\npm` (global npm
      packages), `%USERPROFILE%\\.local\\bin` (uv, pipx), the newest per-user Python's `Scripts` and
      folder, `%APPDATA%\\Python\\Python3x\\Scripts` (pip --user), cargo, bun, deno, scoop, winget
      links; `%SystemRoot%\\System32` and `%SystemRoot%` last, in case PATH was unset.
    PATH entries are kept as given (minus empty ones: a GUI must not run things from wherever it
    happens to be); extra folders only when they exist; the first of duplicates wins.
    """
    given, extras = _search_dirs(env, platform, home, root)
    return given + extras


def _search_dirs(env: Mapping[str, str], platform: str, home: Path | None, root: Path) -> tuple[list[str], list[str]]:
    """PATH's entries and the extra folders that exist, without duplicates between or within them."""
    windows = is_windows(platform)
    seen: set[str] = set()

    def new(folder: str) -> bool:
        key = folder.replace("/", "\\").rstrip("\\").lower() if windows else os.path.normpath(folder)
        if key in seen:
            return False
        seen.add(key)
        return True

    path = env_value(env, "PATH", platform) or ""
    entries = (e.strip().strip('"') if windows else e for e in path.split(";" if windows else ":"))
    given = [e for e in entries if e and new(e)]
    user = _home(env, platform, home)
    candidates = _windows_extras(env, user) if windows else _posix_extras(env, user, root)
    # os.path.isdir, not Path.is_dir: that raises on an unreadable folder (EACCES) instead of saying no.
    extras = [str(c) for c in candidates if c is not None and os.path.isdir(c) and new(str(c))]
    return given, extras


def _posix_extras(env: Mapping[str, str], home: Path, root: Path) -> list[Path | None]:
    def var(name: str, default: Path) -> Path:
        value = env.get(name)
        return Path(value) if value else default

    data = var("XDG_DATA_HOME", home / ".local" / "share")
    fnm = [Path(env["FNM_DIR"])] if env.get("FNM_DIR") else []
    fnm += [data / "fnm", home / ".local" / "share" / "fnm", home / "Library" / "Application Support" / "fnm"]
    fnm += [home / ".fnm"]
    return [
        home / ".local" / "bin",
        var("VOLTA_HOME", home / ".volta") / "bin",
        _nvm_bin(var("NVM_DIR", home / ".nvm")),
        *(folder / "aliases" / "default" / "bin" for folder in fnm),
        data / "mise" / "shims",
        var("ASDF_DATA_DIR", home / ".asdf") / "shims",
        var("PYENV_ROOT", home / ".pyenv") / "shims",
        var("BUN_INSTALL", home / ".bun") / "bin",
        var("DENO_INSTALL", home / ".deno") / "bin",
        var("CARGO_HOME", home / ".cargo") / "bin",
        root / "opt" / "homebrew" / "bin",
        root / "usr" / "local" / "bin",
        root / "home" / "linuxbrew" / ".linuxbrew" / "bin",
        home / ".linuxbrew" / "bin",
        root / "snap" / "bin",
        root / "usr" / "bin",
        root / "bin",
    ]


def _nvm_bin(nvm_dir: Path) -> Path | None:
    """The bin folder of nvm's default version if installed, else of the newest (by version)."""
    try:
        installed = {
            version: folder / "bin"
            for folder in (nvm_dir / "versions" / "node").iterdir()
            if (version := _version(folder.name)) is not None and os.path.isdir(folder / "bin")
        }
    except OSError:
        return None
    if not installed:
        return None
    wanted = _nvm_default(nvm_dir)  # `20` pins 20.x.y; () when the alias names no version (`node`)
    matching = [v for v in installed if v[: len(wanted)] == wanted] or list(installed)
    return installed[max(matching)]


def _nvm_default(nvm_dir: Path) -> tuple[int, ...]:
    # `nvm alias default X` writes X into alias/default; X may itself be an alias (`lts/iron`).
    name = "default"
    for _ in range(5):
        try:
            name = (nvm_dir / "alias" / name).read_text(encoding="utf-8").strip()
        except (OSError, ValueError):
            return ()
        version = _version(name)
        if version is not None:
            return version
    return ()


def _windows_extras(env: Mapping[str, str], home: Path) -> list[Path | None]:
    def var(name: str) -> Path | None:
        value = env_value(env, name, "win32")
        return Path(value) if value else None

    appdata = var("APPDATA") or home / "AppData" / "Roaming"
    local = var("LOCALAPPDATA") or home / "AppData" / "Local"
    program_files = var("ProgramFiles")
    system_root = var("SystemRoot")
    python = _newest_python(local / "Programs" / "Python")
    user_python = _newest_python(appdata / "Python")
    cargo = var("CARGO_HOME") or home / ".cargo"
    return [
        (var("VOLTA_HOME") or local / "Volta") / "bin",
        program_files / "Volta" if program_files else None,
        program_files / "nodejs" if program_files else None,
        appdata / "npm",
        home / ".local" / "bin",
        python / "Scripts" if python else None,
        python,
        user_python / "Scripts" if user_python else None,
        cargo / "bin",
        home / ".bun" / "bin",
        home / ".deno" / "bin",
        home / "scoop" / "shims",
        local / "Microsoft" / "WinGet" / "Links",
        system_root / "System32" if system_root else None,
        system_root,
    ]


def _newest_python(parent: Path) -> Path | None:
    """The newest `Python3XY` folder by version (Python313 > Python39); a plain build before -32/t."""
    best: tuple[tuple[int, int, bool], Path] | None = None
    try:
        folders = list(parent.iterdir())
    except OSError:
        return None
    for folder in folders:
        match = _WINDOWS_PYTHON.fullmatch(folder.name)
        if match and os.path.isdir(folder):
            key = (int(match[1]), int(match[2]), not match[3])
            if best is None or key > best[0]:
                best = (key, folder)
    return best[1] if best else None


# Resolving a command -------------------------------------------------------------------------------


def resolve_command(
    command: str,
    env: Mapping[str, str],
    platform: str = sys.platform,
    home: Path | None = None,
    cwd: Path | None = None,
    *,
    root: Path = _ROOT,
) -> str | None:
    """The file a shell would run for `command`, as an absolute path; None when there is none.

    A command with a path separator is taken relative to `cwd` (where the child will run; our own
    working directory when None) and must exist; a leading `~/` is the home folder (POSIX). A bare
    name is searched on `search_path`. POSIX wants an executable regular file; Windows tries the
    name with each PATHEXT extension unless it has one of them (so `npx` is `npx.cmd`, never the
    extensionless sh script next to it) and ignores case.
    """
    given, extras = _search_dirs(env, platform, home, root)
    found = _lookup(command, given, extras, env, platform, home, cwd)
    return found[0] if found else None


def resolve_argv(
    command: str,
    args: Sequence[str],
    env: Mapping[str, str],
    platform: str = sys.platform,
    home: Path | None = None,
    cwd: Path | None = None,
    *,
    root: Path = _ROOT,
) -> list[str] | None:
    """The full argv that runs `command` with `args`; None when the command is not found.

    On Windows a `.cmd`/`.bat` needs cmd.exe: `[cmd.exe, "/d", "/s", "/c", '"<line>"']` where the
    last element is verbatim cmd syntax (`/s` strips its outer quotes): it must reach cmd unquoted,
    see `spawn_target`. Raises ValueError for an argument cmd.exe cannot carry (a line break).
    """
    found = resolve_command(command, env, platform, home, cwd, root=root)
    return None if found is None else argv_for(found, args, env, platform)


def prepare_spawn(
    command: str,
    args: Sequence[str],
    env: Mapping[str, str],
    cwd: str | None,
    *,
    platform: str = sys.platform,
    home: Path | None = None,
    root: Path = _ROOT,
) -> tuple[str | list[str], dict[str, str]]:
    """What to hand `anyio.open_process`, and the child's environment with the augmented PATH.

    A command we cannot resolve is returned as given: the OS then fails exactly as it did before we
    resolved anything (not found, permission denied), so its error stays the message. A command
    found only outside the inherited PATH is logged once at info, so a surprise is traceable.
    """
    given, extras = _search_dirs(env, platform, home, root)
    child = {k: v for k, v in env.items() if not (is_windows(platform) and k.upper() == "PATH")}
    path_key = next((k for k in env if k.upper() == "PATH"), "PATH") if is_windows(platform) else "PATH"
    child[path_key] = (";" if is_windows(platform) else ":").join(given + extras)
    found = _lookup(command, given, extras, env, platform, home, Path(cwd) if cwd else None)
    if found is None:
        return [command, *args], child
    path, extra = found
    if extra is not None and (command, path) not in _announced:
        _announced.add((command, path))
        logger.info("%s is not on the inherited PATH; using %s (from %s)", command, path, extra)
    return spawn_target(argv_for(path, args, env, platform), platform), child


def _lookup(
    command: str,
    given: list[str],
    extras: list[str],
    env: Mapping[str, str],
    platform: str,
    home: Path | None,
    cwd: Path | None,
) -> tuple[str, str | None] | None:
    """(the file, the extra folder it came from or None when PATH had it), or None."""
    if not command:
        return None
    windows = is_windows(platform)
    base = os.path.abspath(cwd) if cwd is not None else os.getcwd()
    names = _names(command, env, platform)
    if "/" in command or (windows and ("\\" in command or command[1:2] == ":")):
        if not windows and command.startswith("~/"):
            command = str(_home(env, platform, home)) + command[1:]
        folder, name = os.path.split(os.path.join(base, command))
        hit = find_file(folder, _names(name, env, platform), windows)
        return (hit, None) if hit else None
    for index, folder in enumerate(given + extras):
        hit = find_file(os.path.join(base, folder), names, windows)  # a relative PATH entry is under cwd
        if hit:
            return hit, folder if index >= len(given) else None
    return None


def _names(name: str, env: Mapping[str, str], platform: str) -> list[str]:
    if not is_windows(platform):
        return [name]
    extensions = [e.lower() for e in (env_value(env, "PATHEXT", platform) or _DEFAULT_PATHEXT).split(";") if e]
    if os.path.splitext(name)[1].lower() in extensions:
        return [name]
    return [name + extension for extension in extensions]


def find_file(folder: str, names: list[str], windows: bool) -> str | None:
    if windows:
        # Windows file names ignore case; listing the folder keeps that true on a test host too.
        try:
            entries = {entry.lower(): entry for entry in os.listdir(folder)}
        except OSError:
            return None
        for name in names:
            actual = entries.get(name.lower())
            if actual is not None and os.path.isfile(path := os.path.join(folder, actual)):
                return path
        return None
    for name in names:
        path = os.path.join(folder, name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None
