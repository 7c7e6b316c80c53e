"""Windows: environment variables whose names ignore case, and running a batch file through cmd.exe.

On Windows a bare `npx` is `npx.cmd` (PATHEXT), and a batch file runs through `cmd.exe /d /s /c` with
every argument escaped for cmd (see `_cmd_line`), as cross-spawn (Node's execa) does it. Every function
takes the platform and the environment, so the rules are tested on any system.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import PureWindowsPath

_BATCH = (".bat", ".cmd")
# What cmd.exe treats specially, all escaped with `^` (cross-spawn's set): escaping the quote too
# keeps cmd out of its quoted state, so every caret counts and `&`, `|`, `%` stay literal.
_CMD_META = re.compile(r'([()\][%!^"`<>&|;, *?])')


def is_windows(platform: str) -> bool:
    return platform == "win32"  # cygwin and msys behave as POSIX here


def env_value(env: Mapping[str, str], name: str, platform: str) -> str | None:
    """An environment variable, non-empty; Windows variable names ignore case."""
    value = env.get(name)
    if value is None and is_windows(platform):
        value = next((v for k, v in env.items() if k.upper() == name.upper()), None)
    return value or None


def spawn_target(argv: list[str], platform: str = sys.platform) -> str | list[str]:
    """What `anyio.open_process` needs for an argv from `resolve_argv`.

    asyncio joins a list with `subprocess.list2cmdline`, whose backslash-escaped quotes cmd.exe
    does not understand, and passes a command line verbatim only through its shell path, which is
    Popen(shell=True): `%ComSpec% /c "<line>"`. cmd reads that as `/s` would: it drops the outer
    quotes unless the whole line is the name of one executable file, and then keeping them means
    the same. What is lost is `/d`: an AutoRun command may print first (our stdout reader keeps
    non-protocol lines out of the session).
    """
    if is_windows(platform) and _is_cmd_wrapper(argv):
        return argv[4][1:-1]
    return argv


def argv_for(path: str, args: Sequence[str], env: Mapping[str, str], platform: str) -> list[str]:
    if is_windows(platform) and os.path.splitext(path)[1].lower() in _BATCH:
        return [_comspec(env, platform), "/d", "/s", "/c", f'"{_cmd_line(path, args)}"']
    return [path, *args]


def _is_cmd_wrapper(argv: Sequence[str]) -> bool:
    return len(argv) == 5 and list(argv[1:4]) == ["/d", "/s", "/c"] and argv[4][:1] == argv[4][-1:] == '"'


def _comspec(env: Mapping[str, str], platform: str) -> str:
    # Absolute, never a bare `cmd.exe`: that would be searched in the working directory first.
    comspec = env_value(env, "ComSpec", platform)
    if comspec and PureWindowsPath(comspec).is_absolute():
        return comspec
    return str(PureWindowsPath(env_value(env, "SystemRoot", platform) or "C:\\Windows", "System32", "cmd.exe"))


def _cmd_line(script: str, args: Sequence[str]) -> str:
    """`script args…` for `cmd /s /c "…"`, as cross-spawn (Node's execa) builds it.

    Each argument is quoted by `subprocess.list2cmdline` (what node.exe and python.exe parse), then
    every cmd metacharacter gets a caret. A script that forwards `%*` into a command line (every
    npm shim, npx.cmd) has cmd parse its arguments a second time, so there they get a second layer
    of carets (cross-spawn does this only for node_modules\\.bin shims; the reason holds for all of
    them). The script's path is parsed once: one layer.
    """
    double = _forwards_arguments(script)
    parts = [_CMD_META.sub(r"^\1", script)]
    for arg in args:
        if any(c in arg for c in "\r\n\0"):
            raise ValueError(f"cmd.exe cannot pass an argument with a line break or NUL to {script}: {arg!r}")
        escaped = _CMD_META.sub(r"^\1", subprocess.list2cmdline([arg]))
        parts.append(_CMD_META.sub(r"^\1", escaped) if double else escaped)
    return " ".join(parts)


def _forwards_arguments(script: str) -> bool:
    try:
        with open(script, "rb") as handle:
            return b"%*" in handle.read(65536)
    except OSError:
        return False
