"""A passed argument name read through the parameters' descriptions and types (the last tier).

Models name an argument by what it holds: `cuisine` where the tool says `category` ("the type of
cuisine"), `band` for `artist` ("the name of the artist or band"), `text` for an SMS's `message`
("the SMS message content"). The name alone says nothing then; the parameter's own words do.

A parameter fits when it was not passed, its schema accepts the value as it is (type, enum,
format: nothing is converted) and its name or description shares a word with the passed name —
compared as search terms (stemmed, stop words left out), directly or through a synonym of the
search's vocabulary or of the argument-name groups. The required parameters that fit are asked
first (a call whose only missing required string is the comment's `body` is about that body), then
the optional ones; exactly one must fit, two refuse with both named.

Only for a call that lacks a required parameter as it was passed (a call that would run without the
unknown argument is not changed on this evidence), and onto an optional parameter only on a tool
that reads. A passed name that says a direction (`from_city`) fits only a parameter that says the
same one; one that qualifies what a "form of thing" description names is not that thing (`key` is
not "the name of the Key Vault"). Each limit was set on the cross-parameter simulation
(`bench_resolve --simulate`), not on a case.

Never used for a flag (a boolean's meaning lives in its exact name: `force` read as any boolean
that mentions forcing could do the opposite), for a bare identifier (see `param_names`), or on a
tool that can destroy data (a rename made on loose evidence must never widen what a delete touches).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import jsonschema
import jsonschema.exceptions

from mcpmanager.core.resolve.param_names import ID_WORDS, ParamMatch, synonyms_of
from mcpmanager.core.resolve.words import singular, words
from mcpmanager.core.search.analyzer import analyze
from mcpmanager.core.search.synonyms import SynonymMap

# Words that say what form a value takes, not what it is.
# Names that say only what form a value takes, not what it is: `name`, `text`.
GENERIC_NAMES = frozenset(
    {"name", "value", "text", "string", "str", "data", "info", "detail", "content", "type", "kind"}
)
# Head words of a description that stand for what follows their `of`: `the title of the movie`.
FORM_WORDS = GENERIC_NAMES | {"title", "number", "id", "identifier", "list", "set", "array", "label"}
_ASIDE = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s|\n")
# Where the subject of a description ends: a comma, or a word that starts a clause about its use.
_CLAUSE = re.compile(
    r",|\s[-–—]\s|\b(?:to|that|which|where|when|who|whose|in|on|at|by|with|from|if|used|using|must|should)\b"
    r"|(?<=\w )(?!string\b)\w{3,}ing\b",  # a participle past the first word: `the artist performing`
    re.IGNORECASE,
)
_OF = re.compile(r"\s(?:of|for)\s", re.IGNORECASE)
_EXAMPLES = re.compile(r"\b(?:e\.g|i\.e|for example|for instance|such as|examples?|like)\b", re.IGNORECASE)


@lru_cache(maxsize=1)
def _synonyms() -> SynonymMap:
    return SynonymMap()


@lru_cache(maxsize=4096)
def terms(text: str) -> frozenset[str]:
    return frozenset(analyze(text).words)


Reading = tuple[frozenset[str], ...]  # term sets that must all be found, each in any of its terms


@lru_cache(maxsize=1024)
def passed_meanings(passed: str) -> tuple[Reading, tuple[Reading, ...]]:
    """How a passed name can be read: by its own words, each with the search vocabulary's synonyms
    (`start` or `launch`); and, for a name of form words only (`text`, `name`: what form a value
    takes rather than what it is), by the other names of its argument group (`text` as `content`,
    or as `body`). (Other groups' short members, `max` or `file`, would say too little.)"""
    each = []
    for term in analyze(" ".join(words(passed))).words:
        found = {term}
        for expansion in _synonyms().expand((term,)):
            found.update(expansion.words)
        each.append(frozenset(found))
    group = [tuple(frozenset({t}) for t in terms(" ".join(words(o)))) for o in synonyms_of(passed)]
    return tuple(each), tuple(r for r in group if r) if generic(passed) else ()


def generic(passed: str) -> bool:
    """Whether a name says only what form its value takes (`name`, `value`, `text`, `data`)."""
    return {singular(w) for w in words(passed)} <= GENERIC_NAMES


def _says(reading: Reading, described: frozenset[str]) -> bool:
    return bool(reading) and all(options & described for options in reading)


def _speaks_of(passed: str, name: str, described: frozenset[str], tool_words: frozenset[str]) -> bool:
    """Whether a parameter's words say every word of the passed name, read one way or another. A
    form word's own reading (`name`) counts only for the parameter of the tool's own thing (`secret`
    of `keyvault_secret_create`: "the name of the secret"); its group's (`text` as content) anywhere."""
    own, group = passed_meanings(passed)
    if any(_says(reading, described) for reading in group):
        return True
    if generic(passed) and not {singular(w) for w in words(name)} <= {singular(w) for w in tool_words}:
        return False
    return _says(own, described)


def _subject(description: str) -> str:
    """The first sentence without asides, examples and the clause about the parameter's use."""
    text = _ASIDE.sub(" ", description)
    text = _SENTENCE_END.split(text.strip(), maxsplit=1)[0]
    text = _EXAMPLES.split(text, maxsplit=1)[0]
    return _CLAUSE.split(text, maxsplit=1)[0]


def defining_part(description: str) -> str:
    """What a description says the parameter is: the subject of its first sentence, without asides,
    examples and the clause that says what it is for or where it goes. `The ID of the customer to
    create the invoice for` is an ID of a customer, not of an invoice; `JSON string of additional
    fields. Examples: set priority …` is no priority. Past `of` or `for`, only when what stands
    before it is a form word: `the type of cuisine`, `the identifier for the recipient`, but not
    `currency of the price` or `CSS selector for the link to click`."""
    phrase = _subject(description)
    joint = _OF.search(phrase)
    if joint and not {singular(w) for w in words(phrase[: joint.start()])} & FORM_WORDS:
        return phrase[: joint.start()]
    return phrase


_COORDINATION = re.compile(r"\s(?:or|and)\s|/", re.IGNORECASE)


def _passed_head(passed: str) -> frozenset[str]:
    """The noun the passed name is about, as search terms with their synonyms (`resource_name`:
    resource; `number_of_tickets`: ticket; `from_city`: city)."""
    parts = [singular(w) for w in words(passed)]
    for at in range(1, len(parts) - 1):
        if parts[at] == "of" and parts[at - 1] in FORM_WORDS:
            parts = parts[at + 1 :]
            break
    while len(parts) > 1 and parts[-1] in GENERIC_NAMES:
        parts = parts[:-1]
    found = set(terms(parts[-1])) if parts else set()
    for term in list(found):
        for expansion in _synonyms().expand((term,)):
            found.update(expansion.words)
    return frozenset(found)


_TRAILING_PARTICIPLE = re.compile(r"(?<=\w)\s+\w{3,}ed\s*$", re.IGNORECASE)


def object_heads(description: Any) -> frozenset[str] | None:
    """When a description says the parameter is a form of something (`the name of the Key Vault`,
    `the number of bedrooms required`), the terms that thing is named by: its head nouns (`vault`;
    `bedroom`) and the form word; None when it says no such thing."""
    if not isinstance(description, str):
        return None
    phrase = _subject(description)
    joint = _OF.search(phrase)
    if not joint or not {singular(w) for w in words(phrase[: joint.start()])} & FORM_WORDS:
        return None
    heads = set(terms(phrase[: joint.start()]))
    for part in _COORDINATION.split(_TRAILING_PARTICIPLE.sub("", phrase[joint.end() :])):
        found = re.findall(r"[a-z0-9]+", part.lower())
        if found:
            heads |= terms(found[-1])
    return frozenset(heads)


def names_the_object(passed: str, name: str, prop: Mapping[str, Any]) -> bool:
    """Whether the passed name is the thing a "form of thing" description names, not a word that
    qualifies it: `key` is no `vault` ("the name of the Key Vault"), `database` no `account` ("the
    name of the Cosmos DB account"). A passed name the parameter's own name says needs no more."""
    own = terms(" ".join(words(passed)))
    if own and own <= terms(" ".join(words(name))):
        return True
    heads = object_heads(prop.get("description"))
    return heads is None or bool(_passed_head(passed) & heads)


_DIRECTIONS = {"from": "from", "source": "from", "src": "from", "origin": "from", "to": "to", "target": "to"}
_DIRECTIONS |= {"dest": "to", "dst": "to", "destination": "to", "into": "to"}


def _directions(text_words: Sequence[str]) -> set[str]:
    return {_DIRECTIONS[w] for w in text_words if w in _DIRECTIONS}


def same_direction(passed: str, name: str, prop: Mapping[str, Any]) -> bool:
    """A passed name that says a direction (`from_city`, `to_city`, `origin`) fits only a parameter
    whose name or subject says the same one: search terms drop `from` and `to` as stop words, and
    a hotel's `location` is neither the city a journey starts from nor the one it goes to."""
    ours = _directions(words(passed))
    if not ours:
        return True
    description = prop.get("description")
    subject = _subject(description) if isinstance(description, str) else ""
    theirs = _directions(words(name)) | _directions(re.findall(r"[a-z]+", subject.lower()))
    return ours <= theirs


def _describedterms(name: str, prop: Mapping[str, Any]) -> frozenset[str]:
    description = prop.get("description")
    text = " ".join(words(name)) + (" " + defining_part(description) if isinstance(description, str) else "")
    return terms(text)


def _may_take(passed: str, name: str, required: Sequence[str]) -> bool:
    """Not an identifier (an id is not named by prose); not a name the passed one qualifies
    (`travel_mode` is not any `mode`, `from_longitude` not any `longitude`); a name that qualifies
    the passed one only when the call lacks it (`date` for the `departure_date` a flight search
    requires, not for an optional `return_date`)."""
    ours = {singular(w) for w in words(passed)}
    theirs = {singular(w) for w in words(name)}
    if not theirs or words(name)[-1] in ID_WORDS or theirs < ours:
        return False
    return not (ours < theirs and name not in required)


def accepts(prop: Any, value: Any) -> bool:
    """Whether the parameter's own schema takes the value as it is (no `$ref`: nothing to resolve it by)."""
    if not isinstance(prop, dict) or "$ref" in prop:
        return False
    try:
        cls = jsonschema.validators.validator_for(prop, default=jsonschema.Draft202012Validator)
        return cls(prop, format_checker=cls.FORMAT_CHECKER).is_valid(value)
    except (jsonschema.exceptions.SchemaError, TypeError, ValueError):
        return False


def readable(passed: str, value: Any) -> bool:
    """Whether a passed name may be read by what it holds at all: not a flag (a boolean's meaning is
    its exact name), not a bare identifier (an id is not named by prose), not a name of no words."""
    return not isinstance(value, bool) and bool(words(passed)) and not set(words(passed)) <= ID_WORDS


def named_by_several(passed: str, properties: Mapping[str, Any]) -> bool:
    """The passed name's own words in several parameters' names say which kind of value, not which
    one (`latitude` beside home_/work_latitude, `filename` beside source_/destination_filename),
    even when the others were passed."""
    own = terms(" ".join(words(passed)))
    return bool(own) and sum(1 for name in properties if own <= terms(" ".join(words(name)))) > 1


def described_match(
    passed: str,
    value: Any,
    properties: Mapping[str, Any],
    free: Sequence[str],
    required: Sequence[str],
    tool_words: frozenset[str] = frozenset(),
    reads: bool = False,
) -> ParamMatch:
    """The one free parameter whose name or description speaks of `passed` and whose type takes `value`."""
    if not readable(passed, value) or named_by_several(passed, properties):
        return ParamMatch(None, None)
    speaking = [
        name
        for name in properties
        if isinstance(properties.get(name), dict)
        and _may_take(passed, name, required)
        and _speaks_of(passed, name, _describedterms(name, properties[name]), tool_words)
        and accepts(properties[name], value)
        and (generic(passed) or names_the_object(passed, name, properties[name]))
        and same_direction(passed, name, properties[name])
    ]
    taken = [name for name in speaking if name not in free]
    if taken:
        # A parameter the call did pass fits as well (`song` beside `track`, "the title of the
        # song"): two arguments for one value, not a rename.
        return ParamMatch(None, "described", tuple(speaking))
    fitting = [name for name in speaking if name in free]
    needed = [name for name in fitting if name in required]
    # An optional parameter changes what a call does that would run without it: only a tool that
    # reads may take one on this evidence (a search narrowed wrongly returns too little; a write so
    # changed does something else).
    for group in (needed, fitting) if reads else (needed,):
        if len(group) == 1:
            return ParamMatch(group[0], "described")
        if group:
            return ParamMatch(None, "described", tuple(group))
    return ParamMatch(None, None)
