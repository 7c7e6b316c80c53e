"""uvicorn's llhttp protocol with a time limit on a request's headers.

uvicorn closes a kept-alive connection that stays idle, but not one that began a request and never
finished its headers: a slow or stuck client (or many) held descriptors open for ever. Here a
request's headers must be complete `HEADER_TIMEOUT` seconds after the connection opened, or after
a kept-alive connection's next bytes (a bare CRLF too); else the connection is answered 408 and
closed. The body is not timed: a call's arguments may take long on a slow link, and the request is
then the app's, which reads it as it comes. While an earlier request of the connection is still
being answered, nothing is cut: the time starts again (its client waits on us, not we on it).

Ten seconds, as a request's headers are a few hundred bytes, and a connection that opens without
sending anything is one a browser's preconnect leaves (Node's server allows a minute; this is a
local endpoint and a team gateway, not a public site).
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

HEADER_TIMEOUT = 10.0  # seconds
_LATE = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


class HeaderTimeout(HttpToolsProtocol):
    """A connection whose request headers do not finish within `HEADER_TIMEOUT` is answered 408."""

    _due: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._start()

    def data_received(self, data: bytes) -> None:
        # A kept-alive connection's next bytes start the time (uvicorn stops its idle timer on any):
        # not at the parser's message begin, which a bare CRLF never reaches.
        if self._due is None and (self.cycle is None or self.cycle.response_complete):
            self._start()
        super().data_received(data)

    def on_headers_complete(self) -> None:
        self._stop()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop()
        super().connection_lost(exc)

    def _start(self) -> None:
        self._due = self.loop.call_later(HEADER_TIMEOUT, self._late)

    def _stop(self) -> None:
        if self._due is not None:
            self._due.cancel()
            self._due = None

    def _late(self) -> None:
        self._due = None
        if self.transport.is_closing():
            return
        if self.cycle is not None and not self.cycle.response_complete:
            self._start()  # an earlier request is still being answered: this one waits its turn
            return
        self.transport.write(_LATE)
        self.transport.close()
