"""Moving a server's literal secrets into a real keyring (the test's own file backend): which values
move, what stays in the config, and that the description never holds a value."""

from __future__ import annotations

import json
from pathlib import Path

from mcpmanager.core.config.save import backup_of
from mcpmanager.core.config.secrets import mask
from mcpmanager.core.config.servers import HttpServerConfig, StdioServerConfig, secret_values, shown_command
from mcpmanager.core.config.to_keyring import Move, move_to_keyring, moves_of, scrub_backup
from mcpmanager.core.vault.references import reference
from mcpmanager.core.vault.store import Vault

OPAQUE = "opaque-value-with-no-shape"
SHAPED = "ghp_" + "A" * 36


def test_the_rule_s_secrets_move_and_harmless_values_and_references_stay() -> None:
    server = StdioServerConfig(
        "acme",
        "run",
        env={"ACME_PASSWORD": OPAQUE, "PLAIN": SHAPED, "LANG": "C", "OLD_TOKEN": "${keyring:old}", "EMPTY_KEY": ""},
    )
    moves = moves_of(server)
    assert [(m.key, m.entry, m.value) for m in moves] == [
        ("ACME_PASSWORD", "acme/ACME_PASSWORD", OPAQUE),
        ("PLAIN", "acme/PLAIN", SHAPED),  # a credential's shape, whatever its name
    ]
    assert [m.describe() for m in moves] == [
        "acme: env ACME_PASSWORD=*** → keyring entry acme/ACME_PASSWORD",
        "acme: env PLAIN=*** → keyring entry acme/PLAIN",
    ]
    assert OPAQUE not in repr(moves)


def test_chosen_keys_move_whatever_their_names_say() -> None:
    server = StdioServerConfig("acme", "run", env={"GREETING": OPAQUE, "ACME_PASSWORD": "other-secret"})
    assert [m.key for m in moves_of(server, ["GREETING"])] == ["GREETING"]


def test_a_bearer_header_keeps_its_scheme_in_the_config() -> None:
    vault = Vault()
    server = HttpServerConfig("linear", "https://h/mcp", {"Authorization": f"Bearer {OPAQUE}", "Accept": "json"})
    moved, moves = move_to_keyring(server, vault)
    assert isinstance(moved, HttpServerConfig)
    assert moved.headers == {"Authorization": "Bearer ${keyring:linear/Authorization}", "Accept": "json"}
    assert [m.describe() for m in moves] == [
        "linear: header Authorization=Bearer *** → keyring entry linear/Authorization"
    ]
    assert vault.get("linear/Authorization") == OPAQUE


def test_a_reference_is_shown_as_it_is_and_the_secrets_beside_it_are_not() -> None:
    server = StdioServerConfig(
        "acme",
        "npx",
        ["--api-key", "${keyring:acme/key}", "--token=${keyring:acme/t}", "--other", SHAPED],
        env={"ACME_TOKEN": "${keyring:acme/ACME_TOKEN}", "AUTH": "Bearer ${keyring:acme/AUTH}"},
    )
    assert shown_command(server) == "npx --api-key '${keyring:acme/key}' '--token=${keyring:acme/t}' --other ***"
    assert secret_values(server) == [SHAPED]
    text = "ACME_TOKEN=${keyring:acme/ACME_TOKEN} Authorization: Bearer ${keyring:x} API_KEY=abc123456"
    assert mask(text) == "ACME_TOKEN=${keyring:acme/ACME_TOKEN} Authorization: Bearer ${keyring:x} API_KEY=***"


def test_a_damaged_backup_is_scrubbed_all_the_same(tmp_path: Path) -> None:
    """A backup with bytes that are not UTF-8 (a damaged config saved over) still loses the secret:
    left in it, the plain-text value would outlive its move to the keyring."""
    config = tmp_path / "config.json"
    config.write_text("{}", encoding="utf-8")
    secret = "sk-live-0123456789abcdef"
    damaged = b'{"mcpServers": {"a": {"env": {"API_KEY": "' + secret.encode() + b'"}}}, "x": "\xff\xfe"}'
    backup_of(config).write_bytes(damaged)
    move = Move("a", "env", "API_KEY", "a/API_KEY", "", secret)
    scrub_backup(config, [move])
    scrubbed = backup_of(config).read_bytes()
    assert secret.encode() not in scrubbed and b"\xff\xfe" in scrubbed  # only the secret changed
    assert scrubbed == damaged.replace(secret.encode(), json.dumps(reference("a/API_KEY"))[1:-1].encode())
