"""Tool-name resolution: the ladder, its safety rules and the "did you mean" text, on a small catalogue."""

from __future__ import annotations

from typing import Any

import pytest

from mcpmanager.core.catalogue.catalogue import Catalogue
from mcpmanager.core.config.settings import ToolSettings
from mcpmanager.core.proxy.discovery import Discovery
from mcpmanager.core.resolve.messages import miss_text
from mcpmanager.core.resolve.names import NameResolver, Resolution
from mcpmanager.core.resolve.resolver import Resolver
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
    # Nothing before the next step: no "Or". In direct mode (no discover_tools to call) no next step.
    assert miss_text(names.resolve("zzqx")) == "Unknown tool 'zzqx'. Find one with discover_tools(\"zzqx\")."
    assert miss_text(names.resolve("zzqx"), search=False) == "Unknown tool 'zzqx'."
    assert "discover_tools" not in miss_text(result, search=False)


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


def schema(*params: str) -> dict[str, Any]:
    return {"type": "object", "properties": {p: {"type": "string"} for p in params}, "required": list(params)}


# Near-equal tools the way real servers have them (hackernews, weather, wuwa-mcp, sitemap, yahoo-finance
# beside yfmcp, bing beside duckduckgo): which one a short or wordier name means, it cannot say.
SIBLINGS = {
    "hackernews": [
        tool("getStoryWithComments", "Get a story with its comments", inputSchema=schema("id")),
        tool("getComments", "Get comments for a story", inputSchema=schema("storyId")),
        tool("getStory", "Get a story", inputSchema=schema("id")),
    ],
    "weather": [
        tool("get_weather", "Current weather at coordinates", inputSchema=schema("latitude", "longitude")),
        tool("get_weather_by_city", "Current weather in a city", inputSchema=schema("city")),
    ],
    "wiki": [
        tool("get_character_info", "A character's details"),
        tool("get_character_profile", "A character's profile"),
    ],
    "sitemap": [tool("get_sitemap_tree"), tool("get_sitemap_pages"), tool("get_sitemap_stats")],
    "yahoo-finance": [tool("get_historical_stock_prices")],
    "yfmcp": [tool("get_price_history")],
    "bing-cn": [tool("bing_search", "必应搜索")],
    "duckduckgo-search": [tool("duckduckgo_web_search", "Search the web with DuckDuckGo")],
    "jira": [tool("jira_search_fields"), tool("jira_search", inputSchema=schema("jql", "fields"))],
}


@pytest.fixture(scope="module")
def siblings() -> NameResolver:
    built = Catalogue()
    built.load(SIBLINGS)
    built.configure(list(SIBLINGS), {})
    return NameResolver(built.tools(), Discovery(built, SearchIndex()).search_names)


@pytest.mark.parametrize(
    ("called", "candidates", "why"),
    [
        ("get_story_comments", {"getStoryWithComments", "getComments"}, "getComments(storyId) says the story"),
        ("get_current_weather", {"get_weather", "get_weather_by_city"}, "by coordinates or by city"),
        ("get_character_details", {"get_character_info", "get_character_profile"}, "details is info or profile"),
        ("get_historical_prices", {"get_historical_stock_prices", "get_price_history"}, "historical = history"),
        ("web_search", {"duckduckgo_web_search", "bing_search"}, "bing is a web search engine"),
    ],
)
def test_near_equal_siblings_are_ambiguous(siblings: NameResolver, called: str, candidates: set[str], why: str) -> None:
    result = siblings.resolve(called)
    assert result.tool is None, why
    assert candidates <= {t.name for t in result.ambiguous} | set(result.suggestions[:3]), why


def test_a_verb_like_last_word_is_the_thing_a_tool_is_about(siblings: NameResolver) -> None:
    # `stats` could be a verb, but at the end of `get_sitemap_stats` it is a thing, as `tree` is.
    result = siblings.resolve("get_sitemap")
    assert result.tool is None
    assert {"get_sitemap_tree", "get_sitemap_pages", "get_sitemap_stats"} <= set(result.suggestions)


def test_siblings_rules_leave_clear_names_alone(siblings: NameResolver) -> None:
    assert resolved(siblings, "getStoryWithComment") == ("hackernews:getStoryWithComments", "normalized")
    assert resolved(siblings, "get_wether") == ("weather:get_weather", "fuzzy")
    assert resolved(siblings, "get_weathr_by_city") == ("weather:get_weather_by_city", "fuzzy")
    # A parameter does not stand in for the thing a call is about: `jira_search(fields)` is not it.
    assert resolved(siblings, "search_fields_jira") == ("jira:jira_search_fields", "normalized")
    assert resolved(siblings, "jira_search_field") == ("jira:jira_search_fields", "normalized")
    # The brand named, the engine is chosen: `web` is only one way, `bing` is not `web`.
    assert resolved(siblings, "bing_web_search") == ("bing-cn:bing_search", "fuzzy")
    assert resolved(siblings, "duckduckgo_search") == ("duckduckgo-search:duckduckgo_web_search", "fuzzy")


def test_arguments_settle_a_name_only_when_one_candidate_takes_them() -> None:
    servers = {
        "weather": SIBLINGS["weather"],
        "sqlite": [
            tool("read_query", inputSchema=schema("query")),
            tool("write_query", inputSchema=schema("query")),
        ],
        "tmp": [tool("cleanup", inputSchema=schema("path"), annotations=DESTRUCTIVE)],
        "logs": [tool("cleanup", inputSchema={"type": "object", "properties": {"days": {"type": "integer"}}})],
    }
    built = Catalogue()
    built.load(servers)
    built.configure(list(servers), {})
    resolver = Resolver(built)

    by_city = resolver.plan("get_current_weather", {"city": "Oslo"})
    assert by_city.tool is not None and by_city.tool.name == "get_weather_by_city"
    assert by_city.resolution.how == "arguments" and by_city.arguments == {"city": "Oslo"}
    by_place = resolver.plan("get_current_weather", {"latitude": "60", "longitude": "11"})
    assert by_place.tool is not None and by_place.tool.name == "get_weather"
    # Nothing either takes as it is, or no arguments at all: still ambiguous.
    assert resolver.plan("get_current_weather", {"town": "Oslo"}).error is not None
    assert resolver.plan("get_current_weather", None).tool is None
    # Both take `query`: the arguments settle nothing (the safety rules must not settle it either).
    query = resolver.plan("sqlite_query", {"query": "select 1"})
    assert query.tool is None and query.error is not None and query.error.startswith("Ambiguous tool name")
    # One candidate takes them, but it destroys: only its exact exposed name calls it.
    assert resolver.plan("cleanup", {"path": "/"}).tool is None
    logs = resolver.plan("cleanup", {"days": 3})
    assert logs.tool is not None and logs.tool.key == "logs:cleanup" and logs.arguments == {"days": 3}


def test_a_call_naming_a_server_whose_tools_are_unknown_is_not_put_on_another_servers_tool() -> None:
    """`github_create_issue` while GitHub is starting or down is not GitLab's `create_issue`; once
    GitHub's tools are known the name resolves as ever, and a server that is not configured is only
    a word (the respelling stands)."""
    built = Catalogue()
    built.load({"gitlab": [tool("create_issue", "Create a new issue in a GitLab project")]})
    built.configure(["github", "gitlab"], {})
    resolver = Resolver(built)

    for called in ("github_create_issue", "GitHub.createIssue", "github__create_isue"):
        refused = resolver.resolve(called)
        assert refused.tool is None and refused.suggestions[0] == "create_issue", called
    assert resolver.resolve("gitlab_create_isue").tool is not None  # the server it names

    built.configure(["gitlab"], {})  # github not configured: a word like any other
    assert resolver.resolve("github_create_issue").how == "fuzzy"

    built.configure(["github", "gitlab"], {})
    built.set_tools("github", [tool("create_issue", "Create an issue in a GitHub repository")], save=False)
    known = resolver.resolve("github_create_issue")
    assert known.tool is not None and known.tool.server == "github"


def test_a_verb_that_misspells_a_word_of_the_tool_is_that_word_unless_it_is_the_only_verb() -> None:
    """`git_diff_unstage` was refused for `git_diff_unstaged` ("another kind of thing": `unstage`
    read as a verb of its own); a call whose only verb it is still asks for that action."""
    built = Catalogue()
    built.load(
        {
            "git": [
                tool("git_diff_unstaged", "Shows changes in the working directory that are not yet staged"),
                tool("git_diff_staged", "Shows changes that are staged for commit"),
                tool("git_add", "Adds file contents to the staging area"),
            ],
            "files": [tool("deleted_files", "List the files deleted in the last day")],
        }
    )
    built.configure(["git", "files"], {})
    names = NameResolver(built.tools())
    assert resolved(names, "git_diff_unstage") == ("git:git_diff_unstaged", "fuzzy")
    assert resolved(names, "git_diff_stage") == ("git:git_diff_staged", "fuzzy")
    assert resolved(names, "delete_file")[0] != "files:deleted_files"
