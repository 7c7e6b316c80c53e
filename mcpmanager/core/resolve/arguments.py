"""Arguments a model passed → the arguments to forward, or a refusal that says what to send instead.

Safety first (docs/architecture.md, Resolution): an argument is renamed onto a declared parameter only when that
parameter was not passed and the mapping is unambiguous (`param_names`, then the parameters'
descriptions and types: `described`, never on a tool that destroys); an argument that cannot be
mapped refuses the whole call — a dropped `append: true` overwrites a file, a dropped filter deletes
everything. Values are never invented, filled in or converted. The repaired arguments are validated
against the tool's inputSchema (jsonschema) before anything is sent; a refusal lists every problem,
the valid parameters and a call template.

Schemas that declare no properties, or allow additional ones, are taken at their word: such a tool
accepts names we cannot know, so its arguments are passed through (and still validated).
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import jsonschema
import jsonschema.exceptions
import jsonschema.protocols

from mcpmanager.core.catalogue.call_templates import call_template
from mcpmanager.core.resolve.actions import is_destructive, reads_only
from mcpmanager.core.resolve.described import described_match
from mcpmanager.core.resolve.param_names import ParamMatch, map_name
from mcpmanager.core.resolve.plain_schema import Plain, compile_plain
from mcpmanager.core.resolve.typed import typed_match
from mcpmanager.core.resolve.words import close_names, words

logger = logging.getLogger(__name__)

MAX_PROBLEMS = 8
_MESSAGE_CHARS = 160


@dataclass(frozen=True)
class Rename:
    passed: str
    declared: str
    how: str  # alias, spelling, context, synonym, abbreviation, id, partial, path, described, typed


@dataclass(frozen=True)
class CheckedArguments:
    arguments: dict[str, Any] | None  # what to forward; None when the call is refused
    renames: tuple[Rename, ...] = ()
    problems: tuple[str, ...] = ()  # why it is refused, one line each

    @property
    def refused(self) -> bool:
        return self.arguments is None


@dataclass
class ArgumentChecker:
    """Repairs and validates arguments; keeps one compiled validator per schema it has seen."""

    _validators: dict[str, tuple[object, jsonschema.protocols.Validator | None, Plain | None]] = field(
        default_factory=dict
    )

    def check(
        self,
        key: str,
        name: str,
        spec: Mapping[str, Any],
        arguments: Mapping[str, Any] | None,
        aliases: Mapping[str, str] | None = None,
        elsewhere: frozenset[str] = frozenset(),
    ) -> CheckedArguments:
        """`key` identifies the tool (`server:tool`), `name` is its own name, `spec` its definition;
        `elsewhere`: the parameter names the server's other tools declare."""
        schema = spec.get("inputSchema")
        passed = dict(arguments or {})
        properties = schema.get("properties") if isinstance(schema, dict) else None
        if not isinstance(schema, dict) or not isinstance(properties, dict) or not properties or _open(schema):
            return self._validated(key, schema, passed, ())
        unknown = [k for k in passed if k not in properties]
        if not unknown:  # (nothing to place: only the schema's word)
            return self._validated(key, schema, passed, ())
        free = [p for p in properties if p not in passed]
        tool_words = frozenset(words(name))
        destructive = is_destructive(tool_words, spec)
        renames: list[Rename] = []
        problems: list[str] = []
        required = [r for r in schema.get("required") or [] if isinstance(r, str)]
        # Descriptions are read only for a call that lacks a required parameter as it was passed: a
        # call that would run without the unknown argument is not changed on that evidence.
        lacking = any(r not in passed for r in required)
        matches: dict[str, ParamMatch] = {}
        for argument in unknown:
            match = map_name(argument, list(properties), free, aliases or {}, tool_words, destructive)
            if match.declared is None and not match.options and not destructive and lacking:
                match = described_match(
                    argument, passed[argument], properties, free, required, tool_words, reads_only(tool_words, spec)
                )
            matches[argument] = match
        unplaced = [a for a, m in matches.items() if m.declared is None and not m.options]
        if len(unplaced) == 1 and not destructive and unplaced[0] not in elsewhere:
            # The one argument nothing placed, and the one parameter left that could hold it; not a
            # name another tool of the server declares (the model may have that tool in mind).
            open_ = [p for p in free if p not in {m.declared for m in matches.values()}]
            alone = unplaced[0]
            matches[alone] = typed_match(alone, passed[alone], properties, open_, required, tool_words)
        for argument, match in matches.items():
            if match.declared is not None and match.how is not None:
                renames.append(Rename(argument, match.declared, match.how))
            elif match.options:
                options = " or ".join(repr(o) for o in match.options)
                problems.append(f"'{argument}' is not a parameter of {name}: it could be {options}; pass one of them")
            else:
                near = close_names(argument, list(properties), 3)
                hint = f" (did you mean {' or '.join(repr(n) for n in near)}?)" if near else ""
                problems.append(f"'{argument}' is not a parameter of {name}{hint}")
        targets = Counter(r.declared for r in renames)
        for rename in [r for r in renames if targets[r.declared] > 1]:
            renames.remove(rename)
            problems.append(
                f"'{rename.passed}' is not a parameter of {name}; several arguments could be '{rename.declared}'"
            )
        if problems:
            return CheckedArguments(None, tuple(renames), tuple(problems))
        by_passed = {r.passed: r.declared for r in renames}
        repaired = {by_passed.get(k, k): v for k, v in passed.items()}
        return self._validated(key, schema, repaired, tuple(renames))

    def fits(self, key: str, spec: Mapping[str, Any], arguments: Mapping[str, Any]) -> bool:
        """Whether the tool takes these arguments exactly as they are: every name declared (by a
        schema that lists its parameters) and the schema satisfied."""
        schema = spec.get("inputSchema")
        if not isinstance(schema, dict):
            return False
        properties = schema.get("properties")
        if not isinstance(properties, dict) or not properties or _open(schema):
            return False  # a tool that takes any names says nothing about these
        if any(name not in properties for name in arguments):
            return False
        validator, plain = self._validator(key, schema)
        if validator is None:
            return False
        if plain is not None and plain.fits(arguments):
            return True
        return not any(True for _ in validator.iter_errors(dict(arguments)))

    def _validated(
        self, key: str, schema: Any, arguments: dict[str, Any], renames: tuple[Rename, ...]
    ) -> CheckedArguments:
        validator, plain = self._validator(key, schema)
        if validator is None or (plain is not None and plain.fits(arguments)):
            return CheckedArguments(arguments, renames)
        errors = sorted(validator.iter_errors(arguments), key=lambda e: (list(e.absolute_path), e.message))
        problems = [_describe(error) for error in errors[:MAX_PROBLEMS]]
        if len(errors) > MAX_PROBLEMS:
            problems.append(f"… and {len(errors) - MAX_PROBLEMS} more problems")
        if problems:
            return CheckedArguments(None, renames, tuple(problems))
        return CheckedArguments(arguments, renames)

    def _validator(self, key: str, schema: Any) -> tuple[jsonschema.protocols.Validator | None, Plain | None]:
        """The schema's validator (None: a broken schema, nothing is validated) and its quick yes."""
        cached = self._validators.get(key)
        if cached is not None and cached[0] is schema:
            return cached[1], cached[2]
        validator: jsonschema.protocols.Validator | None = None
        if isinstance(schema, dict):
            try:
                cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
            except (TypeError, AttributeError):  # a `$schema` that is no string (jsonschema cannot look it up)
                cls = jsonschema.Draft202012Validator
            try:
                cls.check_schema(schema)
                validator = cls(schema)
            except jsonschema.exceptions.SchemaError as exc:
                # The server's schema is broken: the server is the judge of its arguments then.
                logger.warning("not validating arguments of %s: invalid inputSchema: %s", key, exc.message)
        plain = compile_plain(schema) if validator is not None else None
        self._validators[key] = (schema, validator, plain)
        return validator, plain


def _open(schema: Mapping[str, Any]) -> bool:
    """Whether the schema accepts argument names beyond its properties."""
    extra = schema.get("additionalProperties")
    return extra is True or isinstance(extra, dict) or bool(schema.get("patternProperties"))


def _describe(error: jsonschema.exceptions.ValidationError) -> str:
    where = ".".join(str(p) for p in error.absolute_path)
    required = error.validator_value
    if error.validator == "required" and isinstance(error.instance, dict) and isinstance(required, list):
        missing = [r for r in required if r not in error.instance]
        names = ", ".join(f"'{'.'.join([where, r]) if where else r}'" for r in missing)
        return f"missing required argument {names}"
    message = error.message if len(error.message) <= _MESSAGE_CHARS else error.message[: _MESSAGE_CHARS - 1] + "…"
    return f"'{where}': {message}" if where else message


def parameter_summary(schema: Any) -> str:
    """`owner (string, required), repo (string, required), body (string)` — for refusals."""
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return "(none declared)"
    required = set(schema.get("required") or [])
    parts = []
    for name, prop in schema["properties"].items():
        kind = _kind(prop)
        details = ", ".join(d for d in (kind, "required" if name in required else "") if d)
        parts.append(f"{name} ({details})" if details else name)
    return ", ".join(parts) or "(none)"


def _kind(prop: Any) -> str:
    if not isinstance(prop, dict):
        return ""
    if isinstance(prop.get("enum"), list):
        return "one of " + "|".join(str(v) for v in prop["enum"][:6]) + ("|…" if len(prop["enum"]) > 6 else "")
    kind = prop.get("type")
    if isinstance(kind, list):
        kind = "/".join(str(k) for k in kind)
    if kind == "array" and isinstance(prop.get("items"), dict) and isinstance(prop["items"].get("type"), str):
        return f"array of {prop['items']['type']}"
    return str(kind) if kind else ""


def refusal_text(exposed: str, spec: Mapping[str, Any], checked: CheckedArguments, via_call_tool: bool) -> str:
    """The isError text of a refused call: each problem, the parameters, a template to copy."""
    schema = spec.get("inputSchema")
    lines = [f"Not called: the arguments for '{exposed}' need fixing (nothing was sent to the server)."]
    lines += [f"- {problem}" for problem in checked.problems]
    lines += [f"- (read '{r.passed}' as '{r.declared}')" for r in checked.renames]
    lines.append(f"Parameters: {parameter_summary(schema)}")
    template = call_template(exposed, schema)
    shown = template if via_call_tool else template["arguments"]
    lines.append(f"{'call_tool' if via_call_tool else exposed} {json.dumps(shown, ensure_ascii=False)}")
    return "\n".join(lines)
