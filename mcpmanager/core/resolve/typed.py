"""A passed argument name read by the value's type alone (after every other tier has failed).

A model that names an argument in its own words (`coin` for `symbol`, `framework` for `platform`,
`location` for `address`) often leaves exactly one parameter unfilled that could hold the value.
The name then says nothing; the shape of the call does: the one required parameter the call lacks,
and no other unfilled parameter, takes the value as it is (type, enum, format; nothing converted).

Only for a call with exactly one argument no other tier placed, never on a tool that can destroy
data, never for a flag (a boolean's meaning is its name) or an identifier (an id of one thing is
not another's), never across directions (`start_latitude` is no `to_latitude`), never onto a
parameter whose description names another thing that the passed word only qualifies (`key` is no
"name of the Key Safe"), and never for a name another tool of the server declares (the model may
have that tool in mind: see `ArgumentChecker.check`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mcpmanager.core.resolve.described import (
    accepts,
    generic,
    named_by_several,
    names_the_object,
    readable,
    same_direction,
)
from mcpmanager.core.resolve.param_names import ID_WORDS, ParamMatch
from mcpmanager.core.resolve.words import words


def typed_match(
    passed: str,
    value: Any,
    properties: Mapping[str, Any],
    free: Sequence[str],
    required: Sequence[str],
    tool_words: frozenset[str] = frozenset(),
) -> ParamMatch:
    """The one required parameter the call lacks, when it is the only unfilled one taking `value`."""
    # (`lat` beside `home_lat` and `work_lat` says which kind of value, not which one.)
    if not readable(passed, value) or named_by_several(passed, properties):
        return ParamMatch(None, None)
    # Every unfilled parameter that could hold the value counts, identifiers too: a value two could
    # hold is not singled out by its type.
    holding = [name for name in free if isinstance(properties.get(name), dict) and accepts(properties[name], value)]
    if len(holding) != 1 or holding[0] not in required:
        return ParamMatch(None, None)
    target = holding[0]
    prop = properties[target]
    theirs = words(target)
    if not theirs or theirs[-1] in ID_WORDS:
        return ParamMatch(None, None)
    if not same_direction(passed, target, prop) or not names_the_object(passed, target, prop):
        return ParamMatch(None, None)
    # A name that says only what form a value takes (`name`, `text`) is another form word's
    # (`value`), or the tool's own thing's (`name` → `album` on `create_album`): on `tag_photo` a
    # bare `name` is the photo's rather than the album's.
    if generic(passed) and not (generic(target) or set(theirs) & tool_words):
        return ParamMatch(None, None)
    return ParamMatch(target, "typed")
