"""The hello that opens a connection to the engine's local socket (`local_socket`), both sides of it:
`connect` writes it, the engine checks it. One JSON line, before any JSON-RPC:
`{"mcpmanager": "connect/1", "token": …, "mode": …}`, answered `{"ok": true}` or `{"error": why}`."""

from __future__ import annotations

import json
from typing import Any

from mcpmanager.core.config.modes import MODES, Mode
from mcpmanager.core.serve.bearer_token import matches

HELLO = "connect/1"  # a later relay that speaks otherwise says so here


def hello_line(token: str, mode: str | None) -> bytes:
    return json.dumps({"mcpmanager": HELLO, "token": token, "mode": mode}).encode() + b"\n"


def answer_line(refusal: str | None) -> bytes:
    return json.dumps({"error": refusal} if refusal else {"ok": True}).encode() + b"\n"


def check_hello(line: bytes, token: str) -> tuple[Mode | None, str | None]:
    """(the mode asked for, None: the engine's; None) or (None, why the peer is refused)."""
    try:
        hello: Any = json.loads(line)
    except (ValueError, RecursionError):  # (deeply nested: RecursionError, not ValueError)
        return None, "a hello that is not JSON"
    if not isinstance(hello, dict) or hello.get("mcpmanager") != HELLO:
        return None, f"not a {HELLO} hello"
    if not _is_token(hello.get("token"), token):
        return None, "wrong token"
    mode = hello.get("mode")
    if mode is not None and mode not in MODES:
        return None, f"unknown mode {mode!r} (one of {', '.join(MODES)})"
    return mode, None


def _is_token(presented: Any, token: str) -> bool:
    try:
        return isinstance(presented, str) and matches(presented, token)
    except UnicodeEncodeError:  # a lone surrogate (an escaped one in the JSON): not ours, and no reason to fail
        return False


def refusal_of(line: bytes) -> str | None:
    """What the engine's answer says: None when it serves, else why not."""
    try:
        answer: Any = json.loads(line)
    except (ValueError, RecursionError):
        answer = None
    if isinstance(answer, dict) and answer.get("ok") is True:
        return None
    error = answer.get("error") if isinstance(answer, dict) else None
    if isinstance(error, str):
        return error
    return f"no answer to the hello ({line[:100]!r})"
