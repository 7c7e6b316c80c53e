"""The resolution test set: wrong tool and argument names over real catalogues, with their labels.

Two halves:
- generated here, mechanically, from every tool of `tests/data/catalogues/*.json`: each style of
  wrong name a model produces (case and separator styles, plural/singular, word order, the server
  prefix in every form, typos, verb synonyms, a missing word) and must-not cases (another action,
  a fuzzy guess onto a destructive tool, a name two tools answer equally); argument names in
  every style, and arguments that must be refused;
- curated by hand in `tests/data/resolve/curated_*.jsonl` (semantic slips, old names of renamed
  tools, tricky must-nots; see that folder's README).

The labels follow the safety rules of docs/architecture.md (Resolution) with this module's own, deliberately simple
word handling, not the resolver's: a label must not be right merely because the resolver agrees.
"""

from __future__ import annotations

import json
import random
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

DATA = Path(__file__).resolve().parents[1] / "data"
CATALOGUES = ("livemcpbench", "published")
SEED = 2026

Tool = dict[str, Any]


@dataclass(frozen=True)
class NameCase:
    id: str
    catalogue: str
    tool_name: str
    expect: str | None  # "server:name", or None: must not be auto-resolved
    style: str
    source: str  # generated | curated
    near: tuple[str, ...] = ()


@dataclass(frozen=True)
class ArgumentCase:
    id: str
    catalogue: str
    tool: str  # "server:name"
    arguments: dict[str, Any]
    expect: dict[str, Any] | None  # what must be forwarded; None: must be refused
    kind: str  # valid | fixable | must-refuse
    style: str
    source: str
    params: dict[str, str] = field(default_factory=dict)  # the user's parameter aliases for the tool


def load_catalogue(name: str) -> list[Tool]:
    path = DATA / "catalogues" / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else []


# The generator's own word handling ------------------------------------------------------------------

_SPLIT = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
DESTRUCTIVE_VERBS = frozenset(
    {"delete", "remove", "drop", "destroy", "purge", "erase", "clear", "reset", "kill", "terminate", "truncate"}
    | {"wipe", "uninstall", "revoke", "rm", "del", "unlink", "prune", "flush", "discard", "overwrite"}
)
READ_VERBS = frozenset({"get", "list", "read", "search", "find", "fetch", "show", "describe", "view", "query"})
WRITE_VERBS = frozenset({"create", "add", "write", "update", "edit", "set", "insert", "put", "patch", "modify"})
DIRECTIONS = frozenset({"to", "from", "into", "2", "as", "vs"})
# Same-kind verb swaps models make (from → to).
VERB_SWAPS = {
    "get": "fetch",
    "list": "get",
    "search": "find",
    "find": "search",
    "create": "add",
    "add": "create",
    "update": "edit",
    "edit": "update",
    "read": "get",
    "fetch": "get",
    "show": "get",
    "run": "execute",
    "execute": "run",
    "delete": "remove",
    "remove": "delete",
    "write": "save",
    "query": "search",
    "retrieve": "get",
    "set": "update",
}
# A must-not case puts `delete` in place of a read or write verb: landing anywhere is then wrong
# (on a tool of the original kind it is another action, on a deleting one a fuzzy guess).
OTHER_ACTION = {"read": "delete", "write": "delete"}


def split(name: str) -> list[str]:
    return [w.lower() for w in _SPLIT.split(name) if w]


def singular(word: str) -> str:
    if word in ("news", "series", "status", "alias", "analysis", "canvas"):
        return word
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith(("ses", "xes", "ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def plural(word: str) -> str:
    if word.endswith("y") and len(word) > 2 and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    return word + "s"


def spelling_keys(name: str) -> tuple[str, str, str | None]:
    """Two names are spellings of each other at level 0 (case, separators), 1 (also number) or 2
    (also word order) when their keys at that level are equal."""
    parts = split(name)
    singles = [singular(w) for w in parts]
    bag = None if DIRECTIONS.intersection(parts) else " ".join(sorted(singles))
    return "".join(parts), " ".join(singles), bag


def camel(parts: list[str]) -> str:
    return parts[0] + "".join(p.title() for p in parts[1:]) if parts else ""


def pascal(parts: list[str]) -> str:
    return "".join(p.title() for p in parts)


def destructive(tool: Tool) -> bool:
    annotations = tool.get("annotations") or {}
    if annotations.get("readOnlyHint") is True:
        return False
    if annotations.get("destructiveHint") is True:
        return True
    return bool(DESTRUCTIVE_VERBS.intersection(split(tool["name"])))


def kind_of(parts: Iterable[str]) -> str | None:
    words = set(parts)
    if words & DESTRUCTIVE_VERBS:
        return "delete"
    if words & WRITE_VERBS:
        return "write"
    if words & READ_VERBS:
        return "read"
    return None


# Name cases -----------------------------------------------------------------------------------------

FUZZY_STYLES = frozenset({"typo", "verb-synonym", "missing-word"})


def _typo(word: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(word) - 1)
    how = rng.choice(("delete", "swap", "double", "replace"))
    if how == "delete":
        return word[:i] + word[i + 1 :]
    if how == "swap" and word[i] != word[i + 1]:
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    if how == "double":
        return word[: i + 1] + word[i] + word[i + 1 :]
    vowels = "aeiou"
    replacement = rng.choice([c for c in (vowels if word[i] in vowels else "rtnslcdm") if c != word[i]])
    return word[:i] + replacement + word[i + 1 :]


def _join_like(original: str, parts: list[str]) -> str:
    """`parts` in the original name's own style (snake, kebab, camel)."""
    if "-" in original:
        return "-".join(parts)
    if "_" not in original and any(c.isupper() for c in original[1:]):
        return camel(parts)
    return "_".join(parts)


def _variants(tool: Tool, index: int, rng: random.Random) -> list[tuple[str, str]]:
    server, name = tool["server"], tool["name"]
    parts = split(name)
    server_parts = split(server)
    out: list[tuple[str, str]] = []
    if len(parts) >= 2:
        styles = [camel(parts), pascal(parts), "_".join(parts).upper(), "-".join(parts), "_".join(parts)]
        styles = [s for s in styles if s != name]
        out.append((styles[index % len(styles)], "case"))
        out.append(((".", "", " ")[index % 3].join(parts), "separator"))
        if not DIRECTIONS.intersection(parts) and len(parts) <= 3:
            out.append((_join_like(name, [*parts[1:], parts[0]]), "word-order"))
    last = parts[-1] if parts else ""
    if last and not last.isdigit() and len(last) > 2:
        toggled = singular(last) if singular(last) != last else plural(last)
        out.append((_join_like(name, [*parts[:-1], toggled]), "plural"))
    prefix_forms = [
        f"{server}_{name}",
        f"{server}:{name}",
        f"{pascal(server_parts)}.{camel(parts) or name}",
        f"{server}/{name}",
        f"mcp__{server}__{name}",
        f"{'_'.join(server_parts)}__{'_'.join(parts)}",
    ]
    out.append((prefix_forms[index % len(prefix_forms)], "server-prefix"))
    long_words = [i for i, w in enumerate(parts) if len(w) >= 5 and w.isalpha()]
    if long_words:
        at = max(long_words, key=lambda i: len(parts[i]))
        typo = [*parts]
        typo[at] = _typo(parts[at], rng)
        out.append((_join_like(name, typo), "typo"))
    swap_at = next((i for i, w in enumerate(parts) if w in VERB_SWAPS), None)
    if swap_at is not None and len(parts) >= 2:
        swapped = [*parts]
        swapped[swap_at] = VERB_SWAPS[parts[swap_at]]
        out.append((_join_like(name, swapped), "verb-synonym"))
    if len(parts) >= 3:
        # Drop one word that is neither the verb nor the head noun: `get_current_stock_price` → `get_stock_price`.
        droppable = [i for i in range(1, len(parts) - 1) if parts[i] not in DIRECTIONS]
        if droppable:
            dropped = [w for i, w in enumerate(parts) if i != droppable[index % len(droppable)]]
            out.append((_join_like(name, dropped), "missing-word"))
    kind = kind_of(parts)
    verb_at = next((i for i, w in enumerate(parts) if kind_of([w])), None)
    if kind in OTHER_ACTION and verb_at is not None and len(parts) >= 2:
        other = [*parts]
        other[verb_at] = OTHER_ACTION[kind]
        out.append((_join_like(name, other), "other-action"))
    return out


def generated_name_cases(catalogue: str, tools: list[Tool]) -> list[NameCase]:
    rng = random.Random(f"{SEED}:{catalogue}")
    exact = {t["name"] for t in tools}
    spelled: list[defaultdict[str, set[str]]] = [defaultdict(set) for _ in range(3)]
    servers_of: defaultdict[str, set[str]] = defaultdict(set)
    for tool in tools:
        servers_of[tool["name"]].add(tool["server"])
        for name in (tool["name"], _without_server(tool)):
            for level, key in enumerate(spelling_keys(name) if name else ()):
                if key:
                    spelled[level][key].add(f"{tool['server']}:{tool['name']}")
    produced: defaultdict[str, list[tuple[Tool, str]]] = defaultdict(list)
    for index, tool in enumerate(tools):
        for variant, style in _variants(tool, index, rng):
            if variant not in exact and variant != f"{tool['server']}__{tool['name']}":
                produced[variant].append((tool, style))
    cases: list[NameCase] = []
    for variant, sources in produced.items():
        tool, style = sources[0]
        key = f"{tool['server']}:{tool['name']}"
        expect: str | None = key
        label = style
        if style == "other-action":
            if any(spelled[level].get(key or "") for level, key in enumerate(spelling_keys(variant))):
                continue  # that tool exists: not another action at all
            expect = None
        elif style != "server-prefix":  # the prefixed forms hold the exact name: no doubt
            # The closest spelling wins; two tools equally close (or both produced it) is ambiguous.
            ours = spelling_keys(variant)
            closest = next(
                (found for level in range(3) if ours[level] and (found := spelled[level].get(ours[level] or ""))), None
            )
            producers = {f"{t['server']}:{t['name']}" for t, _ in sources}
            if closest:
                if len(closest) > 1:
                    expect, label = None, "ambiguous"
                else:
                    expect = next(iter(closest))
                    tool = next(t for t in tools if f"{t['server']}:{t['name']}" == expect)
            elif len(producers) > 1 or len(servers_of[tool["name"]]) > 1:
                expect, label = None, "ambiguous"  # two tools' slips meet, or the name is on two servers
        if expect is not None and style in FUZZY_STYLES and destructive(tool):
            expect, label = None, "destructive-fuzzy"
        near = () if expect else tuple(sorted({f"{t['server']}:{t['name']}" for t, _ in sources}))
        cases.append(NameCase("", catalogue, variant, expect, label, "generated", near))
    cases.sort(key=lambda c: (c.style, c.tool_name))
    return [NameCase(f"g-{catalogue[:3]}-{i:05d}", *_fields(c)[1:]) for i, c in enumerate(cases)]


def _without_server(tool: Tool) -> str | None:
    """A name that starts with its server's name, without it (`excel_create_table` → `create_table`)."""
    server, parts = "".join(split(tool["server"])), split(tool["name"])
    for cut in range(1, len(parts)):
        if "".join(parts[:cut]) == server:
            return "_".join(parts[cut:])
    return None


def _fields(case: NameCase) -> tuple[Any, ...]:
    return (case.id, case.catalogue, case.tool_name, case.expect, case.style, case.source, case.near)


def _curated_lines(prefix: str) -> list[str]:
    """Every line of `tests/data/resolve/<prefix>*.jsonl` (several hands wrote sets of their own)."""
    return [
        line
        for path in sorted((DATA / "resolve").glob(f"{prefix}*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]


def curated_name_cases() -> list[NameCase]:
    cases = []
    for line in _curated_lines("curated_names"):
        if line.strip():
            item = json.loads(line)
            near = tuple(item.get("near") or ())
            fields = (item["id"], item["catalogue"], item["tool_name"], item["expect"], item["style"])
            cases.append(NameCase(*fields, "curated", near))
    return cases


# Argument cases -------------------------------------------------------------------------------------

# Argument-name slips (declared → what a model passes instead), the generator's own list.
ARGUMENT_SWAPS = {
    "query": ["q", "search_term", "question"],
    "path": ["file_path", "filepath"],
    "url": ["uri", "link"],
    "directory": ["dir", "folder"],
    "repo": ["repository"],
    "limit": ["max_results", "top_k"],
    "message": ["msg"],
    "content": ["body", "text"],
}
# Flags a model adds that, dropped, would change what the call does to the user's data.
DANGEROUS_EXTRAS = {"append": True, "recursive": True, "force": True, "overwrite": False, "dry_run": True}


def example_value(schema: Any, name: str) -> Any:
    if not isinstance(schema, dict):
        return f"example-{name}"
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    if "default" in schema and schema["default"] is not None:
        return schema["default"]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    for option in schema.get("anyOf") or schema.get("oneOf") or []:
        if kind is None and isinstance(option, dict) and option.get("type") not in (None, "null"):
            return example_value(option, name)
    if kind == "integer":
        return int(schema.get("minimum", 1))
    if kind == "number":
        return schema.get("minimum", 1.5)
    if kind == "boolean":
        return True
    if kind == "array":
        return [example_value(schema.get("items"), name)] * max(1, int(schema.get("minItems", 1)))
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: example_value(props.get(k), k) for k in schema.get("required") or []}
    formats = {"date": "2026-11-23", "date-time": "2026-11-23T10:00:00Z", "uri": "https://example.com/a"}
    if schema.get("format") in formats:
        return formats[schema["format"]]
    return f"example-{name}"


def _valid_arguments(tool: Tool) -> dict[str, Any] | None:
    schema = tool.get("inputSchema") or {}
    props = schema.get("properties") or {}
    if not props:
        return None
    names = list(schema.get("required") or [])
    names += [p for p in props if p not in names][: max(0, 2 - len(names))]
    arguments = {n: example_value(props.get(n), n) for n in names if n in props}
    try:
        jsonschema.validate(arguments, schema)
    except (jsonschema.ValidationError, jsonschema.SchemaError):
        return None
    return arguments


def _norm_arg(name: str) -> str:
    return "".join(singular(w) for w in split(name))


def generated_argument_cases(catalogue: str, tools: list[Tool]) -> list[ArgumentCase]:
    rng = random.Random(f"{SEED}:args:{catalogue}")
    cases: list[ArgumentCase] = []
    for index, tool in enumerate(tools):
        valid = _valid_arguments(tool)
        if not valid:
            continue
        key = f"{tool['server']}:{tool['name']}"
        props = list(tool["inputSchema"]["properties"])
        if index % 4 == 0:
            cases.append(ArgumentCase("", catalogue, key, valid, valid, "valid", "valid", "generated"))
        target = list(valid)[index % len(valid)]
        parts = split(target)
        unique = sum(_norm_arg(p) == _norm_arg(target) for p in props) == 1
        # Spelling: the other case style.
        restyled = camel(parts) if "_" in target or target.islower() else "_".join(parts)
        if restyled != target and restyled not in props and unique:
            wrong = {restyled if k == target else k: v for k, v in valid.items()}
            cases.append(ArgumentCase("", catalogue, key, wrong, valid, "fixable", "case", "generated"))
        # A common synonym, when the tool has no other parameter that could take it.
        for swap in ARGUMENT_SWAPS.get(target, [])[: 1 + index % 2]:
            if swap not in props and not any(_norm_arg(swap) == _norm_arg(p) for p in props):
                wrong = {swap if k == target else k: v for k, v in valid.items()}
                cases.append(ArgumentCase("", catalogue, key, wrong, valid, "fixable", "synonym", "generated"))
        # A user's parameter alias that is no generic synonym.
        if index % 5 == 1:
            alias = f"the_{'_'.join(parts)}_value"
            wrong = {alias if k == target else k: v for k, v in valid.items()}
            cases.append(
                ArgumentCase("", catalogue, key, wrong, valid, "fixable", "alias", "generated", {alias: target})
            )
        # An argument that exists nowhere: refused, whatever it is (dropping it could lose data).
        extra, value = rng.choice(sorted(DANGEROUS_EXTRAS.items()))
        if extra not in props and not any(_norm_arg(extra) == _norm_arg(p) for p in props):
            wrong = {**valid, extra: value}
            cases.append(ArgumentCase("", catalogue, key, wrong, None, "must-refuse", "unknown-flag", "generated"))
        # A required value of the wrong type is refused, never converted.
        required = tool["inputSchema"].get("required") or []
        number = next((r for r in required if isinstance(valid.get(r), int) and not isinstance(valid[r], bool)), None)
        if number is not None:
            wrong = {**valid, number: str(valid[number])}
            cases.append(ArgumentCase("", catalogue, key, wrong, None, "must-refuse", "type", "generated"))
        # A required argument left out is refused, never invented.
        if required and index % 3 == 0:
            wrong = {k: v for k, v in valid.items() if k != required[0]}
            cases.append(ArgumentCase("", catalogue, key, wrong, None, "must-refuse", "missing", "generated"))
    return [ArgumentCase(f"ga-{catalogue[:3]}-{i:05d}", *_argument_fields(c)[1:]) for i, c in enumerate(cases)]


def _argument_fields(case: ArgumentCase) -> tuple[Any, ...]:
    return (
        case.id,
        case.catalogue,
        case.tool,
        case.arguments,
        case.expect,
        case.kind,
        case.style,
        case.source,
        case.params,
    )


def curated_argument_cases() -> list[ArgumentCase]:
    cases = []
    for line in _curated_lines("curated_arguments"):
        if line.strip():
            item = json.loads(line)
            style = item.get("style") or item["kind"]
            params = item.get("params") or {}
            cases.append(
                ArgumentCase(
                    item["id"],
                    item["catalogue"],
                    item["tool"],
                    item["arguments"],
                    item["expect"],
                    item["kind"],
                    style,
                    "curated",
                    params,
                )
            )
    return cases


def all_cases() -> tuple[dict[str, list[Tool]], list[NameCase], list[ArgumentCase]]:
    catalogues = {name: tools for name in CATALOGUES if (tools := load_catalogue(name))}
    names: list[NameCase] = []
    arguments: list[ArgumentCase] = []
    for name, tools in catalogues.items():
        names += generated_name_cases(name, tools)
        arguments += generated_argument_cases(name, tools)
    names += [c for c in curated_name_cases() if c.catalogue in catalogues]
    arguments += [c for c in curated_argument_cases() if c.catalogue in catalogues]
    return catalogues, names, arguments
