"""The one masking rule (core/config/secrets.py): what it must mask, and what it must leave readable.

Provider tokens are generated from each shape with random bodies, so the rule is held to the shape
and not to one example's wording."""

from __future__ import annotations

import logging
import random
import string

import pytest

from mcpmanager.core.config.secrets import (
    MASK,
    Masker,
    MaskingFormatter,
    argument_secrets,
    config_secrets,
    entry_is_secret,
    mask,
    mask_arguments,
    mask_strings,
    names_secret,
    secrets_in,
)
from mcpmanager.core.config.servers import HttpServerConfig, StdioServerConfig, secret_values, shown_command

ALNUM = string.ascii_letters + string.digits
UPPER = string.ascii_uppercase + string.digits
URLSAFE = ALNUM + "_-"


def body(alphabet: str, length: int, seed: int) -> str:
    return "".join(random.Random(seed).choice(alphabet) for _ in range(length))


def provider_tokens(seed: int) -> list[str]:
    """One token of every provider shape the rule knows, with a random body."""
    return [
        f"sk_live_{body(ALNUM, 24, seed)}",
        f"sk_test_{body(ALNUM, 99, seed)}",
        f"rk_live_{body(ALNUM, 30, seed)}",
        f"whsec_{body(ALNUM, 32, seed)}",
        f"ghp_{body(ALNUM, 36, seed)}",
        f"gho_{body(ALNUM, 36, seed)}",
        f"ghs_{body(ALNUM, 36, seed)}",
        f"github_pat_{body(ALNUM + '_', 82, seed)}",
        f"glpat-{body(URLSAFE, 20, seed)}",
        f"xoxb-{body(string.digits, 12, seed)}-{body(string.digits, 13, seed)}-{body(ALNUM, 24, seed)}",
        f"xoxp-{body(string.digits, 11, seed)}-{body(ALNUM, 30, seed)}",
        f"xapp-1-{body(UPPER, 11, seed)}-{body(ALNUM, 40, seed)}",
        f"sk-{body(ALNUM, 48, seed)}",
        f"sk-proj-{body(URLSAFE, 120, seed)}",
        f"sk-ant-api03-{body(URLSAFE, 93, seed)}",
        f"AKIA{body(UPPER, 16, seed)}",
        f"ASIA{body(UPPER, 16, seed)}",
        f"AIza{body(URLSAFE, 35, seed)}",
        f"ya29.{body(URLSAFE, 60, seed)}",
        f"hf_{body(ALNUM, 34, seed)}",
        f"npm_{body(ALNUM, 36, seed)}",
        f"pypi-{body(URLSAFE, 80, seed)}",
        f"SG.{body(URLSAFE, 22, seed)}.{body(URLSAFE, 43, seed)}",
        f"eyJ{body(URLSAFE, 30, seed)}.eyJ{body(URLSAFE, 60, seed)}.{body(URLSAFE, 43, seed)}",
    ]


# Names ---------------------------------------------------------------------------------------------

SECRET_NAMES = [
    "STRIPE_API_KEY", "STRIPE_SECRET_KEY", "GITHUB_PERSONAL_ACCESS_TOKEN", "GITHUB_TOKEN", "SLACK_BOT_TOKEN",
    "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "DB_PASSWORD", "PGPASSWORD", "MYSQL_PWD",
    "DB_PASS", "REDIS_PASSWD", "SMTP_PASSPHRASE", "CLIENT_SECRET", "SECRET_KEY_BASE", "SENTRY_DSN",
    "GITLAB_PAT", "BASIC_AUTH", "HUB_SIGNATURE", "APIKEY", "ACCESSTOKEN", "Authorization",
    "Proxy-Authorization", "X-API-Key", "X-Auth-Token", "Cookie", "Set-Cookie", "apiKey", "accessToken",
    "clientSecret", "APIKey", "api-key", "token", "key", "secret", "password", "auth-token",
    "private_key", "refresh_token", "GOOGLE_APPLICATION_CREDENTIALS",
]  # fmt: skip

HARMLESS_NAMES = [
    "PATH", "HOME", "LANG", "LC_ALL", "PWD", "OLDPWD", "SHELL", "TERM", "USER", "TMPDIR", "NODE_ENV",
    "HTTPS_PROXY", "NO_PROXY", "XDG_SESSION_TYPE", "DATA_DIR", "LOG_LEVEL", "DEBUG", "PORT", "port",
    "config", "MAX_TOKENS", "TOKENIZERS_PARALLELISM", "KEYBOARD_LAYOUT", "MONKEY", "GIT_AUTHOR_NAME",
    "OAUTH_CLIENT_ID", "AWS_ACCESS_KEY_ID", "AWS_REGION", "SSL_KEY_FILE", "SSH_AUTH_SOCK", "TOKEN_URL",
    "AUTH_TYPE", "AUTH_MODE", "KEY_PATH", "token_file", "TOKEN_EXPIRY", "Accept", "Accept-Language",
    "Content-Type", "User-Agent", "Mcp-Session-Id", "KeyError", "TokenExpiredError", "no-auth",
    "PASS_THROUGH", "BYPASS", "",
]  # fmt: skip


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_names_that_name_a_secret(name: str) -> None:
    assert names_secret(name)


@pytest.mark.parametrize("name", HARMLESS_NAMES)
def test_names_that_do_not(name: str) -> None:
    assert not names_secret(name)


# Shapes, wherever they appear -----------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_every_provider_shape_is_masked_wherever_it_appears(seed: int) -> None:
    for token in provider_tokens(seed):
        for text in (token, f"using {token} now", f"[{token}]", f'{{"value": "{token}"}}', f"key={token}&x=1"):
            masked = mask(text)
            assert token not in masked, (token, masked)
            assert MASK in masked
        assert secrets_in(f"a {token} b") == {token}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Authorization: Bearer abc123def456", "Authorization: Bearer ***"),
        ("curl -H 'authorization: bearer abc.def-ghi'", "curl -H 'authorization: bearer ***'"),
        ("sent Basic dXNlcjpwYXNzd29yZA==", "sent Basic ***"),
        ("db at postgres://admin:s3cr3t-pw@db.internal:5432/app", "db at postgres://admin:***@db.internal:5432/app"),
        ("proxy http://u:p%40ss@proxy:3128 ok", "proxy http://u:***@proxy:3128 ok"),
        ("GET /mcp?api_key=abc123&lang=en HTTP/1.1", "GET /mcp?api_key=***&lang=en HTTP/1.1"),
        ("https://h/x?access_token=zzz#frag", "https://h/x?access_token=***"),
        ("STRIPE_API_KEY=whatever-it-is", "STRIPE_API_KEY=***"),
        ("export DB_PASSWORD='two words'", "export DB_PASSWORD='***'"),
        ('{"apiKey": "plain-value", "name": "x"}', '{"apiKey": "***", "name": "x"}'),
        ("{'client_secret': 'abc'}", "{'client_secret': '***'}"),
        ("password: hunter2", "password: ***"),
        ("X-API-Key: k-123", "X-API-Key: ***"),
        ("Authorization: token opaque123", "Authorization: token ***"),
        ("run --api-key opaque-value --port 8080", "run --api-key *** --port 8080"),
        ("run --token=opaque --verbose", "run --token=*** --verbose"),
        ("run -token opaque", "run -token ***"),
        ('run --password "two words" next', 'run --password "***" next'),
        ('"args": ["--token=opaque", "--port"]', '"args": ["--token=***", "--port"]'),
        ("auth: Authorization: Bearer abc123def456", "auth: Authorization: Bearer ***"),
    ],
)
def test_secrets_by_shape_or_by_the_name_beside_them(text: str, expected: str) -> None:
    assert mask(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "PATH=/usr/local/bin:/usr/bin:/bin",
        "HOME=/home/someone LANG=C.UTF-8 LC_ALL=en_GB.UTF-8",
        "listening on http://127.0.0.1:8765/mcp (port 8765)",
        "run --port 8080 --config /etc/acme/config.json --verbose",
        "run --no-auth /srv/data",
        "run --api-key --port 8080",  # a flag after the flag: no value was given
        "ssh://git@github.com/owner/repo.git",
        "https://example.com/search?q=token&page=2",
        "KeyError: 'missing_field'",
        "missing bearer token",
        "Bearer realm=mcp",
        "a task-runner-for-the-long-jobs and a disk-usage-report-generator-x",
        "pk_live_publishablekey000000000000",  # Stripe's publishable key is meant to be public
        "cursor eyJvZmZzZXQiOjEwfQ== of the next page",  # base64 JSON, not a JWT
        "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "uuid 123e4567-e89b-12d3-a456-426614174000",
        "input tokens: 1200, output tokens: 300",
        "2024-05-01 12:00:00,123 INFO mcp.server: Processing request of type CallToolRequest",
        'Traceback (most recent call last):\n  File "/usr/lib/python3.11/x.py", line 12, in <module>',
        "TOKEN_URL=https://auth.example.com/oauth/token",
        "token_file: /run/user/1000/mcpmanager/token",
    ],
)
def test_harmless_text_is_left_as_it_is(text: str) -> None:
    assert mask(text) == text
    assert secrets_in(text) == set()


def test_masking_is_idempotent_and_keeps_the_rest() -> None:
    text = f"key={provider_tokens(1)[0]} path=/srv/x Authorization: Bearer abcdef123"
    once = mask(text)
    assert mask(once) == once
    assert once == "key=*** path=/srv/x Authorization: Bearer ***"


# Literal values ------------------------------------------------------------------------------------


def test_literal_values_are_masked_in_every_encoding_but_short_ones_are_not_searched() -> None:
    masker = Masker(["plain-opaque-value", 'with "quote" inside', "pass word/é", "abc"])
    assert masker("it said plain-opaque-value twice: plain-opaque-value") == "it said *** twice: ***"
    assert masker('{"v": "with \\"quote\\" inside"}') == '{"v": "***"}'
    assert masker("url /x?v=pass%20word%2F%C3%A9 done") == "url /x?v=*** done"
    assert masker("json pass word/\\u00e9 done") == "json *** done"
    assert masker("abc is too short to search for") == "abc is too short to search for"


def test_a_literal_that_contains_another_is_masked_whole() -> None:
    masker = Masker(["secret-one", "secret-one-and-more"])
    assert masker("x secret-one-and-more y secret-one z") == "x *** y *** z"


# A server's values ---------------------------------------------------------------------------------


def test_the_secrets_of_a_stdio_server() -> None:
    token = provider_tokens(2)[4]  # a GitHub token, under a name that says nothing
    server = StdioServerConfig(
        "stripe",
        "npx",
        ["-y", "@stripe/mcp", "--api-key", "sk-value-after-flag", "--token=abc def", "--port", "8080",
         "DB_PASSWORD=from-arg", "--database", "postgres://u:url-pw@h/db", "--key-file", "/etc/key.pem"],
        env={"GITHUB_TOKEN": "env-token-value", "LANG": "C.UTF-8", "PATH": "/usr/bin", "SOMETHING": token},
    )  # fmt: skip
    assert set(secret_values(server)) == {
        "sk-value-after-flag",
        "abc def",
        "abc",  # what the rule finds in the argument's text, too
        "from-arg",
        "url-pw",
        "env-token-value",
        token,
    }
    assert shown_command(server) == (
        "npx -y @stripe/mcp --api-key *** --token=*** --port 8080 DB_PASSWORD=*** "
        "--database postgres://u:***@h/db --key-file /etc/key.pem"
    )


def test_the_secrets_of_a_remote_server() -> None:
    server = HttpServerConfig(
        "remote",
        "https://me:url-password@example.com/mcp?api_key=query-secret&lang=en",
        {"Authorization": "Bearer header-token", "X-API-Key": "header-key", "Accept-Language": "en-GB"},
    )
    assert set(secret_values(server)) == {
        "url-password",
        "query-secret",
        "Bearer header-token",
        "header-token",  # a server may print the credential without its scheme
        "header-key",
    }
    assert shown_command(server) == "HTTP https://me:***@example.com/mcp?api_key=***&lang=en"


def test_a_shown_command_is_quoted_like_a_shell_would_need_but_a_mask_alone_is_not() -> None:
    server = StdioServerConfig("x", "/opt/my tools/run", ["--api-key", "k", "--name", "two words", "--token=a b"])
    assert shown_command(server) == "'/opt/my tools/run' --api-key *** --name 'two words' --token=***"


def test_argument_secrets_and_what_is_shown_of_them() -> None:
    args = ["--api-key", "short", "--token", "--port", "8080", "-e", "GITHUB_TOKEN=ghx", "--auth=Bearer cred123"]
    assert argument_secrets(args) == {"short", "ghx", "Bearer cred123", "cred123"}
    assert mask_arguments(args) == [
        "--api-key",
        MASK,
        "--token",
        "--port",
        "8080",
        "-e",
        "GITHUB_TOKEN=***",
        "--auth=***",
    ]


def test_config_secrets_take_env_and_headers_by_name_or_shape() -> None:
    found = config_secrets(
        env={"API_TOKEN": "x", "NODE_ENV": "production", "DATABASE_URL": "mysql://root:dbpw@h/x"},
        headers={"Cookie": "session=abc", "Accept": "application/json"},
    )
    assert found == {"x", "dbpw", "session=abc"}


@pytest.mark.parametrize(
    ("name", "value", "secret"),
    [
        ("API_TOKEN", "anything", True),
        ("LANG", "C.UTF-8", False),
        ("PATH", "/usr/local/bin:/usr/bin", False),
        ("SOMETHING", "ghp_" + "a1" * 18, True),
        ("DATABASE_URL", "postgres://u:pw@h/db", True),
        ("DATABASE_URL", "postgres://h/db", False),
        ("Authorization", "Bearer x", True),
        ("Accept", "application/json", False),
    ],
)
def test_an_entry_is_secret_by_its_name_or_its_value(name: str, value: str, secret: bool) -> None:
    assert entry_is_secret(name, value) is secret


def test_mask_strings_masks_values_not_keys() -> None:
    info = {"servers": {"api_key_server": {"reason": "exited 3 — bad key sk_live_" + "a" * 24, "tools": 3}}}
    assert mask_strings(info) == {"servers": {"api_key_server": {"reason": "exited 3 — bad key ***", "tools": 3}}}


def test_log_records_are_masked_tracebacks_included() -> None:
    formatter = MaskingFormatter("%(levelname)s %(message)s")
    try:
        raise ConnectionError("401 for url 'https://h/mcp?api_key=abc123'")
    except ConnectionError as exc:
        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "call with %s failed", ("Bearer tok-12345",), None)
        record.exc_info = (type(exc), exc, exc.__traceback__)
    text = formatter.format(record)
    assert text.startswith("ERROR call with Bearer *** failed\nTraceback")
    assert "api_key=***'" in text and "abc123" not in text
