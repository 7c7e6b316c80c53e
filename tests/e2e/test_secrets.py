"""A session with secrets in env, headers and arguments leaves none behind (issue 15, item 7): every
file under MCPMANAGER_HOME and the output of `status --json` are scanned, byte for byte, for each
secret value, while harmless values (a locale, a folder, a port) stay readable in the server's log.

The servers print their own secrets to stderr, as real servers do when they start or fail. The
config file lives outside MCPMANAGER_HOME: it is the user's own record of the secrets."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.helpers.clients import http_client, text_of
from tests.helpers.engines import wait_for
from tests.helpers.fixture_servers import FAST, FIXTURE_SERVER, write_config
from tests.helpers.serving import serving_http

STRIPE_KEY = "sk_live_51FAKEfake0000000000000000000000secret"  # --api-key (a known shape)
ARG_TOKEN = "opaque-arg-token-7f3a9c"  # --token=… (no known shape: only its flag says so)
URL_PASSWORD = "pg-password-in-url-42"  # postgres://admin:…@ in an argument
GITHUB_TOKEN = "ghp_FAKE0000000000000000000000000000envvar"  # env GITHUB_TOKEN
ENV_PASSWORD = "correct-horse-battery-staple"  # env ACME_PASSWORD (no shape)
SECRET_KEY = "django-insecure-0a1b2c3d4e5f"  # KEY=value argument
HEADER_TOKEN = "header-bearer-token-9d8e7f"  # Authorization: Bearer …
HEADER_KEY = "x-api-key-value-123456"  # X-API-Key
QUERY_TOKEN = "query-token-value-5555"  # ?api_key= in a remote URL
REMOTE_PASSWORD = "remote-url-password-77"  # user:password@ in a remote URL
SECRETS = [
    STRIPE_KEY,
    ARG_TOKEN,
    URL_PASSWORD,
    GITHUB_TOKEN,
    ENV_PASSWORD,
    SECRET_KEY,
    HEADER_TOKEN,
    HEADER_KEY,
    QUERY_TOKEN,
    REMOTE_PASSWORD,
]

# A server that tells everything it was given (its own arguments, its environment) on stderr, then
# runs the fixture server with what follows `--`, or fails the way a server with a bad key does.
TELLER = """\
import os, sys
own, rest = sys.argv[1 : sys.argv.index("--")], sys.argv[sys.argv.index("--") + 1 :]
say = lambda line: print(line, file=sys.stderr, flush=True)
say("my arguments: " + " ".join(own))
for arg in own:
    say(f"argument {arg}")
for name in ("GITHUB_TOKEN", "ACME_PASSWORD", "LANG", "DATA_DIR"):
    if name in os.environ:
        say(f"{name}={os.environ[name]}")
        say(f"value of {name.lower()}: {os.environ[name]}")
if not rest:
    say(f"fatal: the key {own[1]} was refused")
    sys.exit(3)
os.execv(sys.executable, [sys.executable, *rest])
"""


def unused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def servers(teller: Path) -> dict[str, Any]:
    arguments = [
        "--api-key",
        STRIPE_KEY,
        f"--token={ARG_TOKEN}",
        "--database",
        f"postgres://admin:{URL_PASSWORD}@localhost/acme",
        f"SECRET_KEY={SECRET_KEY}",
        "--port",
        "8080",
    ]
    env = {"GITHUB_TOKEN": GITHUB_TOKEN, "ACME_PASSWORD": ENV_PASSWORD, "LANG": "C.UTF-8", "DATA_DIR": "/srv/acme/data"}
    port = unused_port()  # nobody listens: the remote fails, saying so in its log and its state
    return {
        "stripe": {
            "command": sys.executable,
            "args": [str(teller), *arguments, "--", str(FIXTURE_SERVER), "--name", "stripe", "--log-calls"],
            "env": env,
        },
        "refused": {"command": sys.executable, "args": [str(teller), "--api-key", STRIPE_KEY, "--"], "env": env},
        "remote": {
            "type": "http",
            "url": f"http://admin:{REMOTE_PASSWORD}@127.0.0.1:{port}/mcp?api_key={QUERY_TOKEN}&lang=en",
            "headers": {"Authorization": f"Bearer {HEADER_TOKEN}", "X-API-Key": HEADER_KEY, "Accept-Language": "en-GB"},
        },
    }


def status(home: Path, *flags: str) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "mcpmanager", "status", *flags],
        env={"MCPMANAGER_HOME": str(home), "PATH": os.environ.get("PATH", "")},
        capture_output=True,
        timeout=30,
    )
    assert out.returncode == 0, out.stderr.decode(errors="replace")
    return out.stdout.decode("utf-8")


def found_in(data: bytes) -> list[str]:
    return [secret for secret in SECRETS if secret.encode() in data]


def leaks(home: Path) -> dict[str, list[str]]:
    """Every file under `home`, read as bytes, and the secrets found in it."""
    found: dict[str, list[str]] = {}
    for path in home.rglob("*"):
        if path.is_socket():  # the engine's local socket: nothing is stored in it
            continue
        try:
            data = path.read_bytes()
        except (IsADirectoryError, FileNotFoundError):  # a folder, or a temporary file already renamed
            continue
        if secrets := found_in(data):
            found[str(path.relative_to(home))] = secrets
    return found


async def test_no_secret_is_kept_or_shown_after_a_session(tmp_path: Path, home: Path) -> None:
    teller = tmp_path / "teller.py"
    teller.write_text(TELLER, encoding="utf-8")
    config = write_config(tmp_path / "config", servers(teller), supervisor=FAST)
    states: dict[str, Any] = {}
    async with serving_http(config, home) as served, http_client(served.url, served.token) as client:
        await wait_for(lambda: _has_tools(client), timeout=30)
        # A call whose arguments hold a secret: the server logs every call it gets (--log-calls).
        echoed = await client.call_tool("echo", {"text": f"charge with {STRIPE_KEY}"})
        assert STRIPE_KEY in text_of(echoed)  # results pass through untouched: they are the client's
        await client.call_tool("stderr", {"text": f"retrying with password {ENV_PASSWORD} and LANG=C.UTF-8"})

        def settled() -> bool:
            # (The advertisement follows state changes a moment later: an early one may still show
            # `stripe` starting, though it answered the calls above.)
            states.update(json.loads(status(home, "--json"))["engines"][0]["servers"])
            failing = {states[name]["state"] for name in ("refused", "remote")} <= {"backoff", "failed"}
            return failing and states["stripe"]["state"] == "ready"

        await wait_for(settled, timeout=30)
        shown = status(home, "--json") + status(home)
        running = leaks(home)  # the advertisement is there only while the engine runs
        assert any(path.startswith("run/engines/") for path in map(str, _files(home)))
    assert states["stripe"]["state"] == "ready"
    assert "was refused" in states["refused"]["reason"]  # the reason still quotes the server's words
    assert found_in(shown.encode()) == []
    assert running == {}
    assert {"logs/stripe.log", "logs/refused.log", "logs/remote.log"} <= set(map(str, _files(home)))
    assert leaks(home) == {}

    # Harmless values stay readable: the locale, a folder, a port.
    log = (home / "logs" / "stripe.log").read_text(encoding="utf-8")
    harmless = ["LANG=C.UTF-8", "DATA_DIR=/srv/acme/data", "value of lang: C.UTF-8", "--port 8080", "argument 8080"]
    assert [value for value in harmless if value not in log] == []
    assert "postgres://admin:***@localhost/acme" in log  # the URL is shown, its password is not
    remote = (home / "logs" / "remote.log").read_text(encoding="utf-8")
    assert "connecting to http://admin:***@127.0.0.1:" in remote and "&lang=en" in remote


def _files(home: Path) -> list[Path]:
    return [path.relative_to(home) for path in home.rglob("*") if path.is_file()]


async def _has_tools(client: Any) -> bool:
    return {"echo", "stderr"} <= {tool.name for tool in (await client.list_tools()).tools}
