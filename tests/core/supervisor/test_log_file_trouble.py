"""A log file that cannot be written (a full disk: /dev/full answers every write with ENOSPC) never
stops the stderr stream: the ring keeps the lines, `trouble` says why, and once the file can be
written again the lines the ring kept come first."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpmanager.core.supervisor import stderr_log
from mcpmanager.core.supervisor.stderr_log import StderrLog


def test_a_full_disk_keeps_the_ring_and_the_file_catches_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stderr_log, "RETRY_WRITE", 0.0)
    path = tmp_path / "server.log"
    path.symlink_to("/dev/full")
    log = StderrLog(path, ring_lines=3)
    heard: list[str | None] = []
    log.troubled.connect(heard.append)

    log.feed(b"one\ntwo\nthree\nfour\n")  # the file fails: nothing raised, the ring has them
    assert log.tail(3) == ["two", "three", "four"]
    assert log.trouble == "cannot write server.log: No space left on device" and heard == [log.trouble]
    log.feed(b"five\n")

    path.unlink()  # room again
    log.feed(b"six\n")
    written = [line.split(" ", 1)[1] for line in path.read_text().splitlines()]
    assert written == ["[mcpmanager] 3 lines were lost here (cannot write server.log: No space left on device)",
                       "four", "five", "six"]  # fmt: skip
    assert log.trouble is None and heard[-1] is None
    log.close()
