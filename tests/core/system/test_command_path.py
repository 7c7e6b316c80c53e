"""Resolving commands like the user's shell, for Linux, macOS and Windows layouts built under tmp_path.

The platform is passed in; absolute system folders come from `root`, Windows ones from the
environment, so every system's rules run here. cmd.exe cannot run here: a small model of how it
and node.exe read a command line checks that arguments arrive intact (see `cmd_then_msvc`).
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import pytest

from mcpmanager.core.system.command_path import prepare_spawn, resolve_argv, resolve_command, search_path
from mcpmanager.core.system.own_command import mcpmanager_command
from mcpmanager.core.system.windows_cmd import spawn_target

WIN_ENV = {"SystemRoot": "C:\\Windows", "PATHEXT": ".COM;.EXE;.BAT;.CMD"}
CMD = "C:\\Windows\\System32\\cmd.exe"


def executable(path: Path, text: str = "#!/bin/sh\n", mode: int = 0o755) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


def folders(*paths: Path) -> list[Path]:
    for path in paths:
        path.mkdir(parents=True, exist_ok=True)
    return list(paths)


# search_path: POSIX ------------------------------------------------------------------------------


def test_path_comes_first_then_only_the_extra_folders_that_exist(tmp_path: Path) -> None:
    home, root = tmp_path / "home", tmp_path / "root"
    present = folders(home / ".local" / "bin", home / ".cargo" / "bin", root / "opt" / "homebrew" / "bin")
    env = {"PATH": "/usr/bin:/bin:/usr/sbin:/sbin"}  # what launchd gives a Dock app
    assert search_path(env, "darwin", home, root=root) == ["/usr/bin", "/bin", "/usr/sbin", "/sbin", *map(str, present)]
    assert search_path({}, "linux", home, root=root) == [str(p) for p in present]  # PATH unset: extras alone


def test_every_posix_location_in_its_documented_order(tmp_path: Path) -> None:
    home, root = tmp_path / "home", tmp_path / "root"
    (home / ".nvm" / "versions" / "node" / "v20.1.0" / "bin").mkdir(parents=True)
    installation = home / ".local" / "share" / "fnm" / "node-versions" / "v22.3.0" / "installation"
    (installation / "bin").mkdir(parents=True)
    (home / ".local" / "share" / "fnm" / "aliases").mkdir(parents=True)
    (home / ".local" / "share" / "fnm" / "aliases" / "default").symlink_to(installation)  # what fnm makes
    expected = [
        home / ".local" / "bin",
        home / ".volta" / "bin",
        home / ".nvm" / "versions" / "node" / "v20.1.0" / "bin",
        home / ".local" / "share" / "fnm" / "aliases" / "default" / "bin",
        home / ".local" / "share" / "mise" / "shims",
        home / ".asdf" / "shims",
        home / ".pyenv" / "shims",
        home / ".bun" / "bin",
        home / ".deno" / "bin",
        home / ".cargo" / "bin",
        root / "opt" / "homebrew" / "bin",
        root / "usr" / "local" / "bin",
        root / "home" / "linuxbrew" / ".linuxbrew" / "bin",
        home / ".linuxbrew" / "bin",
        root / "snap" / "bin",
        root / "usr" / "bin",
        root / "bin",
    ]
    folders(*expected)
    assert search_path({"HOME": str(home)}, "linux", root=root) == [str(p) for p in expected]  # home from $HOME


def test_no_duplicates_and_no_empty_entries(tmp_path: Path) -> None:
    home, root = tmp_path / "home", tmp_path / "root"
    local, cargo = folders(home / ".local" / "bin", home / ".cargo" / "bin")
    env = {"PATH": f"/opt/x::/opt/x/:{cargo}:/usr/bin:"}
    # cargo keeps its place in PATH and is not repeated among the extras; "" (the cwd) is dropped.
    assert search_path(env, "linux", home, root=root) == ["/opt/x", str(cargo), "/usr/bin", str(local)]


def test_nvm_picks_the_newest_version_by_number_not_by_string(tmp_path: Path) -> None:
    home, root = tmp_path / "home", tmp_path / "root"
    versions = home / ".nvm" / "versions" / "node"
    for name in ["v9.0.0", "v10.1.0", "v20.2.0", "v20.10.0", "system"]:
        (versions / name / "bin").mkdir(parents=True)
    (versions / "v22.0.0").mkdir()  # a broken install without bin/ is not a candidate
    assert search_path({}, "linux", home, root=root) == [str(versions / "v20.10.0" / "bin")]


@pytest.mark.parametrize(
    ("alias", "chained", "chosen"),
    [
        ("18", None, "v18.20.4"),  # a major pins the newest of that line
        ("v20.2.0\n", None, "v20.2.0"),
        ("lts/iron", "v20.2.0", "v20.2.0"),  # an alias naming another alias
        ("node", None, "v22.1.0"),  # no version in it: the newest
        ("16", None, "v22.1.0"),  # not installed: the newest
    ],
)
def test_nvm_follows_its_default_alias(tmp_path: Path, alias: str, chained: str | None, chosen: str) -> None:
    nvm = tmp_path / "nvm"  # and NVM_DIR says where nvm lives
    for name in ["v18.1.0", "v18.20.4", "v20.2.0", "v22.1.0"]:
        (nvm / "versions" / "node" / name / "bin").mkdir(parents=True)
    (nvm / "alias" / "lts").mkdir(parents=True)
    (nvm / "alias" / "default").write_text(alias, encoding="utf-8")
    if chained is not None:
        (nvm / "alias" / alias).write_text(chained, encoding="utf-8")
    found = search_path({"NVM_DIR": str(nvm)}, "linux", tmp_path / "home", root=tmp_path / "root")
    assert found == [str(nvm / "versions" / "node" / chosen / "bin")]


def test_tool_homes_set_in_the_environment_are_honoured(tmp_path: Path) -> None:
    home, root = tmp_path / "home", tmp_path / "root"
    cargo, volta, old_fnm = folders(
        tmp_path / "cargo" / "bin", tmp_path / "volta" / "bin", home / ".fnm" / "aliases" / "default" / "bin"
    )
    (home / ".cargo" / "bin").mkdir(parents=True)  # the default is ignored when CARGO_HOME says otherwise
    env = {"CARGO_HOME": str(tmp_path / "cargo"), "VOLTA_HOME": str(tmp_path / "volta")}
    assert search_path(env, "linux", home, root=root) == [str(volta), str(old_fnm), str(cargo)]


# search_path: Windows ----------------------------------------------------------------------------


def windows_tree(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    home = tmp_path / "Users" / "me"
    env = {
        **WIN_ENV,
        "APPDATA": str(home / "AppData" / "Roaming"),
        "LOCALAPPDATA": str(home / "AppData" / "Local"),
        "ProgramFiles": str(tmp_path / "Program Files"),
    }
    return home, env


def test_windows_locations_in_their_documented_order(tmp_path: Path) -> None:
    home, env = windows_tree(tmp_path)
    local, roaming, programs = home / "AppData" / "Local", home / "AppData" / "Roaming", tmp_path / "Program Files"
    python = local / "Programs" / "Python"
    folders(python / "Python39" / "Scripts", python / "Python312-32" / "Scripts")  # older, and a 32-bit build
    expected = [
        local / "Volta" / "bin",
        programs / "Volta",
        programs / "nodejs",
        roaming / "npm",
        home / ".local" / "bin",
        python / "Python312" / "Scripts",  # 312 > 39 though "Python39" > "Python312" as strings
        python / "Python312",
        roaming / "Python" / "Python313" / "Scripts",
        home / ".cargo" / "bin",
        home / ".bun" / "bin",
        home / ".deno" / "bin",
        home / "scoop" / "shims",
        local / "Microsoft" / "WinGet" / "Links",
    ]
    folders(*expected)
    env["Path"] = "C:\\Windows\\system32;C:\\Windows"  # Windows spells it Path; names ignore case
    assert search_path(env, "win32", home) == ["C:\\Windows\\system32", "C:\\Windows", *map(str, expected)]


def test_windows_path_entries_compare_without_case_and_quotes(tmp_path: Path) -> None:
    home, env = windows_tree(tmp_path)
    (npm,) = folders(home / "AppData" / "Roaming" / "npm")
    env["PATH"] = f'"{str(npm).upper()}";C:\\Tools\\;c:\\tools;;'
    # The upper-cased npm folder is the same folder on Windows: it is not added again.
    assert search_path(env, "win32", home) == [str(npm).upper(), "C:\\Tools\\"]


# resolve_command: POSIX --------------------------------------------------------------------------


def test_path_wins_over_the_extras_and_extras_are_searched_when_path_lacks_it(tmp_path: Path) -> None:
    home, root = tmp_path / "home", tmp_path / "root"
    on_path = executable(tmp_path / "bin" / "npx")
    executable(home / ".local" / "bin" / "npx")
    uvx = executable(home / ".local" / "bin" / "uvx")
    env = {"PATH": str(tmp_path / "bin")}
    assert resolve_command("npx", env, "linux", home, root=root) == str(on_path)
    assert resolve_command("uvx", env, "linux", home, root=root) == str(uvx)
    assert resolve_command("nothing-like-this", env, "linux", home, root=root) is None
    assert resolve_command("", env, "linux", home, root=root) is None


def test_non_executable_files_and_folders_are_skipped_on_posix(tmp_path: Path) -> None:
    home, root = tmp_path / "home", tmp_path / "root"
    executable(tmp_path / "a" / "tool", mode=0o644)  # not executable: a shell skips it
    (tmp_path / "b" / "tool").mkdir(parents=True)  # a folder of that name
    real = executable(tmp_path / "c" / "tool")
    env = {"PATH": ":".join(str(tmp_path / d) for d in "abc")}
    assert resolve_command("tool", env, "linux", home, root=root) == str(real)
    real.chmod(0o644)
    assert resolve_command("tool", env, "linux", home, root=root) is None


def test_a_command_with_a_separator_is_relative_to_cwd_and_must_exist(tmp_path: Path) -> None:
    home, root, project = tmp_path / "home", tmp_path / "root", tmp_path / "project"
    server = executable(project / "node_modules" / ".bin" / "server")
    env = {"PATH": "/usr/bin"}
    for command in ["node_modules/.bin/server", "./node_modules/.bin/server"]:
        found = resolve_command(command, env, "linux", home, project, root=root)
        assert found is not None and os.path.samefile(found, server) and os.path.isabs(found)
    assert resolve_command(str(server), env, "linux", home, tmp_path / "elsewhere", root=root) == str(server)
    assert resolve_command("./server", env, "linux", home, project, root=root) is None  # not searched on PATH
    executable(project / "plain", mode=0o644)
    assert resolve_command("./plain", env, "linux", home, project, root=root) is None
    tilde = executable(home / "bin" / "mine")
    assert resolve_command("~/bin/mine", env, "linux", home, project, root=root) == str(tilde)


def test_a_relative_path_entry_is_under_cwd(tmp_path: Path) -> None:
    home, root, project = tmp_path / "home", tmp_path / "root", tmp_path / "project"
    tool = executable(project / "bin" / "tool")
    found = resolve_command("tool", {"PATH": "bin"}, "linux", home, project, root=root)
    assert found is not None and os.path.samefile(found, tool)


# resolve_command: Windows ------------------------------------------------------------------------


def test_windows_npx_is_npx_cmd_by_pathext_never_the_sh_script(tmp_path: Path) -> None:
    home, env = windows_tree(tmp_path)
    nodejs = tmp_path / "Program Files" / "nodejs"
    for name in ["npx", "npx.ps1", "npx.cmd", "node.exe"]:
        executable(nodejs / name, mode=0o644)  # no execute bits on Windows
    env["PATH"] = "C:\\Windows\\system32"  # nodejs is not on it: found among the extras
    assert resolve_command("npx", env, "win32", home) == str(nodejs / "npx.cmd")
    assert resolve_command("node", env, "win32", home) == str(nodejs / "node.exe")
    assert resolve_command("npx.cmd", env, "win32", home) == str(nodejs / "npx.cmd")
    assert resolve_command("npx.ps1", env, "win32", home) is None  # .PS1 is no PATHEXT extension
    assert resolve_command("uvx", env, "win32", home) is None


def test_windows_ignores_case_and_keeps_the_name_on_disk(tmp_path: Path) -> None:
    home, env = windows_tree(tmp_path)
    uvx = executable(home / ".local" / "bin" / "UVX.Exe", mode=0o644)
    assert resolve_command("uvx", env, "win32", home) == str(uvx)
    assert resolve_command("Uvx.EXE", env, "win32", home) == str(uvx)
    env["pathext"] = ".exe"  # the variable's name ignores case too (it replaces PATHEXT's value here)
    del env["PATHEXT"]
    assert resolve_command("UVX", env, "win32", home) == str(uvx)


def test_windows_pathext_order_within_a_folder_and_folder_order_first(tmp_path: Path) -> None:
    home, env = windows_tree(tmp_path)
    first, second = tmp_path / "first", tmp_path / "second"
    for path in [first / "tool.cmd", first / "tool.exe", second / "tool.com", second / "only.bat"]:
        executable(path, mode=0o644)
    env["PATH"] = f"{first};{second}"
    assert resolve_command("tool", env, "win32", home) == str(first / "tool.exe")  # .EXE before .CMD
    assert resolve_command("only", env, "win32", home) == str(second / "only.bat")
    env["PATHEXT"] = ".CMD;.EXE"
    assert resolve_command("tool", env, "win32", home) == str(first / "tool.cmd")
    env.pop("PATHEXT")  # unset: the default .COM;.EXE;.BAT;.CMD
    assert resolve_command("tool", env, "win32", home) == str(first / "tool.exe")


def test_windows_relative_command_takes_pathext_and_cwd(tmp_path: Path) -> None:
    home, env = windows_tree(tmp_path)
    project = tmp_path / "project"
    server = executable(project / "tools" / "server.cmd", mode=0o644)
    # "/" is a separator on Windows too (and the only one this test host knows).
    found = resolve_command("tools/server", env, "win32", home, project)
    assert found is not None and os.path.samefile(found, server)
    assert resolve_command("tools/missing", env, "win32", home, project) is None


# cmd.exe: a model of how it reads `/s /c "…"`, a batch file's `%*`, and node.exe's argv parser ---


def cmd_parse(line: str, percent: dict[str, str] | None) -> tuple[str, int]:
    """One cmd.exe parse: %VAR% expansion (phase 1, skipped for already-expanded text), then carets
    and quotes (phase 2). Returns the text and where its first blank that was neither escaped nor
    quoted is (-1: none). An unescaped & | < > outside quotes would start another command: fail."""
    if percent is not None:  # command-line mode: an undefined %NAME% stays as it is
        out, i = "", 0
        while i < len(line):
            end = line.find("%", i + 1) if line[i] == "%" else -1
            if end > 0 and line[i + 1 : end] in percent:
                out, i = out + percent[line[i + 1 : end]], end + 1
            else:
                out, i = out + line[i], i + 1
        line = out
    out, split, quoted, i = "", -1, False, 0
    while i < len(line):
        c = line[i]
        if c == '"':
            quoted = not quoted
        elif c == "^" and not quoted:
            i += 1
            c = line[i]
        elif c in "&|<>" and not quoted:
            raise AssertionError(f"cmd would split the line at {c!r}: {line}")
        elif c == " " and not quoted and split < 0:
            split = len(out)
        out, i = out + c, i + 1
    return out, split


def msvc_split(text: str) -> list[str]:
    """How node.exe / python.exe split their command line (the rules list2cmdline writes for)."""
    args: list[str] = []
    current, quoted, started, i = "", False, False, 0
    while i < len(text):
        c = text[i]
        if c in " \t" and not quoted:
            if started:
                args.append(current)
            current, started, i = "", False, i + 1
            continue
        started = True
        if c == "\\":
            j = i
            while j < len(text) and text[j] == "\\":
                j += 1
            if j < len(text) and text[j] == '"':
                current += "\\" * ((j - i) // 2) + ('"' if (j - i) % 2 else "")
                i = j + 1 if (j - i) % 2 else j
            else:
                current, i = current + "\\" * (j - i), j
        elif c == '"':
            quoted, i = not quoted, i + 1
        else:
            current, i = current + c, i + 1
    if started:
        args.append(current)
    return args


def cmd_then_msvc(argv: list[str], forwards: bool) -> tuple[str, list[str]]:
    """(the script cmd runs, the arguments node.exe gets) for an argv from resolve_argv."""
    assert argv[1:4] == ["/d", "/s", "/c"] and argv[4].startswith('"') and argv[4].endswith('"')
    line, blank = cmd_parse(argv[4][1:-1], percent={"PATH": "C:\\Windows", "OS": "Windows_NT"})  # /s: quotes go
    script, rest = (line[:blank], line[blank + 1 :]) if blank >= 0 else (line, "")
    if forwards:  # the shim's `"node" "cli.js" %*`: the expanded %* is parsed again, without % expansion
        rest = cmd_parse(rest, percent=None)[0]
    return script, msvc_split(rest)


TRICKY = [
    "plain",
    "with space",
    "",
    'say "hi"',
    'odd" & quote',  # the quote would flip cmd's second parse of %* out of quoting: needs double carets
    "a&b|c<d>e",
    "https://example.com/?a=1&b=2",
    "caret^here",
    "%PATH%",
    "100%",
    "back\\slash\\",
    'tail\\"',
    "(paren) !bang! [x] `t` ;,=*?",
    "tab\there",
    "ünïcode ✓",
]


@pytest.mark.parametrize("shim", ["forwards", "plain"])
def test_windows_batch_runs_through_cmd_with_every_argument_intact(tmp_path: Path, shim: str) -> None:
    home, env = windows_tree(tmp_path)
    nodejs = tmp_path / "Program Files (x86)" / "node js"  # blanks and parens in the script's path
    text = '@"%~dp0\\node.exe" "%~dp0\\cli.js" %*\r\n' if shim == "forwards" else "@echo %~1\r\n"
    npx = executable(nodejs / "npx.cmd", text, mode=0o644)
    env["PATH"] = str(nodejs)
    argv = resolve_argv("npx", TRICKY, env, "win32", home)
    assert argv is not None and argv[:4] == [CMD, "/d", "/s", "/c"]
    script, args = cmd_then_msvc(argv, forwards=shim == "forwards")
    assert script == str(npx)
    assert args == TRICKY


def test_windows_batch_command_line_exactly(tmp_path: Path) -> None:
    home, env = windows_tree(tmp_path)
    shim = executable(tmp_path / "npm" / "npx.cmd", '"%_prog%" "%dp0%\\cli.js" %*\r\n', mode=0o644)
    plain = executable(tmp_path / "npm" / "plain.bat", "@echo %1\r\n", mode=0o644)
    env["PATH"] = str(tmp_path / "npm")
    assert resolve_argv("plain", ["-y", "a b"], env, "win32", home) == [
        CMD, "/d", "/s", "/c", f'"{plain} -y ^"a^ b^""'
    ]  # fmt: skip
    # npm's shims forward %* into a command line, which cmd parses again: a second layer of carets.
    assert resolve_argv("npx", ["-y", "a&b", "x y"], env, "win32", home) == [
        CMD, "/d", "/s", "/c", f'"{shim} -y a^^^&b ^^^"x^^^ y^^^""'
    ]  # fmt: skip


def test_windows_exe_runs_directly_and_comspec_is_absolute(tmp_path: Path) -> None:
    home, env = windows_tree(tmp_path)
    uvx = executable(home / ".local" / "bin" / "uvx.exe", mode=0o644)
    bat = executable(home / ".local" / "bin" / "go.bat", mode=0o644)
    assert resolve_argv("uvx", ["mcp-server-time", "a b"], env, "win32", home) == [str(uvx), "mcp-server-time", "a b"]
    env["COMSPEC"] = "D:\\Shells\\cmd.exe"
    assert resolve_argv("go", [], env, "win32", home) == ["D:\\Shells\\cmd.exe", "/d", "/s", "/c", f'"{bat}"']
    env["COMSPEC"] = "cmd.exe"  # relative: it would be looked up in the working directory first
    env["SystemRoot"] = "E:\\Win"
    assert resolve_argv("go", [], env, "win32", home) == ["E:\\Win\\System32\\cmd.exe", "/d", "/s", "/c", f'"{bat}"']
    assert resolve_argv("missing", [], env, "win32", home) is None
    with pytest.raises(ValueError, match="line break"):
        resolve_argv("go", ["two\nlines"], env, "win32", home)


def test_spawn_target_hands_cmd_its_line_verbatim_and_everything_else_as_a_list(tmp_path: Path) -> None:
    wrapped = [CMD, "/d", "/s", "/c", '"C:\\npm\\npx.cmd -y ^"a^ b^""']
    # asyncio's shell path (Popen shell=True) makes `%ComSpec% /c "<this>"` of it, cmd strips the quotes.
    assert spawn_target(wrapped, "win32") == 'C:\\npm\\npx.cmd -y ^"a^ b^"'
    assert spawn_target(["C:\\uv\\uvx.exe", "a b"], "win32") == ["C:\\uv\\uvx.exe", "a b"]
    assert spawn_target(wrapped, "linux") == wrapped


# prepare_spawn: what process.py uses -------------------------------------------------------------


def test_prepare_spawn_gives_the_child_the_augmented_path_and_logs_an_extra_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    home, root = tmp_path / "home", tmp_path / "root"
    tool = executable(home / ".local" / "bin" / "mcp-thing")
    on_path = executable(tmp_path / "bin" / "listed")
    env = {"PATH": str(tmp_path / "bin"), "HOME": str(home), "LANG": "C.UTF-8"}
    caplog.set_level(logging.INFO, logger="mcpmanager.core.system.command_path")
    for _ in range(2):
        target, child = prepare_spawn("mcp-thing", ["--x"], env, None, platform="linux", root=root)
        assert target == [str(tool), "--x"]
        assert child == {**env, "PATH": f"{tmp_path / 'bin'}:{home / '.local' / 'bin'}"}
    assert [r.getMessage() for r in caplog.records] == [
        f"mcp-thing is not on the inherited PATH; using {tool} (from {home / '.local' / 'bin'})"
    ]
    target, _ = prepare_spawn("listed", [], env, None, platform="linux", root=root)
    assert target == [str(on_path)] and len(caplog.records) == 1  # on PATH: nothing to say
    # Not found: handed over as given, so the OS's own error (not found, permission) is the message.
    assert prepare_spawn("nope", ["a"], env, None, platform="linux", root=root)[0] == ["nope", "a"]


def test_prepare_spawn_on_windows_keeps_one_path_variable_and_runs_batch_files_through_cmd(tmp_path: Path) -> None:
    home, env = windows_tree(tmp_path)
    npx = executable(tmp_path / "Program Files" / "nodejs" / "npx.cmd", mode=0o644)
    env["Path"] = "C:\\Windows\\system32"
    target, child = prepare_spawn("npx", ["-y", "pkg"], env, None, platform="win32", home=home)
    assert target == str(npx).replace(" ", "^ ") + " -y pkg"
    assert [k for k in child if k.upper() == "PATH"] == ["Path"]
    assert child["Path"] == f"C:\\Windows\\system32;{npx.parent}"


# mcpmanager_command ------------------------------------------------------------------------------


def test_frozen_is_the_app_binary_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = executable(tmp_path / "mcpmanager.app" / "Contents" / "MacOS" / "mcpmanager")
    executable(app.parent / "mcpmanager-other")
    assert mcpmanager_command(executable=str(app), frozen=True) == [str(app)]
    monkeypatch.chdir(tmp_path)
    assert mcpmanager_command(executable="mcpmanager.app/Contents/MacOS/mcpmanager", frozen=True) == [str(app)]
    monkeypatch.setattr(sys, "frozen", True, raising=False)  # what PyInstaller sets
    monkeypatch.setattr(sys, "executable", str(app))
    assert mcpmanager_command() == [str(app)]


def test_the_console_script_of_this_interpreter_else_python_dash_m(tmp_path: Path) -> None:
    python = executable(tmp_path / "venv" / "bin" / "python")
    script = executable(tmp_path / "venv" / "bin" / "mcpmanager")
    assert mcpmanager_command(executable=str(python), frozen=False, script_dirs=[]) == [str(script)]
    script.chmod(0o644)  # not runnable: not a command
    fallback = [str(python), "-m", "mcpmanager"]
    assert mcpmanager_command(executable=str(python), frozen=False, script_dirs=[]) == fallback
    scheme = executable(tmp_path / "usr" / "local" / "bin" / "mcpmanager")  # Debian's scheme, pip --user
    assert mcpmanager_command(executable=str(python), frozen=False, script_dirs=[str(scheme.parent)]) == [str(scheme)]


def test_windows_console_script_in_scripts_next_to_python(tmp_path: Path) -> None:
    python = executable(tmp_path / "Python312" / "python.exe", mode=0o644)
    script = executable(tmp_path / "Python312" / "Scripts" / "mcpmanager.exe", mode=0o644)
    found = mcpmanager_command(executable=str(python), frozen=False, platform="win32", script_dirs=[])
    assert found == [str(script)]


def test_this_installation_gives_an_absolute_command() -> None:
    command = mcpmanager_command()
    assert os.path.isabs(command[0]) and os.access(command[0], os.X_OK)
    assert command == [os.path.join(os.path.dirname(os.path.abspath(sys.executable)), "mcpmanager")] or command[1:] == [
        "-m",
        "mcpmanager",
    ]
