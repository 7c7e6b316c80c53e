"""A server edited in a form, made over the server as the file has it now (`rebase_server`): what
the form changed wins, what it left as it was is the file's now, key by key for env and headers."""

from __future__ import annotations

from mcpmanager.core.config.rebase import rebase_server
from mcpmanager.core.config.servers import HttpServerConfig, StdioServerConfig

MOVED = "${keyring:acme/ACME_TOKEN}"


def test_a_secret_moved_meanwhile_stays_moved_when_the_form_changed_something_else() -> None:
    base = StdioServerConfig("acme", "run", ["--old"], env={"ACME_TOKEN": "plain-1234", "LANG": "C"})
    edited = StdioServerConfig("acme", "run", ["--new"], env={"ACME_TOKEN": "plain-1234", "LANG": "C"})
    current = StdioServerConfig("acme", "run", ["--old"], env={"ACME_TOKEN": MOVED, "LANG": "C"}, disabled=True)
    rebased = rebase_server(base, edited, current)
    assert rebased == StdioServerConfig("acme", "run", ["--new"], env={"ACME_TOKEN": MOVED, "LANG": "C"}, disabled=True)


def test_env_keys_added_changed_and_removed_on_either_side() -> None:
    base = StdioServerConfig(
        "s", "run", env={"KEPT": "1", "FORM_CHANGES": "1", "FORM_REMOVES": "1", "FILE_REMOVES": "1"}
    )
    edited = StdioServerConfig(
        "renamed", "run", env={"KEPT": "1", "FORM_CHANGES": "2", "FILE_REMOVES": "1", "FORM_ADDS": "1"}
    )
    current = StdioServerConfig(
        "s", "run", env={"KEPT": "file", "FORM_CHANGES": "file", "FORM_REMOVES": "1", "FILE_ADDS": "1"}
    )
    rebased = rebase_server(base, edited, current)
    assert rebased.name == "renamed"
    assert isinstance(rebased, StdioServerConfig)
    assert rebased.env == {"KEPT": "file", "FORM_CHANGES": "2", "FILE_ADDS": "1", "FORM_ADDS": "1"}


def test_a_changed_transport_takes_the_form_as_it_is() -> None:
    base = StdioServerConfig("s", "run")
    edited = HttpServerConfig("s", "https://h/mcp")
    assert rebase_server(base, edited, StdioServerConfig("s", "other", ["x"])) is edited
    assert rebase_server(base, StdioServerConfig("s", "mine"), HttpServerConfig("s", "https://h")) == StdioServerConfig(
        "s", "mine"
    )


def test_headers_of_a_remote_server_too() -> None:
    base = HttpServerConfig("r", "https://h/mcp", {"Authorization": "Bearer plain-5678"})
    edited = HttpServerConfig("r", "https://h/v2/mcp", {"Authorization": "Bearer plain-5678"})
    current = HttpServerConfig("r", "https://h/mcp", {"Authorization": f"Bearer {MOVED}"})
    assert rebase_server(base, edited, current) == HttpServerConfig(
        "r", "https://h/v2/mcp", {"Authorization": f"Bearer {MOVED}"}
    )
