"""The preview of a client's file masks its servers' secrets by the one rule, and only them."""

from __future__ import annotations

import json
from pathlib import Path

from mcpmanager.core.clients.change import Change, Target

KEY = "sk_live_" + "Q7" * 12
SECRETS = [KEY, "opaque-token-value", "url-password-1", "header-token-42", "env-password-77"]


def test_the_preview_masks_secrets_in_env_headers_args_and_urls_and_shows_harmless_values(tmp_path: Path) -> None:
    servers = {
        "stripe": {
            "command": "npx",
            "args": ["-y", "@stripe/mcp", "--api-key", KEY, "--token=opaque-token-value", "--port", "8080"],
            "env": {"ACME_PASSWORD": "env-password-77", "LANG": "C.UTF-8", "DATA_DIR": "/srv/acme/data"},
        },
        "remote": {
            "url": "https://me:url-password-1@example.com/mcp?lang=en",
            "headers": {"Authorization": "Bearer header-token-42", "Accept-Language": "en-GB"},
        },
    }
    before = json.dumps({"mcpServers": servers}, indent=2).encode()
    after = json.dumps({"mcpServers": {"mcpmanager": {"command": "mcpmanager", "args": ["connect"]}}}, indent=2)
    target = Target("cursor", "Cursor", tmp_path / "mcp.json", "mcpServers")
    diff = Change(target, "install", before, after.encode()).diff()
    assert [secret for secret in SECRETS if secret in diff] == []
    for shown in ('"--port"', '"8080"', '"LANG": "C.UTF-8"', '"DATA_DIR": "/srv/acme/data"', '"en-GB"'):
        assert shown in diff, shown
    assert '"Authorization": "***"' in diff and '"https://me:***@example.com/mcp?lang=en"' in diff
    assert '"ACME_PASSWORD": "***"' in diff and '"--token=***"' in diff
