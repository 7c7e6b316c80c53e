"""A secret stored in the keyring reaches its server and appears in no file under MCPMANAGER_HOME
(issue 16): `mcpmanager secrets set` as a subprocess (the value on stdin), a config whose fixture
server gets `${keyring:…}` in its env, `serve --http` with a real SDK client calling the server's
`env` tool; then every file under MCPMANAGER_HOME is read, byte for byte. The keyring is the test's
own file backend (keyrings.alt), where the secret is, base64-encoded, not encrypted (docs/trust.md)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from mcpmanager.core.config.load import load_config
from mcpmanager.core.config.servers import StdioServerConfig
from mcpmanager.core.vault.store import Vault
from tests.helpers.clients import http_client, text_of
from tests.helpers.engines import wait_for
from tests.helpers.fixture_servers import FAST, fixture, write_config
from tests.helpers.serving import serving_http
from tests.helpers.vaults import current_keyring_env, keyring_file

GREETING = "open-sesame-4f9a2c"  # no secret's shape, under a harmless name: only the keyring says so
TOKEN = "token-in-the-config-81b2"


def mcpmanager(home: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {"MCPMANAGER_HOME": str(home), "PATH": os.environ.get("PATH", ""), **current_keyring_env()}
    return subprocess.run(
        [sys.executable, "-m", "mcpmanager", *args], input=stdin, env=env, capture_output=True, text=True, timeout=60
    )


def forms(secret: str) -> list[bytes]:
    """The secret as bytes, and as keyrings.alt's file keeps it (base64, not encrypted)."""
    return [secret.encode(), base64.b64encode(secret.encode())]


def files_holding(home: Path, secret: str) -> list[str]:
    found = []
    for path in home.rglob("*"):
        if path.is_socket():  # the engine's local socket: nothing is stored in it
            continue
        try:
            data = path.read_bytes()
        except (IsADirectoryError, FileNotFoundError):  # a folder, or a temporary file already renamed
            continue
        if any(form in data for form in forms(secret)):
            found.append(str(path.relative_to(home)))
    return found


async def test_a_keyring_secret_reaches_its_server_and_no_file_under_home(home: Path, private_keyring: Path) -> None:
    stored = mcpmanager(home, "secrets", "set", "greeter/GREETING", stdin=GREETING + "\n")
    assert stored.returncode == 0, stored.stderr
    assert "not encrypted" in stored.stderr and str(keyring_file(private_keyring)) in stored.stderr
    servers = {
        "greeter": fixture("--env-tool", "--say-env", "GREETING", env={"GREETING": "${keyring:greeter/GREETING}"}),
        "lost": fixture(env={"API_TOKEN": "${keyring:lost/API_TOKEN}"}),
    }
    write_config(home, servers, supervisor=FAST)  # the config under MCPMANAGER_HOME, scanned too
    listed = mcpmanager(home, "secrets", "list")
    assert "greeter/GREETING  stored   greeter: env GREETING" in listed.stdout
    assert "lost/API_TOKEN    MISSING  lost: env API_TOKEN" in listed.stdout

    states: dict[str, Any] = {}
    async with serving_http(home / "config.json", home) as served, http_client(served.url, served.token) as client:
        await wait_for(lambda: _has_env(client), timeout=30)
        result = await client.call_tool("env", {"name": "GREETING"})
        assert text_of(result) == "present sha256:" + hashlib.sha256(GREETING.encode()).hexdigest()

        def settled() -> bool:
            status = mcpmanager(home, "status", "--json")
            states.update(json.loads(status.stdout))
            return bool(states["engines"][0]["servers"]["lost"]["state"] == "failed")

        await wait_for(settled, timeout=30)
        assert "not encrypted" in states["keyring"]
        shown = mcpmanager(home, "status").stdout
        during = files_holding(home, GREETING)
    lost = states["engines"][0]["servers"]["lost"]
    assert lost["reason"] == (
        "server 'lost': env API_TOKEN refers to keyring entry 'lost/API_TOKEN', which is not in the keyring "
        "(store it with `mcpmanager secrets set lost/API_TOKEN`)"
    )
    assert "keyring: keyrings.alt.file.PlaintextKeyring" in shown and GREETING not in shown
    assert (home / "logs" / "greeter.log").is_file() and (home / "config.json").is_file()
    log = (home / "logs" / "greeter.log").read_text(encoding="utf-8")
    assert "GREETING is ***" in log  # the server printed its secret: masked, though its name is harmless
    assert during == [] and files_holding(home, GREETING) == []
    assert forms(GREETING)[1] in keyring_file(private_keyring).read_bytes()  # the keyring holds it


def test_secrets_move_puts_a_server_s_literal_secrets_in_the_keyring(home: Path) -> None:
    config = write_config(home, {"acme": fixture(env={"ACME_TOKEN": TOKEN, "LANG": "C.UTF-8"})})
    dry = mcpmanager(home, "secrets", "move", "acme", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "would move acme: env ACME_TOKEN=*** → keyring entry acme/ACME_TOKEN" in dry.stdout
    assert TOKEN not in dry.stdout + dry.stderr and TOKEN in config.read_text()
    moved = mcpmanager(home, "secrets", "move", "acme")
    assert moved.returncode == 0, moved.stderr
    server = load_config(config).servers["acme"]
    assert isinstance(server, StdioServerConfig)
    assert server.env == {"ACME_TOKEN": "${keyring:acme/ACME_TOKEN}", "LANG": "C.UTF-8"}
    assert TOKEN not in config.read_text() and Vault().get("acme/ACME_TOKEN") == TOKEN
    backup = (home / "config.json.bak").read_text()  # the file before the move, scrubbed too
    assert TOKEN not in backup and "${keyring:acme/ACME_TOKEN}" in backup
    assert files_holding(home, TOKEN) == []
    assert mcpmanager(home, "secrets", "delete", "acme/ACME_TOKEN").returncode == 0
    assert Vault().get("acme/ACME_TOKEN") is None


def test_a_value_is_never_taken_from_the_command_line(home: Path) -> None:
    refused = mcpmanager(home, "secrets", "set", "x", GREETING)
    assert refused.returncode == 2 and "unrecognized arguments" in refused.stderr
    empty = mcpmanager(home, "secrets", "set", "x", stdin="")
    assert empty.returncode == 2 and "nothing stored" in empty.stderr


async def _has_env(client: Any) -> bool:
    listed = await client.list_tools()
    return bool("env" in {tool.name for tool in listed.tools})


def test_import_moves_the_client_s_secrets_into_the_keyring(tmp_path: Path, home: Path) -> None:
    user = tmp_path / "user"
    cursor = user / ".cursor" / "mcp.json"
    cursor.parent.mkdir(parents=True)
    servers = {
        "github": {"command": "npx", "args": ["-y", "server-github"], "env": {"GITHUB_TOKEN": TOKEN, "LANG": "C"}},
        "linear": {"url": "https://mcp.linear.example/mcp", "headers": {"Authorization": f"Bearer {GREETING}"}},
    }
    cursor.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    before = cursor.read_bytes()
    env = {"HOME": str(user), "MCPMANAGER_HOME": str(home), "PATH": os.environ.get("PATH", ""), **current_keyring_env()}

    def run(*flags: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "mcpmanager", "import", "--from", "cursor", "--secrets-to-keyring", *flags]
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)

    dry = run("--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "would move github: env GITHUB_TOKEN=*** → keyring entry github/GITHUB_TOKEN" in dry.stdout
    assert "would move linear: header Authorization=Bearer *** → keyring entry linear/Authorization" in dry.stdout
    assert TOKEN not in dry.stdout and GREETING not in dry.stdout and Vault().get("github/GITHUB_TOKEN") is None
    done = run()
    assert done.returncode == 0, done.stderr
    config = load_config(home / "config.json")
    github, linear = config.servers["github"], config.servers["linear"]
    assert isinstance(github, StdioServerConfig) and not isinstance(linear, StdioServerConfig)
    assert github.env == {"GITHUB_TOKEN": "${keyring:github/GITHUB_TOKEN}", "LANG": "C"}
    assert linear.headers == {"Authorization": "Bearer ${keyring:linear/Authorization}"}
    assert Vault().get("github/GITHUB_TOKEN") == TOKEN and Vault().get("linear/Authorization") == GREETING
    assert files_holding(home, TOKEN) == [] and files_holding(home, GREETING) == []
    assert cursor.read_bytes() == before  # the client's file is left as it was
