"""Argument-name repair and validation: rename only what is clearly meant, refuse the rest, never
drop, guess or convert a value."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from mcpmanager.core.resolve.arguments import ArgumentChecker, CheckedArguments, refusal_text


def spec(properties: dict[str, Any], *required: str, **extra: Any) -> dict[str, Any]:
    return {"inputSchema": {"type": "object", "properties": properties, "required": list(required), **extra}}


STRING = {"type": "string"}
ISSUE = spec(
    {
        "owner": STRING,
        "repo": STRING,
        "title": STRING,
        "body": STRING,
        "labels": {"type": "array", "items": STRING},
        "per_page": {"type": "integer"},
    },
    "owner",
    "repo",
    "title",
)
SEARCH = spec({"query": STRING, "limit": {"type": "integer"}}, "query")
GIT = spec({"repo_path": STRING, "max_count": {"type": "integer"}}, "repo_path")
DELETE = spec({"issue_id": {"type": "integer"}, "parent_id": {"type": "integer"}}, "issue_id")
EDIT = spec({"path": STRING, "content": STRING}, "path", "content")


def check(tool: str, definition: dict[str, Any], arguments: dict[str, Any] | None, **aliases: str) -> CheckedArguments:
    return ArgumentChecker().check(f"s:{tool}", tool, definition, arguments, aliases)


@pytest.mark.parametrize(
    ("tool", "definition", "passed", "forwarded", "how"),
    [
        ("create_issue", ISSUE, {"Owner": "o", "repo": "r", "title": "t"}, {"owner": "o"}, "spelling"),
        ("create_issue", ISSUE, {"owner": "o", "repo": "r", "title": "t", "perPage": 5}, {"per_page": 5}, "spelling"),
        ("create_issue", ISSUE, {"owner": "o", "repo": "r", "title": "t", "label": []}, {"labels": []}, "spelling"),
        ("create_issue", ISSUE, {"owner": "o", "repo": "r", "issue_title": "t"}, {"title": "t"}, "context"),
        ("create_issue", ISSUE, {"owner": "o", "repository": "r", "title": "t"}, {"repo": "r"}, "synonym"),
        ("search", SEARCH, {"q": "mcp"}, {"query": "mcp"}, "synonym"),
        ("search", SEARCH, {"search_term": "mcp", "max_results": 3}, {"query": "mcp", "limit": 3}, "synonym"),
        ("git_log", GIT, {"repo": "/r"}, {"repo_path": "/r"}, "partial"),
        ("deploy", spec({"app_name": STRING}), {"app": "web"}, {"app_name": "web"}, "partial"),
        ("git_log", GIT, {"repoPath": "/r", "maxCount": 2}, {"repo_path": "/r", "max_count": 2}, "spelling"),
        ("close_ticket", spec({"ticket_id": STRING}), {"id": "T-1"}, {"ticket_id": "T-1"}, "context"),
        ("refund", spec({"payment_intent": STRING}), {"payment_intent_id": "pi_1"}, {"payment_intent": "pi_1"}, "id"),
        ("get_record", spec({"record_uuid": STRING}), {"identifier": "u"}, {"record_uuid": "u"}, "id"),
        ("edit_file", EDIT, {"file_path": "/a", "content": "x"}, {"path": "/a"}, "context"),
        ("edit", EDIT, {"file_path": "/a", "content": "x"}, {"path": "/a"}, "synonym"),
        ("edit_file", EDIT, {"target": "/a", "content": "x"}, {"path": "/a"}, "alias"),
    ],
)
def test_clear_renames_are_repaired(
    tool: str, definition: dict[str, Any], passed: dict[str, Any], forwarded: dict[str, Any], how: str
) -> None:
    aliases = {"target": "path"} if how == "alias" else {}
    result = check(tool, definition, passed, **aliases)
    assert result.arguments is not None, result.problems
    for name, value in forwarded.items():
        assert result.arguments[name] == value
    assert len(result.arguments) == len(passed)  # nothing dropped, nothing added
    assert sorted(map(repr, result.arguments.values())) == sorted(map(repr, passed.values()))  # values untouched
    assert how in {r.how for r in result.renames}


@pytest.mark.parametrize(
    ("tool", "definition", "passed", "problem"),
    [
        # Dropping it would overwrite the file instead of appending.
        ("edit_file", EDIT, {"path": "/a", "content": "x", "append": True}, "'append' is not a parameter of edit_file"),
        # `query` on a delete tool: not a filter it declares; dropping it would delete more.
        ("delete_issue", DELETE, {"issue_id": 1, "query": "label:old"}, "'query' is not a parameter"),
        # A bare `id` on a tool with two identifiers: which one, the name cannot say.
        ("delete_issue", DELETE, {"id": 7}, "it could be 'issue_id' or 'parent_id'"),
        # `id` could widen the delete to children: a bare id never maps onto another thing's id.
        ("delete_comments", spec({"parent_id": {"type": "integer"}}), {"id": 2}, "'id' is not a parameter"),
        # Two passed names for one parameter.
        ("search", SEARCH, {"q": "a", "question": "b"}, "several arguments could be 'query'"),
        # The target was passed too: the synonym has nowhere to go.
        ("search", SEARCH, {"query": "a", "q": "b"}, "'q' is not a parameter of search"),
        # One passed name, two equally likely parameters.
        ("search", spec({"query": STRING, "keywords": STRING}), {"q": "a"}, "it could be 'query' or 'keywords'"),
        # A qualifier turns the meaning around: `run` is not `dry_run`, `recursive` not `non_recursive`.
        ("deploy", spec({"dry_run": {"type": "boolean"}}), {"run": True}, "'run' is not a parameter"),
        ("rm", spec({"non_recursive": {"type": "boolean"}}), {"recursive": True}, "'recursive' is not"),
        # What a model calls `channel` may be a name (`#general`), not the id the tool wants.
        ("history", spec({"channel_id": STRING}), {"channel": "#general"}, "'channel' is not a parameter"),
        # Values are never converted or invented.
        ("search", SEARCH, {"query": "a", "limit": "5"}, "'limit': '5' is not of type 'integer'"),
        ("create_issue", ISSUE, {"owner": "o", "repo": "r"}, "missing required argument 'title'"),
        ("search", SEARCH, None, "missing required argument 'query'"),
        # A rename that only changes the name: the schema still rejects the value's shape.
        ("read_files", spec({"paths": {"type": "array"}}, "paths"), {"path": "/a"}, "'/a' is not of type 'array'"),
    ],
)
def test_what_cannot_be_mapped_safely_is_refused(
    tool: str, definition: dict[str, Any], passed: dict[str, Any] | None, problem: str
) -> None:
    result = check(tool, definition, passed)
    assert result.refused
    assert any(problem in line for line in result.problems), result.problems


def test_valid_arguments_pass_untouched() -> None:
    passed = {"owner": "o", "repo": "r", "title": "t", "labels": ["bug"]}
    result = check("create_issue", ISSUE, passed)
    assert result.arguments == passed and not result.renames and not result.problems


def test_open_schemas_take_any_name_and_are_still_validated() -> None:
    open_schema = spec({"name": STRING}, "name", additionalProperties=True)
    assert check("set_env", open_schema, {"name": "A", "FOO": "1"}).arguments == {"name": "A", "FOO": "1"}
    anything = {"inputSchema": {"type": "object"}}
    assert check("run", anything, {"whatever": 1}).arguments == {"whatever": 1}
    assert check("run", {}, {"x": 1}).arguments == {"x": 1}  # no schema at all: the server judges
    closed = {"inputSchema": {"type": "object", "additionalProperties": False}}
    assert check("ping", closed, {"x": 1}).refused
    assert check("set_env", open_schema, {"FOO": "1"}).refused  # its required name is missing


def test_a_broken_schema_is_not_used_and_says_so(caplog: pytest.LogCaptureFixture) -> None:
    broken = spec({"n": {"type": "integr"}})
    with caplog.at_level(logging.WARNING):
        result = check("count", broken, {"n": 1})
    assert result.arguments == {"n": 1}
    assert "not validating arguments of s:count: invalid inputSchema" in caplog.text


def test_the_refusal_lists_problems_parameters_and_a_template() -> None:
    result = check("create_issue", ISSUE, {"owner": "o", "repository": "r", "labelz": ["x"]})
    text = refusal_text("create_issue", ISSUE, result, via_call_tool=True)
    assert text.splitlines() == [
        "Not called: the arguments for 'create_issue' need fixing (nothing was sent to the server).",
        "- 'labelz' is not a parameter of create_issue (did you mean 'labels'?)",
        "- (read 'repository' as 'repo')",
        "Parameters: owner (string, required), repo (string, required), title (string, required), body (string), "
        "labels (array of string), per_page (integer)",
        'call_tool {"tool_name": "create_issue", "arguments": {"owner": "<owner>", "repo": "<repo>", '
        '"title": "<title>"}}',
    ]
    direct = refusal_text("create_issue", ISSUE, result, via_call_tool=False)
    assert direct.splitlines()[-1] == 'create_issue {"owner": "<owner>", "repo": "<repo>", "title": "<title>"}'


def test_long_values_are_cut_in_messages() -> None:
    result = check("search", SEARCH, {"query": "a", "limit": "9" * 5000})
    assert result.refused and all(len(line) < 200 for line in result.problems)


def test_a_validator_is_compiled_once_per_schema() -> None:
    checker = ArgumentChecker()
    for _ in range(3):
        checker.check("s:search", "search", SEARCH, {"query": "a"})
    first = checker._validators["s:search"][1]
    checker.check("s:search", "search", SEARCH, {"query": "b"})
    assert checker._validators["s:search"][1] is first
    changed = spec({"query": STRING}, "query")
    checker.check("s:search", "search", changed, {"query": "c"})
    assert checker._validators["s:search"][1] is not first  # the server's schema changed


@pytest.mark.parametrize(
    ("tool", "definition", "passed", "forwarded", "how"),
    [
        ("list_issues", spec({"state": STRING}), {"status": "closed"}, {"state": "closed"}, "synonym"),
        ("kubectl_logs", spec({"namespace": STRING}), {"ns": "default"}, {"namespace": "default"}, "synonym"),
        ("get_quote", spec({"symbol": STRING}), {"ticker": "AAPL"}, {"symbol": "AAPL"}, "synonym"),
        (
            "convert_time",
            spec({"source_timezone": STRING, "target_timezone": STRING}),
            {"from_timezone": "UTC", "to_timezone": "Asia/Tokyo"},
            {"source_timezone": "UTC", "target_timezone": "Asia/Tokyo"},
            "synonym",
        ),
        (
            "get_pull_request",
            spec({"pull_number": {"type": "integer"}}),
            {"pr_number": 7},
            {"pull_number": 7},
            "synonym",
        ),
        ("get_issue", spec({"issue_number": {"type": "integer"}}), {"issue": 7}, {"issue_number": 7}, "partial"),
        ("get_range", spec({"start_date": STRING}), {"start": "2024-01-01"}, {"start_date": "2024-01-01"}, "partial"),
        ("forecast", spec({"city": STRING}), {"cityName": "Oslo"}, {"city": "Oslo"}, "partial"),
        ("git_status", GIT, {"path": "/repo"}, {"repo_path": "/repo"}, "path"),
        ("getStories", spec({"type": STRING}), {"story_type": "top"}, {"type": "top"}, "context"),
    ],
)
def test_more_renames_that_keep_the_value(
    tool: str, definition: dict[str, Any], passed: dict[str, Any], forwarded: dict[str, Any], how: str
) -> None:
    result = check(tool, definition, passed)
    assert result.arguments == forwarded, result.problems
    assert how in {r.how for r in result.renames}


@pytest.mark.parametrize(
    ("tool", "definition", "passed", "problem"),
    [
        # A file's path read as the repository's would reset the whole repository.
        ("git_reset", GIT, {"path": "src/a.py"}, "'path' is not a parameter of git_reset"),
        # A path where two path parameters are declared: which one, the name cannot say.
        ("copy", spec({"source_path": STRING, "destination_path": STRING}), {"path": "/a"}, "'path' is not"),
        # A qualifier is never dropped from the passed name: `travel_mode` may not be the `mode` meant.
        ("directions", spec({"mode": STRING}), {"travel_mode": "driving"}, "'travel_mode' is not a parameter"),
        # Nor `id` onto one of two identifiers, even the one of the tool's own thing.
        (
            "do_get_object",
            spec({"namespaceId": STRING, "objectId": STRING}),
            {"namespaceId": "n", "id": "user-42"},
            "'id' is not a parameter",
        ),
    ],
)
def test_more_guesses_that_are_refused(
    tool: str, definition: dict[str, Any], passed: dict[str, Any], problem: str
) -> None:
    result = check(tool, definition, passed)
    assert result.refused
    assert any(problem in line for line in result.problems), result.problems
