from __future__ import annotations

from mcpmanager.core.catalogue.call_templates import call_template, optional_parameters
from mcpmanager.core.proxy.meta_tools import argument, limit_of, tool_arguments

SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "due": {"type": "string", "format": "date"},
        "when": {"type": "string", "format": "date-time"},
        "count": {"type": "integer"},
        "ratio": {"type": ["number", "null"]},
        "draft": {"type": "boolean"},
        "state": {"type": "string", "enum": ["open", "closed", "all"]},
        "labels": {"type": "array", "items": {"type": "string"}},
        "owner": {
            "type": "object",
            "properties": {"login": {"type": "string"}, "id": {"type": "integer"}, "note": {"type": "string"}},
            "required": ["login", "id"],
        },
        "body": {"type": "string"},
        "maybe": {"anyOf": [{"type": "null"}, {"type": "integer"}]},
    },
    "required": ["title", "due", "when", "count", "ratio", "draft", "state", "labels", "owner", "maybe"],
}


def test_template_has_a_placeholder_per_required_argument() -> None:
    template = call_template("github__create_issue", SCHEMA)
    assert template == {
        "tool_name": "github__create_issue",
        "arguments": {
            "title": "<title>",
            "due": "<YYYY-MM-DD>",
            "when": "<YYYY-MM-DDTHH:MM:SSZ>",
            "count": 0,
            "ratio": 0,
            "draft": False,
            "state": "<open|closed|all>",
            "labels": ["<label>"],
            "owner": {"login": "<login>", "id": 0},
            "maybe": 0,
        },
    }
    assert optional_parameters(SCHEMA) == ["body"]


def test_nested_objects_stop_after_one_level_and_bad_schemas_are_tolerated() -> None:
    deep = {
        "type": "object",
        "properties": {"a": {"type": "object", "properties": {"b": {"type": "object"}}, "required": ["b"]}},
        "required": ["a"],
    }
    assert call_template("t", deep)["arguments"] == {"a": {"b": {}}}
    assert call_template("t", None)["arguments"] == {}
    assert call_template("t", {"required": "oops"})["arguments"] == {}
    assert optional_parameters({"properties": "x"}) == []


def test_meta_tool_argument_variants() -> None:
    assert argument({"toolName": "x"}, "tool_name") == "x"
    assert argument({"tool": "x"}, "tool_name") == "x"
    assert argument({"q": "find"}, "query") == "find"
    assert tool_arguments({"args": {"a": 1}}) == ({"a": 1}, None)
    assert tool_arguments({"parameters": '{"a": 1}'}) == ({"a": 1}, None)
    assert tool_arguments({}) == ({}, None)
    value, problem = tool_arguments({"arguments": "not json"})
    assert value is None and problem is not None and "not JSON" in problem
    value, problem = tool_arguments({"arguments": [1]})
    assert value is None and problem == "'arguments' must be an object, got list"
    assert limit_of({"limit": "3"}, 5) == 3
    assert limit_of({"limit": 999}, 5) == 25
    assert limit_of({"limit": "x"}, 5) == 5
    assert limit_of(None, 5) == 5
