"""The command line that starts mcpmanager itself, for clients and for `connect`'s background engine."""

from __future__ import annotations

import os
import site
import sys
import sysconfig
from collections.abc import Sequence

from mcpmanager.core.system.command_path import find_file
from mcpmanager.core.system.windows_cmd import is_windows


def mcpmanager_command(
    *,
    executable: str | None = None,
    frozen: bool | None = None,
    platform: str = sys.platform,
    script_dirs: Sequence[str] | None = None,
) -> list[str]:
    """The absolute command line that starts mcpmanager (clients start it without our PATH).

    Frozen (PyInstaller): the app binary alone. Otherwise the `mcpmanager` console script this
    interpreter installed: next to it (a venv's bin/ or Scripts\\), in its Scripts\\ folder (a Windows
    Python), or in its install scheme's scripts folder (Debian's /usr/local/bin, pip --user). Not
    any `mcpmanager` on PATH: that may be another installation. Failing that `python -m mcpmanager`.
    The keyword arguments exist for tests.
    """
    exe = os.path.abspath(executable if executable is not None else sys.executable)
    if frozen if frozen is not None else bool(getattr(sys, "frozen", False)):
        return [exe]
    windows = is_windows(platform)
    folder = os.path.dirname(exe)
    folders = [folder, os.path.join(folder, "Scripts"), *(_script_dirs() if script_dirs is None else script_dirs)]
    for candidate in folders:
        found = find_file(candidate, ["mcpmanager.exe" if windows else "mcpmanager"], windows)
        if found:
            return [os.path.abspath(found)]
    return [exe, "-m", "mcpmanager"]


def _script_dirs() -> list[str]:
    folders = [sysconfig.get_path("scripts")]
    if site.ENABLE_USER_SITE:  # off in a venv: a user install there is another installation
        folders.append(sysconfig.get_path("scripts", sysconfig.get_preferred_scheme("user")))
    return folders
