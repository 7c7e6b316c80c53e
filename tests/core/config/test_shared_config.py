"""The config shared by several writers (`core/config/shared.py`, `save_config(read=…)`, `Control`):
our writers take the lock beside the config in turn, a save made over a file another program saved
since the read is refused, and `Control` then reads again and makes its change again, a bounded
number of times."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpmanager.core.config.load import load_config
from mcpmanager.core.config.save import ConfigChanged, backup_of, save_config
from mcpmanager.core.config.servers import StdioServerConfig
from mcpmanager.core.config.shared import ConfigBusy, ConfigLock, Snapshot, lock_file_of, read_snapshot
from mcpmanager.core.config.to_keyring import move_to_keyring
from mcpmanager.core.engine import control as control_module
from mcpmanager.core.engine.control import ATTEMPTS, Control, ControlError
from mcpmanager.core.vault.store import Vault

HOLD = """
import sys
from pathlib import Path
from mcpmanager.core.config.shared import ConfigLock
with ConfigLock(Path(sys.argv[1])):
    print("held", flush=True)
    sys.stdin.read()
"""


def _config(folder: Path, servers: dict[str, Any]) -> Path:
    path = folder / "config.json"
    path.write_text(json.dumps({"mcpServers": servers}, indent=1), encoding="utf-8")
    return path


def _servers(path: Path) -> list[str]:
    return sorted(json.loads(path.read_text(encoding="utf-8"))["mcpServers"])


def _holder(path: Path) -> subprocess.Popen[str]:
    """Another program of ours holding the config's lock until its stdin closes."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    return holder


# The lock -----------------------------------------------------------------------------------------


def test_the_lock_sits_beside_the_real_file(tmp_path: Path) -> None:
    (tmp_path / "dotfiles").mkdir()
    real = _config(tmp_path / "dotfiles", {})
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "config.json").symlink_to(real)
    assert lock_file_of(tmp_path / "home" / "config.json") == tmp_path / "dotfiles" / ".config.json.lock"


async def test_another_process_holding_the_lock_makes_our_edit_wait_then_refuse(tmp_path: Path) -> None:
    path = _config(tmp_path, {"a": {"command": "a"}})
    before = path.read_bytes()
    holder = _holder(path)
    try:
        with pytest.raises(ConfigBusy, match=r"\.config\.json\.lock for over 0\.2 s"), ConfigLock(path, timeout=0.2):
            pass
        with pytest.raises(ControlError, match="nothing was saved"):
            await Control(path, lock_timeout=0.2).put_server(StdioServerConfig("b", "b"))
        assert path.read_bytes() == before
    finally:
        holder.communicate("")
    await Control(path, lock_timeout=0.2).put_server(StdioServerConfig("b", "b"))  # released with its holder
    assert _servers(path) == ["a", "b"]


def test_a_holder_killed_leaves_no_stale_lock(tmp_path: Path) -> None:
    path = _config(tmp_path, {})
    holder = _holder(path)
    os.kill(holder.pid, signal.SIGKILL)
    holder.communicate()
    with ConfigLock(path, timeout=0.5):
        pass


async def test_a_refused_change_releases_the_lock(tmp_path: Path) -> None:
    path = _config(tmp_path, {"a": {"command": "a"}})
    control = Control(path, lock_timeout=0.2)
    with pytest.raises(ControlError, match="exists already"):
        await control.put_server(StdioServerConfig("a", "other"))
    with ConfigLock(path, timeout=0.2):
        pass


# The check before the save ------------------------------------------------------------------------


def test_a_save_over_a_file_changed_since_the_read_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    path = _config(tmp_path, {"a": {"command": "a"}})
    read = read_snapshot(path)
    assert read.config is not None
    path.write_text(json.dumps({"mcpServers": {"theirs": {"command": "t"}}}), encoding="utf-8")  # another editor
    with pytest.raises(ConfigChanged):
        save_config(read.config.with_server(StdioServerConfig("b", "b")), path, read=read.data)
    assert _servers(path) == ["theirs"] and not backup_of(path).exists()
    with pytest.raises(ConfigChanged):  # "no file" read, a file there now
        save_config(read.config, path, read=None)


def test_a_save_landing_just_before_our_rename_is_caught_at_the_last_moment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpmanager.core.config import save
    from mcpmanager.core.system import atomic_write

    path = _config(tmp_path, {"a": {"command": "a"}})
    read = read_snapshot(path)
    assert read.config is not None
    original = atomic_write.write_atomic

    def editor_saves_meanwhile(target: Path, data: bytes, mode: int, **options: Any) -> None:
        if target == path:  # after the backup, before our file is renamed over theirs
            path.write_text(json.dumps({"mcpServers": {"theirs": {"command": "t"}}}), encoding="utf-8")
        original(target, data, mode, **options)

    monkeypatch.setattr(save, "write_atomic", editor_saves_meanwhile)
    with pytest.raises(ConfigChanged):
        save_config(read.config.with_server(StdioServerConfig("b", "b")), path, read=read.data)
    assert _servers(path) == ["theirs"]
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []  # no temporary file left


def test_an_unchecked_save_writes_as_before(tmp_path: Path) -> None:
    path = _config(tmp_path, {"a": {"command": "a"}})
    save_config(load_config(path).with_server(StdioServerConfig("b", "b")), path)
    assert _servers(path) == ["a", "b"]


# Control: read again, change again ----------------------------------------------------------------


def _editor_after_reads(monkeypatch: pytest.MonkeyPatch, path: Path, times: int) -> list[int]:
    """Another editor saving the file right after each of Control's first `times` reads."""
    reads: list[int] = []

    def read_then_edited(target: Path) -> Snapshot:
        snapshot = read_snapshot(target)
        reads.append(len(reads))
        if len(reads) <= times:
            document = json.loads(path.read_text(encoding="utf-8"))
            document["mcpServers"][f"theirs-{len(reads)}"] = {"command": "t"}
            path.write_text(json.dumps(document), encoding="utf-8")
        return snapshot

    monkeypatch.setattr(control_module, "read_snapshot", read_then_edited)
    return reads


async def test_an_edit_saved_by_another_editor_after_our_read_is_kept_and_ours_made_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _config(tmp_path, {"a": {"command": "a"}})
    reads = _editor_after_reads(monkeypatch, path, times=2)
    await Control(path).put_server(StdioServerConfig("mine", "m"))
    assert len(reads) == 3
    assert _servers(path) == ["a", "mine", "theirs-1", "theirs-2"]
    assert sorted(json.loads(backup_of(path).read_text())["mcpServers"]) == ["a", "theirs-1", "theirs-2"]


async def test_a_file_that_keeps_changing_is_left_to_its_other_writer_after_the_last_attempt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _config(tmp_path, {"a": {"command": "a"}})
    reads = _editor_after_reads(monkeypatch, path, times=ATTEMPTS)
    with pytest.raises(ControlError, match=f"kept changing while it was saved \\({ATTEMPTS} times\\)"):
        await Control(path).set_enabled("a", False)
    assert len(reads) == ATTEMPTS
    assert _servers(path) == ["a", *(f"theirs-{n}" for n in range(1, ATTEMPTS + 1))]
    assert "disabled" not in path.read_text(encoding="utf-8")


async def test_an_import_made_again_counts_what_the_last_read_had(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _config(tmp_path, {})
    _editor_after_reads(monkeypatch, path, times=1)  # another program adds `theirs-1` meanwhile
    same = StdioServerConfig("theirs-1", "t")
    added, skipped = await Control(path).import_servers([(same, tmp_path / "client.json")])
    assert added == [] and [s.reason for s in skipped] == [
        "already in mcpmanager as 'theirs-1'"
    ]  # identical to theirs, now there


async def test_secrets_moved_into_the_file_as_it_is_now_and_a_value_changed_meanwhile_stays(tmp_path: Path) -> None:
    path = _config(tmp_path, {"acme": {"command": "a", "env": {"A_TOKEN": "one-1234", "B_TOKEN": "two-5678"}}})
    server = load_config(path).servers["acme"]
    _, moves = move_to_keyring(server, Vault())
    # Another program changes B_TOKEN and adds a server after the values were read and stored.
    document = json.loads(path.read_text(encoding="utf-8"))
    document["mcpServers"]["acme"]["env"]["B_TOKEN"] = "three-9012"
    document["mcpServers"]["other"] = {"command": "o"}
    path.write_text(json.dumps(document), encoding="utf-8")
    made = await Control(path).move_secrets("acme", moves)
    assert [m.key for m in made] == ["A_TOKEN"]
    acme = load_config(path).servers["acme"]
    assert isinstance(acme, StdioServerConfig)
    assert acme.env == {"A_TOKEN": "${keyring:acme/A_TOKEN}", "B_TOKEN": "three-9012"}
    assert _servers(path) == ["acme", "other"]
    assert "one-1234" not in backup_of(path).read_text(encoding="utf-8")  # the backup scrubbed too


async def test_the_window_s_edit_from_a_copy_opened_before_a_secrets_move_keeps_the_reference(tmp_path: Path) -> None:
    path = _config(tmp_path, {"acme": {"command": "a", "args": ["--old"], "env": {"A_TOKEN": "one-1234"}}})
    opened = load_config(path).servers["acme"]  # the editor's form is filled from this
    assert isinstance(opened, StdioServerConfig)
    _, moves = move_to_keyring(opened, Vault())
    await Control(path).move_secrets("acme", moves)  # `secrets move`, meanwhile
    await Control(path).put_server(StdioServerConfig("acme", "a", ["--new"], env=opened.env), "acme", base=opened)
    acme = load_config(path).servers["acme"]
    assert isinstance(acme, StdioServerConfig)
    assert acme.args == ["--new"] and acme.env == {"A_TOKEN": "${keyring:acme/A_TOKEN}"}
    assert "one-1234" not in path.read_text(encoding="utf-8")
