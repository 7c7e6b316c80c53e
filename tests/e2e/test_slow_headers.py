"""A client whose request headers never finish is not held for ever (`serve/header_timeout.py`).

`serve --http` kept every connection that sent part of its headers and then nothing: a slow client
held 215 descriptors open. Now such a connection is answered 408 and closed `HEADER_TIMEOUT` after
its request began, on a fresh connection and on a kept-alive one alike, while calls keep answering.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from urllib.parse import urlsplit

from mcpmanager.core.serve.header_timeout import HEADER_TIMEOUT
from tests.helpers.clients import http_client, text_of
from tests.helpers.fixture_servers import FAST, fixture, write_config
from tests.helpers.serving import serving_http

SLOW = 20  # connections that stop halfway through their headers


async def half_a_request(
    port: int, before: bytes = b"", half: bytes = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl"
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection that sent half of a request's headers (after `before`, a whole request, answered)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    if before:
        writer.write(before)
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(int(line[15:]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))
        await reader.readexactly(length)
    writer.write(half)
    await writer.drain()
    return reader, writer


async def closed_within(reader: asyncio.StreamReader, seconds: float) -> bytes | None:
    """What the server sent before closing the connection, or None if it was still open `seconds` on."""
    try:
        return await asyncio.wait_for(reader.read(), seconds)
    except TimeoutError:
        return None


async def test_a_connection_whose_headers_never_finish_is_closed(tmp_path: Path) -> None:
    config = write_config(tmp_path / "cfg", {"a": fixture("--name", "a")}, supervisor=FAST)
    async with serving_http(config, tmp_path / "home") as served:
        port = urlsplit(served.url).port
        assert port is not None
        slow = [await half_a_request(port) for _ in range(SLOW)]
        # A kept-alive connection: a whole request answered, then half of the next one.
        ping = f"GET /nothing HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {served.token}\r\n\r\n".encode()
        kept = await half_a_request(port, ping)
        crlf = await half_a_request(port, ping, b"\r\n")  # (bytes the parser skips: no message begins)
        async with http_client(served.url, served.token) as client:  # calls answer meanwhile
            assert text_of(await client.call_tool("echo", {"text": "still here"})) == "still here"
        answers = await asyncio.gather(*(closed_within(r, HEADER_TIMEOUT + 10) for r, _ in [*slow, kept, crlf]))
        for _, writer in [*slow, kept, crlf]:
            writer.close()
        assert all(a is not None and a.startswith(b"HTTP/1.1 408 ") for a in answers[:SLOW]), answers[:3]
        kept_answer = answers[SLOW]  # (its first request's answer was read before)
        assert kept_answer is not None and kept_answer.startswith(b"HTTP/1.1 408 "), kept_answer
        assert answers[SLOW + 1] is not None, "a kept-alive connection that sent a bare CRLF stayed open"
        async with http_client(served.url, served.token) as client:
            assert text_of(await client.call_tool("echo", {"text": "after"})) == "after"
