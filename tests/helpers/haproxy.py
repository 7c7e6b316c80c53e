"""haproxy from Debian's packages as an ordinary round-robin load balancer on loopback: no session
affinity, health checks on `/healthz`, a request that cannot reach a replica sent to another."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

CONFIG = """\
global
    maxconn 256

defaults
    mode http
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    # A request whose replica is gone (refused, or its connection dropped before any answer) is
    # tried again, on another replica: what any load balancer in front of a gateway is set to do.
    retries 3
    option redispatch 1
    option http-buffer-request
    retry-on conn-failure empty-response

frontend gateway
    bind 127.0.0.1:{port}
    default_backend replicas

backend replicas
    balance roundrobin
    option httpchk GET /healthz
    http-check expect status 200
{servers}
"""


def unused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def haproxy_binary() -> str:
    """haproxy, which CI installs from Debian's packages (`scripts/setup.sh`)."""
    found = shutil.which("haproxy") or next((p for p in ("/usr/sbin/haproxy",) if Path(p).exists()), None)
    if found is None:
        pytest.fail("haproxy is not installed: scripts/setup.sh installs it (apt-get install haproxy)")
    return found


@contextmanager
def load_balancer(folder: Path, backends: Sequence[int]) -> Iterator[int]:
    """haproxy in front of `backends` (ports on 127.0.0.1); yields the port it listens on."""
    port = unused_port()
    servers = "\n".join(
        f"    server r{i} 127.0.0.1:{p} check inter 200ms fall 1 rise 1" for i, p in enumerate(backends)
    )
    config = folder / "haproxy.cfg"
    config.write_text(CONFIG.format(port=port, servers=servers))
    log = folder / "haproxy.log"
    with log.open("wb") as out:
        process = subprocess.Popen([haproxy_binary(), "-db", "-f", str(config)], stdout=out, stderr=out)
    try:
        _wait_accepting(port, process, log)
        yield port
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _wait_accepting(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"haproxy exited {process.returncode}:\n{log.read_text(errors='replace')}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"haproxy did not listen on {port}:\n{log.read_text(errors='replace')}")
