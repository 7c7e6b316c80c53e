"""A tee of a stdio MCP connection, for recording what a real client and a server said:
`python stdio_tee.py RECORD COMMAND [ARGS…]` runs COMMAND, passes the client's stdin to it and its
stdout back, unchanged, and appends every line to RECORD as `> line` (client to server) or `< line`
(server to client). Standard library only; it ends when COMMAND does."""

from __future__ import annotations

import subprocess
import sys
import threading
from typing import IO


def _pump(source: IO[bytes], sink: IO[bytes], record: IO[bytes], mark: bytes, lock: threading.Lock) -> None:
    for line in iter(source.readline, b""):
        with lock:
            record.write(mark + line if line.endswith(b"\n") else mark + line + b"\n")
            record.flush()
        try:
            sink.write(line)
            sink.flush()
        except (BrokenPipeError, ValueError):
            break
    try:
        sink.close()
    except (BrokenPipeError, ValueError):
        pass


def main(argv: list[str]) -> int:
    record_path, command = argv[0], argv[1:]
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    lock = threading.Lock()
    assert child.stdin is not None and child.stdout is not None
    with open(record_path, "ab") as record:
        upstream = threading.Thread(
            target=_pump, args=(sys.stdin.buffer, child.stdin, record, b"> ", lock), daemon=True
        )
        upstream.start()
        try:
            _pump(child.stdout, sys.stdout.buffer, record, b"< ", lock)
        except KeyboardInterrupt:  # the client's SIGINT when it closes the connection
            child.terminate()
        return child.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
