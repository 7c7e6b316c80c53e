"""On a tool that can destroy data an argument is renamed only when the names surely say the same:
a spelling, an identifier onto the tool's one identifier (also with the tool's own thing in its
name), or two names of one synonym group. Any other reading changes a word, and a changed word may
change what the delete touches."""

from __future__ import annotations

from typing import Any

import pytest

from mcpmanager.core.resolve.arguments import ArgumentChecker


def spec(properties: dict[str, Any], *required: str) -> dict[str, Any]:
    return {"inputSchema": {"type": "object", "properties": properties, "required": list(required)}}


DOC = {"type": "string"}
INDEX = {"type": "integer"}


@pytest.mark.parametrize(
    ("name", "definition", "passed", "forwarded"),
    [
        ("delete_block", spec({"block_id": DOC}, "block_id"), {"id": "b1"}, {"block_id": "b1"}),
        ("delete_issue", spec({"issue_key": DOC}, "issue_key"), {"key": "P-1"}, {"issue_key": "P-1"}),
        ("delete_file", spec({"path": DOC}, "path"), {"file_path": "/a"}, {"path": "/a"}),
        ("delete_file", spec({"path": DOC}, "path"), {"Path": "/a"}, {"path": "/a"}),
    ],
)
def test_sure_renames_reach_a_tool_that_destroys(
    name: str, definition: dict[str, Any], passed: dict[str, Any], forwarded: dict[str, Any]
) -> None:
    checked = ArgumentChecker().check(f"s:{name}", name, definition, passed)
    assert checked.arguments == forwarded, checked.problems


@pytest.mark.parametrize(
    ("name", "definition", "passed"),
    [
        # `index` may count from 0 where the paragraph's own index counts from 1
        (
            "delete_paragraph",
            spec({"file": DOC, "paragraph_index": INDEX}, "file", "paragraph_index"),
            {"file": "a", "index": 3},
        ),
        ("delete_snippets", spec({"max_length": INDEX}, "max_length"), {"max_len": 3}),  # abbreviation
        ("delete_branch", spec({"repo_path": DOC}, "repo_path"), {"repo": "/r"}),  # partial
        ("delete_events", spec({"source_timezone": DOC}, "source_timezone"), {"from_timezone": "UTC"}),  # synonym
    ],
)
def test_a_rename_that_changes_a_word_is_refused_on_a_tool_that_destroys(
    name: str, definition: dict[str, Any], passed: dict[str, Any]
) -> None:
    checked = ArgumentChecker().check(f"s:{name}", name, definition, passed)
    assert checked.refused, checked.arguments
    # the same call on a tool that only reads is repaired: the refusal is the tool's doing
    reader = name.replace("delete", "get").replace("remove", "get")
    assert not ArgumentChecker().check(f"s:{reader}", reader, definition, passed).refused
