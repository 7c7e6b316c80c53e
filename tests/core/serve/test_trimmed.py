"""Header values trimmed as RFC 9110 §5.5 reads them (`serve/trimmed.py`)."""

from __future__ import annotations

from typing import Any

from mcpmanager.core.serve.trimmed import TrimmedHeaders, trimmed_headers


def test_whitespace_around_values_is_taken_off_and_inside_them_kept() -> None:
    headers = [(b"mcp-name", b"  echo  "), (b"mcp-method", b"\ttools/call"), (b"x-other", b"a  b")]
    assert trimmed_headers(headers) == [(b"mcp-name", b"echo"), (b"mcp-method", b"tools/call"), (b"x-other", b"a  b")]


def test_headers_that_need_nothing_are_left_as_they_are() -> None:
    assert trimmed_headers([(b"mcp-name", b"echo"), (b"accept", b"a, b"), (b"empty", b"")]) is None


async def test_the_app_sees_trimmed_values() -> None:
    seen: list[Any] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope["headers"])

    async def nothing() -> Any:
        return {}

    async def ignore(message: Any) -> None:
        return None

    wrapped = TrimmedHeaders(app)
    await wrapped({"type": "http", "headers": [(b"mcp-name", b" echo ")]}, nothing, ignore)
    plain = [(b"mcp-name", b"echo")]
    await wrapped({"type": "http", "headers": plain}, nothing, ignore)
    assert seen == [[(b"mcp-name", b"echo")], plain]
    assert seen[1] is plain  # untouched: no copy
