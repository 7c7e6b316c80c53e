"""The loopback redirect of a sign-in: a one-shot HTTP listener on 127.0.0.1 that the browser is
sent back to with the authorization code (RFC 8252 §7.3). It takes only `GET /callback`; what it
received goes to the SDK's flow, which checks the state against the one it sent."""

from __future__ import annotations

import asyncio
import contextlib
from html import escape
from types import TracebackType
from urllib.parse import parse_qs, urlsplit

from mcp.shared.auth import AuthorizationCodeResult

from mcpmanager.core.auth.provider import CALLBACK

_PAGE = "<!doctype html><meta charset=utf-8><title>mcpmanager</title><body style='font-family:sans-serif'><p>{}</p>"


class SignInFailed(Exception):
    """The sign-in did not complete; the message says why (never a token)."""


class Loopback:
    def __init__(self, port: int = 0) -> None:
        self._port = port
        self._server: asyncio.Server | None = None
        self._result: asyncio.Future[AuthorizationCodeResult] | None = None

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{CALLBACK}"

    @property
    def port(self) -> int:
        assert self._server is not None, "not listening"
        return int(self._server.sockets[0].getsockname()[1])

    async def __aenter__(self) -> Loopback:
        """Listen; raises OSError when the port is taken."""
        self._result = asyncio.get_running_loop().create_future()
        self._server = await asyncio.start_server(self._answer, "127.0.0.1", self._port)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()

    async def result(self) -> AuthorizationCodeResult:
        """What the authorization server sent back (the SDK's callback handler)."""
        assert self._result is not None, "not listening"
        return await self._result

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = (await asyncio.wait_for(reader.readline(), 10)).decode("latin-1").split()
            while (await asyncio.wait_for(reader.readline(), 10)).strip():
                pass  # the headers: nothing in them matters here
            status, text = self._take(request)
        except (TimeoutError, OSError, ValueError):
            return writer.close()
        body = _PAGE.format(escape(text)).encode()
        head = f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {len(body)}\r\n"
        writer.write(head.encode() + b"Connection: close\r\n\r\n" + body)
        with contextlib.suppress(OSError):
            await writer.drain()
        writer.close()

    def _take(self, request: list[str]) -> tuple[str, str]:
        target = urlsplit(request[1]) if len(request) >= 2 and request[0] == "GET" else None
        if target is None or target.path != CALLBACK:
            return "404 Not Found", "Not a sign-in redirect."
        query = {key: values[0] for key, values in parse_qs(target.query).items()}
        assert self._result is not None
        if self._result.done():
            return "409 Conflict", "This sign-in is already done; you can close this tab."
        if "code" not in query:
            why = query.get("error_description") or query.get("error") or "no authorization code came back"
            self._result.set_exception(SignInFailed(f"the authorization server said: {why}"))
            return "400 Bad Request", f"Sign-in failed: {why}"
        code = AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))
        self._result.set_result(code)
        return "200 OK", "Signed in to mcpmanager. You can close this tab."
