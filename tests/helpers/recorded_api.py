"""A stand-in for a model API on loopback, for real clients pointed at it (Claude Code's
`ANTHROPIC_BASE_URL`): it records the body of every request and refuses each with a 400, so the
client stops at its first model call. What a client sends the model (its tools: which are loaded,
which are behind its tool search) can then be read without any network."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REFUSAL = {"type": "error", "error": {"type": "invalid_request_error", "message": "recorded by a loopback stand-in"}}


@dataclass
class Recorded:
    url: str
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (path, body)


@contextmanager
def recorded_api() -> Iterator[Recorded]:
    recorded = Recorded("")
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            with lock:
                recorded.requests.append((self.path, json.loads(body or b"{}")))
            self._answer(400, json.dumps(REFUSAL).encode())

        def do_GET(self) -> None:
            self._answer(404, b"")

        def _answer(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    recorded.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield recorded
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
