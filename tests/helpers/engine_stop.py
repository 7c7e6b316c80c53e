"""What a test can see of an engine process that stops, so that it acts once a step of the stop
has happened rather than a guessed time after the signal (a loaded machine may take longer to act
on it): its endpoint refusing new requests (503, from `Stopping.begin`), then its endpoint and local
socket closed while it still stops its servers, advertised (docs/supervision.md#stopping)."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2

# A request that starts nothing: refused 503 once the engine has begun to stop, before that answered
# (400 here, no session named: the engine's sessions are not touched).
PROBE = {"jsonrpc": "2.0", "id": "stop-probe", "method": "tools/list", "params": {}}


async def refuses_new_requests(advertisement: dict[str, Any]) -> bool:
    """Whether the advertised engine answers a new request 503 "not taken", as it does from the
    moment it begins to stop. Its endpoint closed already: the moment was missed (AssertionError)."""
    token = Path(advertisement["token_file"]).read_text(encoding="ascii").strip()
    headers = {"authorization": f"Bearer {token}", "accept": "application/json, text/event-stream"}
    try:
        async with httpx2.AsyncClient(timeout=10) as http:
            response = await http.post(advertisement["urls"]["direct"], json=PROBE, headers=headers)
    except httpx2.TransportError as exc:
        raise AssertionError(f"the engine closed its endpoint before it was seen refusing requests: {exc!r}") from exc
    return response.status_code == 503


async def endpoint_closed(advertisement: dict[str, Any]) -> bool:
    """Whether the advertised engine's HTTP endpoint refuses connections and its local socket is
    gone: both close before the engine stops its servers and withdraws its advertisement."""
    url = urlsplit(advertisement["endpoint"])
    assert url.hostname is not None and url.port is not None, advertisement
    try:
        stream = await anyio.connect_tcp(url.hostname, url.port)
    except OSError:
        pass
    else:
        await stream.aclose()
        return False
    socket = advertisement.get("socket")
    return socket is None or not Path(socket).exists()
