"""Tool-name resolution: the ladder, its safety rules and the "did you mean" text, on a small catalogue."""

from __future__ import annotations

from typing import Any

import pytest

from mcpmanager.core.catalogue import Catalogue
from mcpmanager.core.config import ToolSettings
from mcpmanager.core.discovery import Discovery
from mcpmanager.core.resolve.messages import miss_text
from mcpmanager.core.resolve.names import NameResolver, Resolution
from mcpmanager.core.search.index import SearchIndex


def tool(name: str, description: str = "", **extra: Any) -> dict[str, Any]:
    return {"name": name, "description": description, "inputSchema": {"type": "object"}, **extra}


DESTRUCTIVE = {"destructiveHint": True, "readOnlyHint": False}
SERVERS = {
    "github": [
        tool("create_issue", "Create a new issue in a repository"),
        tool("get_issue", "Get one issue of a repository"),
        tool("list_issues", "List the issues of a repository"),
        tool("search_repositories", "Search GitHub repositories"),
        tool("list_commits", "List the commits of a branch"),
    ],
    "filesystem": [
        tool("read_file", "Read a file"),
        tool("write_file", "Write a file, replacing its content", annotations=DESTRUCTIVE),
        tool("delete_file", "Delete a file"),
        tool("list_directory", "List a directory"),
    ],
    "desktop-commander": [tool("read_file", "Read a file or a URL"), tool("start_process", "Run a command")],
    "sqlite": [tool("read_query", "Run a SELECT query"), tool("write_query", "Run an INSERT or UPDATE")],
    "playwright": [tool("playwright_navigate", "Open a URL in the browser")],
    "convert": [tool("html_to_markdown", "Convert HTML to Markdown")],
}


def catalogue(settings: dict[str, ToolSettings] | None = None) -> Catalogue:
    built = Catalogue()
    built.load(SERVERS)
    built.configure(list(SERVERS), settings or {})
    return built


def resolver(settings: dict[str, ToolSettings] | None = None) -> NameResolver:
    built = catalogue(settings)
    discovery = Discovery(built, SearchIndex())
    return NameResolver(built.tools(), discovery.search_names)


@pytest.fixture(scope="module")
def names() -> NameResolver:
    return resolver()


def resolved(names: NameResolver, called: str) -> tuple[str | None, str | None]:
    result = names.resolve(called)
    return (result.tool.key if result.tool else None), result.how


@pytest.mark.parametrize(
    ("called", "key", "how"),
    [
        ("create_issue", "github:create_issue", "exact"),
        ("filesystem__read_file", "filesystem:read_file", "exact"),
        ("github:create_issue", "github:create_issue", "namespaced"),
        ("github/get_issue", "github:get_issue", "namespaced"),
        ("GitHub.list_issues", "github:list_issues", "namespaced"),
        ("desktop-commander:read_file", "desktop-commander:read_file", "namespaced"),
        ("desktop_commander__read_file", "desktop-commander:read_file", "namespaced"),
        ("createIssue", "github:create_issue", "normalized"),
        ("CREATE-ISSUE", "github:create_issue", "normalized"),
        ("createissue", "github:create_issue", "normalized"),
        ("create_issues", "github:create_issue", "normalized"),
        ("issue_create", "github:create_issue", "normalized"),
        ("GitHub.createIssue", "github:create_issue", "normalized"),
        ("mcp__github__create_issue", "github:create_issue", "normalized"),
        ("functions.create_issue", "github:create_issue", "normalized"),
        ("filesystem.readFile", "filesystem:read_file", "normalized"),
        ("navigate", "playwright:playwright_navigate", "normalized"),
        ("deleteFile", "filesystem:delete_file", "normalized"),  # a spelling: exact words, no guess
        ("create_isue", "github:create_issue", "fuzzy"),
        ("creat_issue", "github:create_issue", "fuzzy"),
        ("fetch_issue", "github:get_issue", "fuzzy"),
        ("search_repos", "github:search_repositories", "fuzzy"),
        ("github_list_comits", "github:list_commits", "fuzzy"),
        ("run_process", "desktop-commander:start_process", None),  # run≠start: no guess
    ],
)
def test_the_ladder(names: NameResolver, called: str, key: str, how: str | None) -> None:
    if how is None:
        assert resolved(names, called)[0] is None
    else:
        assert resolved(names, called) == (key, how)


@pytest.mark.parametrize(
    ("called", "why"),
    [
        ("read_file", "a bare name on two servers"),
        ("readFile", "a spelling of a name on two servers"),
        ("sqlite_query", "read_query and write_query answer it equally"),
        ("delete_issue", "another action than every issue tool"),
        ("remove_file", "only a destructive tool is close"),
        ("delete_fil", "a typo onto a destructive tool"),
        ("update_file", "write_file is destructive by annotation"),
        ("issue", "a name without a verb is no licence to write"),
        ("markdown_to_html", "the other direction"),
        ("send_email", "no such tool"),
        ("", "nothing called"),
    ],
)
def test_must_not_resolve(names: NameResolver, called: str, why: str) -> None:
    assert resolved(names, called) == (None, None), why


def test_an_ambiguous_name_lists_its_candidates(names: NameResolver) -> None:
    result = names.resolve("read_file")
    assert {t.key for t in result.ambiguous} == {"filesystem:read_file", "desktop-commander:read_file"}
    assert list(result.suggestions[:2]) == ["filesystem__read_file", "desktop-commander__read_file"]  # config order
    text = miss_text(result)
    assert text.startswith("Ambiguous tool name 'read_file': it may be filesystem__read_file [filesystem] or")
    assert "desktop-commander__read_file [desktop-commander]" in text and 'discover_tools("read file")' in text
    query = names.resolve("sqlite_query")
    assert {t.name for t in query.ambiguous} == {"read_query", "write_query"}


def test_a_withheld_guess_is_named_with_the_reason(names: NameResolver) -> None:
    result = names.resolve("remove_file")
    assert result.withheld is not None and result.withheld.key == "filesystem:delete_file"
    assert result.withheld_why == "destructive"
    text = miss_text(result)
    assert text.startswith("Unknown tool 'remove_file'. The closest is delete_file, but it can destroy data")
    other = names.resolve("delete_issue")
    assert other.tool is None and other.withheld is None  # nothing is clearly closest
    assert "create_issue" in other.suggestions or "get_issue" in other.suggestions


def test_unknown_names_get_suggestions_from_names_and_search(names: NameResolver) -> None:
    result = names.resolve("open_webpage")
    assert result.tool is None
    assert "playwright_navigate" in result.suggestions[:3]  # only the search (description) finds it
    assert miss_text(result).endswith('Or call discover_tools("open webpage").')
    assert miss_text(names.resolve("zzqx")) == "Unknown tool 'zzqx'. Or call discover_tools(\"zzqx\")."


def test_aliases_resolve_and_never_shadow_an_exposed_name() -> None:
    settings = {
        "github:create_issue": ToolSettings(aliases=["open_issue", "get_issue"]),
        "github:get_issue": ToolSettings(aliases=["issue"]),
        "github:list_issues": ToolSettings(aliases=["issue"]),
    }
    names = resolver(settings)
    assert resolved(names, "open_issue") == ("github:create_issue", "alias")
    assert resolved(names, "get_issue") == ("github:get_issue", "exact")
    both = names.resolve("issue")
    assert both.tool is None and {t.name for t in both.ambiguous} == {"get_issue", "list_issues"}


def test_a_server_prefix_decides_between_clashing_tools(names: NameResolver) -> None:
    assert resolved(names, "desktopCommander.readFile") == ("desktop-commander:read_file", "normalized")
    assert resolved(names, "filesystem_read_fil") == ("filesystem:read_file", "fuzzy")


def test_no_false_resolution_across_a_large_catalogue() -> None:
    """Spellings of one tool stay with it among hundreds of similar names."""
    many = {f"s{i}": [tool(f"get_item_{i}"), tool(f"list_items_{i}")] for i in range(200)}
    built = Catalogue()
    built.load(many)
    built.configure(list(many), {})
    names = NameResolver(built.tools())
    assert resolved(names, "getItem_17") == ("s17:get_item_17", "normalized")
    assert resolved(names, "s17_get_item") == (None, None)  # which of 200 servers' get_item? none named so
    assert isinstance(names.resolve("get_item"), Resolution)
