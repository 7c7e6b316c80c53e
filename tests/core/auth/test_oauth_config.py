"""A remote server's `"oauth"` in the config: read with precise errors, kept through saves with the
keys this version does not know, its client secret masked like any secret."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from mcpmanager.core.config.load import load_config, parse_config
from mcpmanager.core.config.model import ConfigError
from mcpmanager.core.config.save import save_config
from mcpmanager.core.config.servers import HttpServerConfig, OAuthSettings, secret_values

OAUTH = {"clientId": "app", "clientSecret": "${keyring:app-secret}", "scopes": ["read"], "later": {"x": 1}}


def test_oauth_is_read_and_survives_a_save_with_unknown_keys(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"mcpServers": {"r": {"url": "https://r.invalid/mcp", "oauth": OAUTH}}}))
    config = load_config(path)
    server = config.servers["r"]
    assert isinstance(server, HttpServerConfig)
    assert server.oauth == OAuthSettings("app", "${keyring:app-secret}", ("read",))
    changed = replace(server, oauth=replace(server.oauth, scopes=(), redirect_port=8765))
    save_config(config.with_server(changed), path)
    saved = json.loads(path.read_text())["mcpServers"]["r"]["oauth"]
    assert saved == {
        "clientId": "app",
        "clientSecret": "${keyring:app-secret}",
        "later": {"x": 1},
        "redirectPort": 8765,
    }
    assert load_config(path).servers["r"] == changed


def test_a_bad_oauth_value_names_its_key() -> None:
    with pytest.raises(ConfigError, match=r"mcpServers\.r\.oauth\.redirectPort"):
        parse_config('{"mcpServers": {"r": {"url": "https://r.invalid", "oauth": {"redirectPort": 0}}}}', "c.json")


def test_a_literal_client_secret_is_masked_like_any_secret() -> None:
    server = HttpServerConfig("r", "https://r.invalid", oauth=OAuthSettings("app", "literal-client-secret"))
    assert "literal-client-secret" in secret_values(server)
