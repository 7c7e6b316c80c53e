"""The answer to a client's line that is no JSON-RPC message but names a request: an error with that
request's id, so the client's call ends at once with the reason instead of waiting for its timeout.

The SDK hands such a line to the session as an exception and answers nothing (it cannot know the
id). The id is taken only from a real parse of the line: the strict one's value when the line is
JSON but no message; when it is not strict JSON, Python's own parser's (which takes an escape that
is half of a UTF-16 pair, where the strict one refuses it). A line nobody can parse, or whose object
names no request id, gets no answer, as before: guessing an id from the text could end another of
the client's calls.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types

_ID_TYPES = (int, str)


def error_line(request_id: Any, message: str) -> bytes:
    """An invalid-request error for `request_id`, as one line (what `serve --stdio` answers a line it
    cannot take: this module's refusals, and a line over the size cap)."""
    error = {"code": types.INVALID_REQUEST, "message": message}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode() + b"\n"


def refusal(line: bytes, error: ValueError, parsed: Any = None) -> bytes | None:
    """The error answer (one line) to `line`, which failed with `error`: `parsed` is its value when
    the line was JSON but not a JSON-RPC message; None when no request id can be named."""
    if parsed is None:
        try:
            parsed = json.loads(line)
        except (ValueError, RecursionError):
            return None
        why = f"the message is not strict JSON ({error}); it was not passed on"
    else:
        why = f"the message is not a valid JSON-RPC 2.0 request ({_first(error)})"
    if type(parsed) is not dict or "method" not in parsed:
        return None  # (a response or anything else: no request of the client's waits on it)
    request_id = parsed.get("id")
    if type(request_id) not in _ID_TYPES:
        return None  # a notification, or an id nobody can be waiting on (`true` is no int here)
    if type(request_id) is str:
        request_id = request_id.encode("utf-8", "backslashreplace").decode("utf-8")  # (no lone surrogate)
    return error_line(request_id, f"Invalid request: {why}")


def _first(error: ValueError) -> str:
    """A validation error's first complaint, in one line (pydantic lists every union member's)."""
    errors = getattr(error, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
            where = ".".join(str(part) for part in first.get("loc", ()))
            return f"{where}: {first.get('msg')}" if where else str(first.get("msg"))
        except (IndexError, TypeError, ValueError):
            pass
    return str(error).splitlines()[0]
