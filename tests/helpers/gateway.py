"""A team gateway for tests: a self-signed certificate, `serve --http` replicas as subprocesses with
named tokens, this machine's own network address, and the SDK client over TLS."""

from __future__ import annotations

import datetime
import ipaddress
import os
import re
import socket
import ssl
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx2
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.helpers.engines import wait_for
from tests.helpers.vaults import current_keyring_env

SERVING = re.compile(r"serving (\d+) servers on (https?://\S+/mcp)")


def own_address() -> str:
    """An IPv4 address of this machine that is not loopback (a UDP "connect" sends nothing), or
    127.0.0.1 on a machine that has none."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: only the route is looked up
            address: str = probe.getsockname()[0]
        except OSError:
            return "127.0.0.1"
    return address if not ipaddress.ip_address(address).is_loopback else "127.0.0.1"


def make_certificate(folder: Path, addresses: Sequence[str]) -> tuple[Path, Path]:
    """A self-signed certificate (and key) valid for `addresses` (IPs or names), as PEM files."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "mcpmanager test gateway")])
    now = datetime.datetime.now(datetime.UTC)
    alternatives: list[x509.GeneralName] = []
    for address in addresses:
        try:
            alternatives.append(x509.IPAddress(ipaddress.ip_address(address)))
        except ValueError:
            alternatives.append(x509.DNSName(address))
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(alternatives), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    folder.mkdir(parents=True, exist_ok=True)
    cert, key_file = folder / "tls.crt", folder / "tls.key"
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    key_file.chmod(0o600)
    return cert, key_file


def cli(*args: str, home: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`mcpmanager ARGS` as a user types it."""
    env = {"PATH": os.environ.get("PATH", ""), **current_keyring_env()}
    if home is not None:
        env["MCPMANAGER_HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "mcpmanager", *args], env=env, capture_output=True, text=True, timeout=60
    )


def add_token(tokens: Path, name: str) -> str:
    made = cli("tokens", "add", name, "--file", str(tokens))
    assert made.returncode == 0, made.stderr
    return made.stdout.strip()


@dataclass
class Replica:
    process: subprocess.Popen[bytes]
    home: Path
    errlog: Path
    url: str = ""

    def log(self) -> str:
        return self.errlog.read_text(errors="replace")


def spawn_replica(config: Path, home: Path, flags: Sequence[str]) -> Replica:
    """`mcpmanager serve --http --mode direct FLAGS` with a home of its own (as a container has)."""
    home.mkdir(parents=True, exist_ok=True)
    errlog = home / "serve.log"
    env = {"MCPMANAGER_HOME": str(home), "PYTHONUNBUFFERED": "1", "PATH": os.environ.get("PATH", "")}
    env |= current_keyring_env()
    command = [sys.executable, "-m", "mcpmanager", "serve", "--http", "--mode", "direct", "--config", str(config)]
    with errlog.open("ab") as err:
        process = subprocess.Popen([*command, *flags], env=env, stdin=subprocess.DEVNULL, stdout=err, stderr=err)
    return Replica(process, home, errlog)


async def listening(replica: Replica) -> Replica:
    """The replica once it listens (its URL read from its stderr)."""
    await wait_for(lambda: SERVING.search(replica.log()) or replica.process.poll() is not None, timeout=30)
    found = SERVING.search(replica.log())
    assert found, f"serve --http exited {replica.process.returncode}:\n{replica.log()}"
    replica.url = found.group(2)
    return replica


async def stop(replica: Replica) -> None:
    if replica.process.poll() is None:
        replica.process.terminate()
        try:
            await wait_for(lambda: replica.process.poll() is not None, timeout=20)
        finally:
            if replica.process.poll() is None:
                replica.process.kill()
    replica.process.wait(timeout=10)


def trusting(cert: Path | None) -> ssl.SSLContext | bool:
    return ssl.create_default_context(cafile=str(cert)) if cert is not None else True


@asynccontextmanager
async def gateway_client(url: str, token: str, era: str, cert: Path | None = None) -> AsyncIterator[Client]:
    """The SDK's client over Streamable HTTP (TLS checked against `cert`), with a named token."""
    timeout = httpx2.Timeout(30, read=300)
    headers = {"Authorization": f"Bearer {token}"}
    http = httpx2.AsyncClient(headers=headers, timeout=timeout, verify=trusting(cert))
    async with http, Client(streamable_http_client(url, http_client=http), mode=era, cache=None) as client:
        yield client


HANDSHAKE = "2025-11-25"


def status_of(
    url: str,
    token: str | None,
    cert: Path | None = None,
    host: str | None = None,
    origin: str | None = None,
    session: str | None = None,
) -> int:
    """The HTTP status a tools/list POST gets (in `session`, a handshake-era session id, if given)."""
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    for name, value in (("Authorization", token and f"Bearer {token}"), ("Host", host), ("Origin", origin)):
        if value is not None:
            headers[name] = value
    if session is not None:
        headers |= {"Mcp-Session-Id": session, "MCP-Protocol-Version": HANDSHAKE}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    with httpx2.Client(verify=trusting(cert), timeout=30) as http:
        return http.post(url, json=body, headers=headers).status_code


def open_session(url: str, token: str, cert: Path | None) -> str:
    """A handshake-era session opened with `token` (initialize, then initialized); its id."""
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {token}",
    }
    params = {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}
    with httpx2.Client(verify=trusting(cert), timeout=30) as http:
        opened = http.post(
            url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}, headers=headers
        )
        assert opened.status_code == 200, opened.text
        session = opened.headers["mcp-session-id"]
        headers |= {"Mcp-Session-Id": session, "MCP-Protocol-Version": HANDSHAKE}
        done = http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
        assert done.status_code == 202, done.text
    return str(session)
