"""Servers from pasted JSON: every shape people paste is read, every mistake is one line that says
where and what, and nothing pasted is lost or echoed."""

from __future__ import annotations

import json

import pytest

from mcpmanager.core.config.json_text import clean_jsonc
from mcpmanager.core.config.load import parse_config
from mcpmanager.core.config.pasted import SnippetError, parse_snippet
from mcpmanager.core.config.servers import HttpServerConfig, StdioServerConfig

GITHUB = StdioServerConfig(
    "github", "npx", ["-y", "@modelcontextprotocol/server-github"], {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_FAKE"}
)
TIME = StdioServerConfig("time", "uvx", ["mcp-server-time"])
REMOTE = HttpServerConfig("remote", "https://example.invalid/mcp", {"Authorization": "Bearer FAKE"})

# As the MCP quickstart tells Claude Desktop users to write it (plus a setting of Claude's own).
CLAUDE_DESKTOP = """{
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_FAKE"}
    },
    "time": {"command": "uvx", "args": ["mcp-server-time"]}
  },
  "globalShortcut": "Ctrl+Space"
}"""

# A README's fragment: no outer braces, a trailing comma.
README_FRAGMENT = """"github": {
  "command": "npx",
  "args": ["-y", "@modelcontextprotocol/server-github"],
  "env": {
    "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_FAKE"
  }
},"""

VSCODE_MCP_JSON = """{
  "inputs": [{"type": "promptString", "id": "token", "description": "Token", "password": true}],
  "servers": {
    "time": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"]},
    "remote": {"type": "http", "url": "https://example.invalid/mcp", "headers": {"Authorization": "Bearer FAKE"}},
    "events": {"type": "sse", "url": "https://example.invalid/sse"}
  }
}"""


# Every accepted shape -------------------------------------------------------------------------------


def test_a_whole_claude_desktop_file() -> None:
    assert parse_snippet(CLAUDE_DESKTOP) == [GITHUB, TIME]


def test_a_whole_cursor_file_with_a_disabled_remote_server() -> None:
    text = json.dumps(
        {"mcpServers": {"remote": {"url": "https://example.invalid/mcp", "headers": {"Authorization": "Bearer FAKE"}}}}
    )
    assert parse_snippet(text) == [REMOTE]
    disabled = '{"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"], "disabled": true}}}'
    assert parse_snippet(disabled) == [StdioServerConfig("time", "uvx", ["mcp-server-time"], disabled=True)]


def test_vscode_mcp_json_with_types_and_inputs() -> None:
    events = HttpServerConfig("events", "https://example.invalid/sse", transport="sse")
    assert parse_snippet(VSCODE_MCP_JSON) == [TIME, REMOTE, events]


def test_vscode_settings_json_section_with_comments_and_trailing_commas() -> None:
    text = """{
        // VS Code user settings
        "editor.fontSize": 14,
        "mcp": {
            "servers": {
                "time": {"command": "uvx", "args": ["mcp-server-time",],}, /* trailing */
            },
        },
    }"""
    assert parse_snippet(text) == [TIME]


def test_a_bare_map_of_entries() -> None:
    text = json.dumps(
        {
            "github": {"command": "npx", "args": GITHUB.args, "env": GITHUB.env},
            "time": {"command": "uvx", "args": ["mcp-server-time"]},
        }
    )
    assert parse_snippet(text) == [GITHUB, TIME]


def test_a_readme_fragment_without_braces_and_with_a_trailing_comma() -> None:
    assert parse_snippet(README_FRAGMENT) == [GITHUB]
    two = (
        '"time": {"command": "uvx", "args": ["mcp-server-time"]},\n'
        '"remote": {"url": "https://example.invalid/mcp", "headers": {"Authorization": "Bearer FAKE"}},\n'
    )
    assert parse_snippet(two) == [TIME, REMOTE]
    assert parse_snippet('"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}') == [TIME]


def test_a_markdown_code_fence_around_the_paste() -> None:
    assert parse_snippet("```json\n" + CLAUDE_DESKTOP + "\n```\n") == [GITHUB, TIME]


def test_one_bare_entry_needs_a_name() -> None:
    entry = '{"command": "uvx", "args": ["mcp-server-time"]}'
    with pytest.raises(SnippetError) as caught:
        parse_snippet(entry)
    assert caught.value.needs_name
    assert str(caught.value) == (
        'pasted text: this is one server without a name: give it a name, or paste it as "name": {…}'
    )
    assert parse_snippet(entry, name="time") == [TIME]
    # A fragment of one entry's fields, as copied from the middle of a README's JSON.
    assert parse_snippet('"command": "uvx", "args": ["mcp-server-time"],', name="time") == [TIME]
    assert parse_snippet('{"url": "https://example.invalid/sse", "type": "sse"}', name="s") == [
        HttpServerConfig("s", "https://example.invalid/sse", transport="sse")
    ]


def test_the_name_argument_does_not_rename_named_servers() -> None:
    assert parse_snippet(CLAUDE_DESKTOP, name="other") == [GITHUB, TIME]


def test_a_server_named_like_a_field_is_a_server() -> None:
    # {"command": {...}} is a map with a server named "command", not a bare entry.
    assert parse_snippet('{"command": {"command": "uvx"}}') == [StdioServerConfig("command", "uvx")]


def test_servers_are_exactly_what_the_config_file_reads() -> None:
    document = json.loads(CLAUDE_DESKTOP)
    assert parse_snippet(CLAUDE_DESKTOP) == list(parse_config(json.dumps(document), "c.json").servers.values())


# Every error message --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "pasted text: nothing to read: the pasted text is empty"),
        ("  \n```json\n```\n", "pasted text: nothing to read: the pasted text is empty"),
        (
            '{"mcpServers": {"a": {"command": "x" "args": []}}}',
            "pasted text:1:38: invalid JSON: Expecting ',' delimiter",
        ),
        ('{\n  "mcpServers": {\n    "a": {"command": \n', "pasted text:4:1: invalid JSON: Expecting value"),
        # A fragment's syntax error is reported where it is in the pasted text, not in the wrapped one.
        ('"a": {"command": "x" "args": []}', "pasted text:1:22: invalid JSON: Expecting ',' delimiter"),
        ('"a": {\n  "command": "x",\n  "args": [1 2]\n}', "pasted text:3:14: invalid JSON: Expecting ',' delimiter"),
        (
            "[]",
            'pasted text: no servers found in the pasted text: expected {"mcpServers": {…}}, {"servers": {…}}, '
            '"name": {"command": …} or one server {"command": …}, got array',
        ),
        (
            '{"globalShortcut": "Ctrl+Space", "theme": "dark"}',
            'pasted text: no servers found in the pasted text: expected {"mcpServers": {…}}, {"servers": {…}}, '
            '"name": {"command": …} or one server {"command": …} (its keys: globalShortcut, theme)',
        ),
        ('{"mcpServers": {}}', "pasted text: no servers found in the pasted text: its mcpServers is empty"),
        ('{"servers": {}, "inputs": []}', "pasted text: no servers found in the pasted text: its servers is empty"),
        ('{"mcpServers": []}', "pasted text:1:16: mcpServers: expected an object of servers, got array"),
        (
            '{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}',
            "pasted text:1:40: mcpServers.a: server 'a' appears twice; keep one (the paste would lose the other)",
        ),
        (
            '{"a": {"command": "x", "env": {"K": "1", "K": "2"}}}',
            "pasted text:1:42: a.env.K: key appears twice; keep one (the paste would lose the other)",
        ),
        (
            '{"mcpServers": {"a": {"command": "x"}}, "servers": {"a": {"command": "y"}}}',
            "pasted text:1:53: servers.a: also defined in mcpServers",
        ),
    ],
)
def test_errors_are_one_line_with_the_place(text: str, message: str) -> None:
    with pytest.raises(SnippetError) as caught:
        parse_snippet(text)
    assert str(caught.value) == message
    assert "\n" not in str(caught.value)
    assert not caught.value.needs_name


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # The config file's own messages and key paths, placed in the pasted text.
        (
            '{"mcpServers": {\n  "a": {"command": "x", "args": ["ok", 3]}\n}}',
            "pasted text:2:40: mcpServers.a.args[1]: expected a string, got number",
        ),
        (
            '{"servers": {"w": {"type": "websocket", "url": "wss://x"}}}',
            "pasted text:1:28: servers.w.type: unknown server type 'websocket' (expected stdio, http or sse)",
        ),
        (
            '{"mcp": {"servers": {"f": {"url": "ftp://example.invalid"}}}}',
            "pasted text:1:35: mcp.servers.f.url: expected an http:// or https:// URL",
        ),
        ('{"a": {"args": ["x"]}}', 'pasted text:1:7: a: needs "command" (stdio) or "url" (http)'),
        ('{"a": {"type": "stdio"}}', "pasted text:1:7: a: type 'stdio' needs \"command\""),
        ('{"a": {"command": "x"}, "b": "npx server"}', "pasted text:1:30: b: expected an object, got string"),
        ('{"": {"command": "x"}}', 'pasted text:1:2: [""]: server name must not be empty'),
        (
            '{"a": {"command": "x", "disabled": "yes"}}',
            "pasted text:1:36: a.disabled: expected true or false, got string",
        ),
        (
            '{"a": {"command": "x", "startTimeout": -1}}',
            "pasted text:1:40: a.startTimeout: expected a positive number, got -1",
        ),
        ('{"a b": {"command": 1}}', 'pasted text:1:21: ["a b"].command: expected a string, got number'),
        # In a fragment: the line and column of the pasted text.
        (
            '"a": {\n  "command": "x",\n  "args": [true]\n},',
            "pasted text:3:12: a.args[0]: expected a string, got boolean",
        ),
    ],
)
def test_invalid_entries_read_as_config_errors(text: str, message: str) -> None:
    with pytest.raises(SnippetError) as caught:
        parse_snippet(text)
    assert str(caught.value) == message


def test_a_named_bare_entry_reports_its_own_keys() -> None:
    with pytest.raises(SnippetError) as caught:
        parse_snippet('{"command": "npx",\n "args": [2]}', name="mine")
    assert str(caught.value) == "pasted text:2:11: args[0]: expected a string, got number"
    with pytest.raises(SnippetError) as caught:
        parse_snippet('{"type": "http", "headers": {}}', name="mine")
    assert str(caught.value) == "pasted text:1:1: type 'http' needs \"url\""
    with pytest.raises(SnippetError) as caught:  # a name that needs quoting in key paths
        parse_snippet('{"command": "npx", "env": {"A": 1}}', name="my server")
    assert str(caught.value) == "pasted text:1:33: env.A: expected a string, got number"


def test_the_error_fields_are_set() -> None:
    with pytest.raises(SnippetError) as caught:
        parse_snippet('{"a": {"command": 5}}')
    error = caught.value
    assert isinstance(error, ValueError)
    assert (error.key, error.reason, error.line, error.column) == ("a.command", "expected a string, got number", 1, 19)


# Nothing lost, nothing echoed -----------------------------------------------------------------------


def test_nothing_is_lost_many_servers_in_order() -> None:
    servers = {f"s{i:02}": {"command": "x", "args": [str(i)]} for i in range(40)}
    result = parse_snippet(json.dumps({"mcpServers": servers}))
    assert [s.name for s in result] == list(servers)
    assert [s.args for s in result if isinstance(s, StdioServerConfig)] == [[str(i)] for i in range(40)]


def test_one_bad_entry_fails_the_whole_paste_rather_than_dropping_it() -> None:
    text = json.dumps({"mcpServers": {"good": {"command": "x"}, "bad": {"command": "x", "args": "not a list"}}})
    with pytest.raises(SnippetError, match=r"mcpServers\.bad\.args: expected an array of strings, got string"):
        parse_snippet(text)


SECRET = "ghp_S3CRET_VALUE_THAT_MUST_NOT_SHOW"


@pytest.mark.parametrize(
    "text",
    [
        '{"mcpServers": {"a": {"command": "x", "env": {"TOKEN": "' + SECRET + '" "B": 1}}}}',
        '{"mcpServers": {"a": {"command": "x", "env": {"TOKEN": "' + SECRET + '", "N": 5}}}}',
        '{"a": {"url": "https://x/mcp", "headers": {"Authorization": ["' + SECRET + '"]}}}',
        '{"a": {"url": "' + SECRET + '"}}',
        '{"a": {"command": "x", "env": {"TOKEN": "' + SECRET + '", "TOKEN": "' + SECRET + '"}}}',
        '"a": {"command": "x", "env": {"TOKEN": "' + SECRET + '"}',
        '{"' + "x" * 3 + '": "' + SECRET + '"}',
    ],
)
def test_secrets_are_not_echoed_in_errors(text: str) -> None:
    with pytest.raises(SnippetError) as caught:
        parse_snippet(text)
    assert SECRET not in str(caught.value)
    assert "S3CRET" not in repr(caught.value.args)


# The lenient JSON reader ----------------------------------------------------------------------------


def test_clean_jsonc_keeps_offsets_and_strings() -> None:
    text = '{\n  // a comment\n  "url": "http://x//y", /* block\n comment */ "a": [1, 2,],\n}'
    clean = clean_jsonc(text)
    assert len(clean) == len(text)
    assert [i for i, c in enumerate(clean) if c == "\n"] == [i for i, c in enumerate(text) if c == "\n"]
    assert json.loads(clean) == {"url": "http://x//y", "a": [1, 2]}
    assert clean_jsonc('{"a": "x\\",", "b": "/*not*/"}') == '{"a": "x\\",", "b": "/*not*/"}'
    assert json.loads(clean_jsonc('\ufeff{"a": 1}')) == {"a": 1}
