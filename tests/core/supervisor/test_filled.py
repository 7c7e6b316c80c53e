"""`${keyring:NAME}` references filled when a server starts, from a real keyring (the test's own
file backend): every place a reference may stand, the secrets told to the log's masker, a missing
entry failing the server for good with a message naming it, and a real child that gets the secret."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import mcp_types as types
import pytest

from mcpmanager.core.config.servers import HttpServerConfig, OAuthSettings, StdioServerConfig
from mcpmanager.core.config.settings import SupervisorSettings
from mcpmanager.core.supervisor.downstream import Downstream
from mcpmanager.core.supervisor.filled import fill, filled_for_start, filled_server, has_references
from mcpmanager.core.supervisor.lifecycle import State
from mcpmanager.core.supervisor.stderr_log import StderrLog
from mcpmanager.core.vault.references import MissingSecret
from mcpmanager.core.vault.store import Vault, VaultError
from tests.helpers.clients import text_of
from tests.helpers.engines import wait_for
from tests.helpers.fake_process import FakeSpawner
from tests.helpers.fixture_servers import FIXTURE_SERVER
from tests.helpers.vaults import LockedKeyring

SETTINGS = SupervisorSettings(start_timeout=10, backoff_initial=0.05, starting_wait=2, stop_grace=0.5)
GREETING = "open-sesame-4f9a2c"  # no secret's shape, under a name that is no secret's: only filling says so


@pytest.fixture
def vault() -> Vault:
    vault = Vault()
    vault.set("greeting", GREETING)
    vault.set("github", "gh-token-value-1234")
    return vault


def test_every_reference_of_a_stdio_server_is_filled(vault: Vault) -> None:
    config = StdioServerConfig(
        "s",
        "run",
        ["--token", "${keyring:github}", "--say=${keyring:greeting}!", "plain"],
        env={"GREETING": "${keyring:greeting}", "TWICE": "${keyring:greeting}-${keyring:github}", "LANG": "C"},
    )
    done = fill(config, vault)
    assert isinstance(done.config, StdioServerConfig)
    assert done.config.args == ["--token", "gh-token-value-1234", f"--say={GREETING}!", "plain"]
    assert done.config.env == {"GREETING": GREETING, "TWICE": f"{GREETING}-gh-token-value-1234", "LANG": "C"}
    assert sorted(done.secrets) == sorted([GREETING, "gh-token-value-1234"])
    assert config.env["GREETING"] == "${keyring:greeting}"  # the config itself never holds the secret


def test_the_url_and_headers_of_a_remote_server_are_filled(vault: Vault) -> None:
    config = HttpServerConfig(
        "r", "https://h/mcp?key=${keyring:greeting}", {"Authorization": "Bearer ${keyring:github}", "Accept": "x"}
    )
    filled = filled_server(config, vault)
    assert isinstance(filled, HttpServerConfig)
    assert filled.url == f"https://h/mcp?key={GREETING}"
    assert filled.headers == {"Authorization": "Bearer gh-token-value-1234", "Accept": "x"}


def test_a_missing_entry_names_itself_and_where_it_is_referred_to(vault: Vault) -> None:
    config = StdioServerConfig("s", "run", env={"API": "${keyring:s/API}"})
    with pytest.raises(MissingSecret) as caught:
        fill(config, vault)
    assert str(caught.value) == (
        "server 's': env API refers to keyring entry 's/API', which is not in the keyring "
        "(store it with `mcpmanager secrets set s/API`)"
    )


async def test_the_filled_secrets_are_masked_in_the_log_from_then_on(vault: Vault) -> None:
    log = StderrLog(None)
    config = StdioServerConfig("s", "run", env={"GREETING": "${keyring:greeting}"})
    assert has_references(config)
    filled = await filled_for_start(config, log, vault)
    assert isinstance(filled, StdioServerConfig) and filled.env["GREETING"] == GREETING
    log.feed(f"hello {GREETING}\n".encode())
    assert log.tail(1) == ["hello ***"]


async def test_a_config_without_references_never_touches_the_keyring() -> None:
    config = StdioServerConfig("s", "run", env={"LANG": "C"})
    assert await filled_for_start(config, StderrLog(None), Vault(LockedKeyring())) is config
    with pytest.raises(VaultError, match="cannot read 'x' from the keyring"):
        await filled_for_start(StdioServerConfig("s", "run", ["${keyring:x}"]), StderrLog(None), Vault(LockedKeyring()))


async def test_a_server_whose_entry_is_missing_fails_once_with_the_reason() -> None:
    states: list[State] = []
    config = StdioServerConfig("gh", "gh-server", env={"GITHUB_TOKEN": "${keyring:gh/GITHUB_TOKEN}"})
    spawner = FakeSpawner()
    downstream = Downstream(config, SETTINGS, None, lambda e: states.append(downstream.status.state), spawner=spawner)
    downstream.start()
    await wait_for(lambda: downstream.status.state is State.FAILED)
    assert downstream.status.reason == (
        "server 'gh': env GITHUB_TOKEN refers to keyring entry 'gh/GITHUB_TOKEN', which is not in the keyring "
        "(store it with `mcpmanager secrets set gh/GITHUB_TOKEN`)"
    )
    assert states == [State.STARTING, State.FAILED]  # permanent: no restart loop
    assert spawner.children == {}  # nothing was spawned


async def test_a_real_server_gets_the_secret_and_its_stderr_shows_it_masked(vault: Vault, tmp_path: Path) -> None:
    config = StdioServerConfig(
        "greeter",
        sys.executable,
        [str(FIXTURE_SERVER), "--env-tool", "--say-env", "GREETING"],
        env={"GREETING": "${keyring:greeting}"},
    )
    downstream = Downstream(config, SETTINGS, tmp_path, lambda _: None)
    downstream.start()
    try:
        await wait_for(lambda: downstream.status.state is State.READY)
        result = await downstream.call_tool("env", {"name": "GREETING"})
        assert isinstance(result, types.CallToolResult)
        assert text_of(result) == "present sha256:" + hashlib.sha256(GREETING.encode()).hexdigest()
        await wait_for(lambda: "GREETING is ***" in downstream.log.tail(20))
    finally:
        await downstream.stop()
        downstream.log.close()
    written = (tmp_path / "greeter.log").read_text(encoding="utf-8")
    assert "GREETING is ***" in written and GREETING not in written


def test_a_pre_registered_oauth_client_secret_is_filled(vault: Vault) -> None:
    oauth = OAuthSettings(client_id="mcpmanager", client_secret="${keyring:greeting}")
    config = HttpServerConfig("r", "https://h/mcp", oauth=oauth)
    assert has_references(config)
    done = fill(config, vault)
    assert isinstance(done.config, HttpServerConfig) and done.config.oauth is not None
    assert done.config.oauth.client_secret == GREETING and done.secrets == (GREETING,)
