"""The quick yes (`plain_schema`) never says yes where jsonschema would say no: checked on every
published tool schema we hold, with values of every JSON type for every parameter, names missing and
names added. And it does say yes to the plain calls it is there for."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from mcpmanager.core.resolve.arguments import ArgumentChecker, CheckedArguments
from mcpmanager.core.resolve.plain_schema import compile_plain

CATALOGUES = Path(__file__).parents[2] / "data" / "catalogues"
PALETTE: list[Any] = ["text", "", 0, 7, -1, 1.0, 2.5, True, False, None, [], ["a"], {}, {"k": 1}]
ECHO = {
    "type": "object",
    "properties": {"text": {"type": "string", "description": "What to say"}},
    "required": ["text"],
}


def schemas() -> list[dict[str, Any]]:
    found = []
    for name in ("published.json", "livemcpbench.json"):
        tools = json.loads((CATALOGUES / name).read_text(encoding="utf-8"))
        found += [t["inputSchema"] for t in tools if isinstance(t.get("inputSchema"), dict)]
    return found


def argument_sets(schema: dict[str, Any]) -> Iterator[dict[str, Any]]:
    properties = list(schema.get("properties") or {})
    required = [r for r in schema.get("required") or [] if isinstance(r, str)]
    for value in PALETTE:  # every parameter given the same value
        yield dict.fromkeys(properties, value)
        yield dict.fromkeys(required, value)
    for name in properties:  # one parameter at a time, with every value
        for value in PALETTE:
            yield {**dict.fromkeys(required, "text"), name: value}
    for name in required:  # one required name missing
        yield {r: "text" for r in required if r != name}
    yield {**dict.fromkeys(required, "text"), "not_declared_anywhere": 1}


def jsonschema_accepts(schema: dict[str, Any], arguments: dict[str, Any]) -> bool:
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return not any(True for _ in cls(schema).iter_errors(arguments))


def test_a_yes_is_never_a_call_jsonschema_refuses() -> None:
    plain = yes = 0
    for schema in schemas():
        try:
            jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator).check_schema(schema)
        except jsonschema.exceptions.SchemaError:
            continue  # (no validator: nothing is validated either way)
        compiled = compile_plain(schema)
        if compiled is None:
            continue
        plain += 1
        for arguments in argument_sets(schema):
            if compiled.fits(arguments):
                yes += 1
                assert jsonschema_accepts(schema, arguments), (schema, arguments)
    # The quick path is taken for real catalogues, not only for our echo tool.
    assert plain >= 200 and yes >= 2000, (plain, yes)


@pytest.mark.parametrize(
    ("schema", "arguments"),
    [
        (ECHO, {"text": "hi"}),
        (ECHO, {"text": "hi", "extra": 1}),  # (additional names allowed by default)
        ({"type": "object", "properties": {"n": {"type": ["integer", "null"]}}}, {"n": None}),
        ({"type": "object", "properties": {"n": {"type": "number"}}}, {"n": 3}),
        ({"type": "object", "properties": {"x": {"description": "anything"}}}, {"x": [1, {"a": None}]}),
        ({"type": "object"}, {}),
    ],
)
def test_plain_calls_get_the_quick_yes(schema: dict[str, Any], arguments: dict[str, Any]) -> None:
    compiled = compile_plain(schema)
    assert compiled is not None and compiled.fits(arguments)


@pytest.mark.parametrize(
    ("schema", "arguments"),
    [
        (ECHO, {}),  # missing
        (ECHO, {"text": 3}),
        ({"type": "object", "properties": {"n": {"type": "integer"}}}, {"n": True}),  # a bool is no integer
        ({"type": "object", "properties": {"n": {"type": "integer"}}}, {"n": 1.0}),  # the draft decides
        ({**ECHO, "additionalProperties": False}, {"text": "hi", "extra": 1}),
    ],
)
def test_anything_else_is_left_to_jsonschema(schema: dict[str, Any], arguments: dict[str, Any]) -> None:
    compiled = compile_plain(schema)
    assert compiled is not None and not compiled.fits(arguments)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"s": {"type": "string", "format": "uri"}}},
        {"type": "object", "properties": {"s": {"enum": ["a", "b"]}}},
        {"type": "object", "properties": {"s": {"type": "string", "minLength": 1}}},
        {"type": "object", "properties": {"s": {"$ref": "#/$defs/s"}}, "$defs": {"s": {"type": "string"}}},
        {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object", "properties": {}},
        {"type": "object", "properties": {}, "additionalProperties": {"type": "string"}},
        {"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}]},
        {"type": "array"},
    ],
)
def test_schemas_that_say_more_are_not_plain(schema: dict[str, Any]) -> None:
    assert compile_plain(schema) is None


def test_the_checker_answers_as_before_on_both_sides_of_the_quick_path() -> None:
    checker = ArgumentChecker()
    spec = {"name": "say", "inputSchema": ECHO}
    assert checker.check("s:say", "say", spec, {"text": "hi"}).arguments == {"text": "hi"}
    refused = checker.check("s:say", "say", spec, {"text": 3})
    assert refused.refused and refused.problems == ("'text': 3 is not of type 'string'",)
    assert checker.fits("s:say", spec, {"text": "hi"}) and not checker.fits("s:say", spec, {"text": 3})


@pytest.mark.parametrize("draft", [5, ["x"], {"x": 1}])
def test_a_schema_naming_its_draft_with_no_string_is_the_server_s_to_judge(
    draft: object, caplog: pytest.LogCaptureFixture
) -> None:
    """Found in review: jsonschema cannot look up such a `$schema` and raised on every call to the
    tool. Such a schema is invalid (`$schema` is a URI), and an invalid schema is the server's to
    judge, as every other one is (docs/resolution.md): the arguments go through as they are."""
    checker = ArgumentChecker()
    spec = {"name": "say", "inputSchema": {**ECHO, "$schema": draft}}
    assert checker.check("s:say", "say", spec, {"text": 3}) == CheckedArguments({"text": 3})
    assert "not validating arguments of s:say: invalid inputSchema" in caplog.text
