"""The least a relay from Streamable HTTP to a stdio server can do, as a floor for `serve-http`.

Each POST's body goes to the echo server's stdin as it came; the line the server answers it with
comes back as `application/json` (a notification gets 202, anything but a POST 405). No checks, no
catalogue, no bookkeeping, no id rewriting: what `mcpmanager serve --http` adds above this path is
the engine's own work, and what this path adds above `direct-http` is the hop itself.

    python tests/bench/floor_relay.py PORT ECHO_SERVER   ("ready http://127.0.0.1:PORT/mcp" on stderr)
"""

from __future__ import annotations

import asyncio
import json
import sys


async def main(port: int, echo: str) -> None:
    child = await asyncio.create_subprocess_exec(
        sys.executable, echo, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=2**24
    )
    assert child.stdin is not None and child.stdout is not None
    stdin, stdout = child.stdin, child.stdout
    waiting: dict[str, asyncio.Future[bytes]] = {}

    async def answers() -> None:
        while line := await stdout.readline():
            future = waiting.pop(json.dumps(json.loads(line).get("id")), None)
            if future is not None and not future.done():
                future.set_result(line)

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
                fields = {
                    k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:] if line)
                }
                body = await reader.readexactly(int(fields.get("content-length", "0")))
                writer.write(await answer(head[0].split(" ")[0], body))
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    async def answer(method: str, body: bytes) -> bytes:
        if method != "POST":
            return b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n"
        message = json.loads(body)
        if "id" not in message or "method" not in message:  # a notification (or a reply: none here)
            stdin.write(body + b"\n")
            return b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n"
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        waiting[json.dumps(message["id"])] = future
        stdin.write(body + b"\n")
        line = await future
        head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(line)
        return head + line

    try:
        async with asyncio.TaskGroup() as tasks:
            tasks.create_task(answers())
            server = await asyncio.start_server(serve, "127.0.0.1", port)
            print(f"ready http://127.0.0.1:{port}/mcp", file=sys.stderr, flush=True)
            await server.serve_forever()
    finally:
        child.kill()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), sys.argv[2]))
