"""A quick yes for arguments that plainly fit a plain input schema, before jsonschema's full walk.

Most tools' input schemas are an object of named parameters, each with a JSON type and words about
it. jsonschema walks every keyword of every property on each call, which was a tenth of what a
proxied call cost the engine (docs/benchmarks.md). `compile_plain` reads such a schema once into
its parameters' types and its required names; `Plain.fits` answers True only where jsonschema could
find nothing wrong. Everything else (a keyword beyond types and words, a value of another type, a
missing or undeclared name, a float for an integer) answers False and goes to jsonschema, which
judges it and words the problems. So a call's fate is the same either way; only the time differs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# Keywords that say something about a value without constraining it.
_WORDS = frozenset({"title", "description", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly"})
_TOP = _WORDS | {"type", "properties", "required", "additionalProperties", "$schema"}
_PROPERTY = _WORDS | {"type"}
# The drafts in which these keywords mean what is checked here (draft 4 counts 1.0 as no integer,
# draft 3 spells `required` differently: those schemas go to jsonschema).
_DRAFTS = frozenset(
    {
        "http://json-schema.org/draft-06/schema#",
        "http://json-schema.org/draft-06/schema",
        "http://json-schema.org/draft-07/schema#",
        "http://json-schema.org/draft-07/schema",
        "https://json-schema.org/draft/2019-09/schema",
        "https://json-schema.org/draft/2020-12/schema",
    }
)
# A JSON type → the Python types a parsed JSON value of it has (exactly: `type(value) is`). An
# integer is an int only: a float like 1.0 is left to jsonschema, whose answer depends on the draft.
_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "boolean": (bool,),
    "integer": (int,),
    "number": (int, float),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


@dataclass(frozen=True)
class Plain:
    required: tuple[str, ...]
    types: Mapping[str, tuple[type, ...] | None]  # a parameter → the types it takes (None: any value)
    closed: bool  # `additionalProperties: false`

    def fits(self, arguments: Mapping[str, Any]) -> bool:
        """True when the schema surely accepts `arguments`; False: ask jsonschema."""
        types = self.types
        for name, value in arguments.items():
            if name not in types:
                if self.closed:
                    return False
                continue
            allowed = types[name]
            if allowed is not None and type(value) not in allowed:
                return False
        return all(name in arguments for name in self.required)


def compile_plain(schema: object) -> Plain | None:
    """The schema as a `Plain`, when it is one (an object of typed, described parameters); else None."""
    if not isinstance(schema, dict) or not _TOP.issuperset(schema):
        return None
    draft = schema.get("$schema")
    if schema.get("type", "object") != "object" or (draft is not None and draft not in _DRAFTS):
        return None
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    if not isinstance(properties, dict) or not isinstance(required, list) or not isinstance(extra, bool):
        return None
    if not all(isinstance(name, str) for name in required):
        return None
    try:
        types = {name: _property_types(spec) for name, spec in properties.items()}
    except _NotPlain:
        return None
    return Plain(tuple(required), types, closed=not extra)


class _NotPlain(Exception):
    pass


def _property_types(spec: object) -> tuple[type, ...] | None:
    """A parameter's types (None: any value); _NotPlain when its schema says more than that."""
    if spec is True or spec == {}:
        return None
    if not isinstance(spec, dict) or not _PROPERTY.issuperset(spec):
        raise _NotPlain
    named = spec.get("type")
    if named is None:
        return None
    names = [named] if isinstance(named, str) else named
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n in _TYPES for n in names):
        raise _NotPlain
    return tuple({t for n in names for t in _TYPES[n]})
