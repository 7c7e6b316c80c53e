"""`mcpmanager status` writes a server's state the way the window does (`state_line.py`), from
what the engine advertises; the whole command runs end to end in tests/e2e/test_cli.py."""

from __future__ import annotations

from typing import Any

from mcpmanager.commands.status import format_engine
from mcpmanager.core.supervisor.state_line import state_detail

CRASH = "exited 3 — fatal: no API key"


def advertised(**servers: dict[str, Any]) -> dict[str, Any]:
    return {"pid": 7, "mode": "discovery", "endpoint": "stdio", "config": "c.json", "tools": 2, "servers": servers}


def test_a_server_s_row_is_its_state_then_the_state_line_s_words() -> None:
    text = format_engine(
        advertised(
            good={"state": "ready", "reason": "", "retry_in": None, "restarts": 0, "tools": 2, "prompts": 1},
            again={"state": "starting", "reason": "restarting", "restarts": 1, "last_exit": CRASH, "tools": None},
            down={"state": "backoff", "reason": CRASH, "retry_in": 4.0, "restarts": 0, "logs": "cannot write d.log"},
        )
    )
    assert text.splitlines() == [
        "engine pid 7 (discovery mode) at stdio",
        "  config c.json; 2 tools",
        "  good   ready     2 tools, 1 prompts",
        f"  again  starting  restarting; last exit: {CRASH}",
        f"  down   backoff   {CRASH} (retry in 4 s); logs: cannot write d.log",
    ]
    assert text.splitlines()[3].endswith(state_detail("starting", "restarting", restarts=1, last_exit=CRASH))


def test_an_engine_of_another_version_without_the_newer_fields() -> None:
    text = format_engine(advertised(old={"state": "backoff", "reason": CRASH, "retry_in": 2}))
    assert text.splitlines()[-1] == f"  old  backoff   {CRASH} (retry in 2 s)"
