"""Which declared parameter a passed argument name means, if exactly one is clearly meant.

Tiers, most certain first; the first tier with any candidate decides, and it must have exactly one:

1. `alias` — the user's parameter aliases for this tool (`tools."server:tool".params`);
2. `spelling` — the same words otherwise written: case, separators, camelCase, plural (`repoPath`,
   `repo-path` → `repo_path`; `tag` → `tags`);
3. `context` — the same once the tool's own words are left out (`issue_title` → `title` on
   `create_issue`, and back);
4. `synonym` — a common synonym (`q`, `question`, `search_term` → `query`; `file_path` → `path`;
   `dir` → `directory`; `max_results` → `limit`; `src` → `source`; `db` → `database`; `status` →
   `state`), or one word of a name so replaced, direction kept (`from_timezone` → `source_timezone`,
   `pr_number` → `pull_number`);
5. `abbreviation` — the same words, some cut short (`old_str` → `old_string`, `max_len` → `max_length`);
6. `id` — an identifier for the tool's one identifier parameter (`id` → `issue_id`; a bare `id`
   maps nowhere on a tool with several, even beside the tool's own thing's: `objectId` beside
   `namespaceId`), or the thing named by its id (`customer_id` → `customer`; not `channel` →
   `channel_id`: a model's `channel` may hold a name);
7. `partial` — the words of one parameter's name, and of no other declared one, when what the
   parameter's name adds is only a generic word (`repo` → `repo_path`, `issue` → `issue_number`,
   `start` → `start_date`) or the tool's own (`path` → `file_path` on `read_file`), or when the
   passed name adds a word that keeps the value the same (`cityName` → `city`). Never a qualifier:
   `run` is not `dry_run`, `delete` not `soft_delete`, `recursive` not `non_recursive`; and never a
   bare identifier (`id` → `parent_id` could widen what a call touches);
8. `path` — a bare `path` for the tool's one path parameter (`repo_path` on `git_status`), except on
   tools that can destroy data (a file's path taken for the repository's widens `git_reset`).

Only parameters declared and not passed are targets. The value is never looked at here: the repaired
arguments are validated against the schema afterwards, so `path` renamed onto an array `paths` with
a string value is refused there, not converted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mcpmanager.core.resolve.words import fold, number_key, singular, words

# Groups of argument names that mean the same in any tool. Written as words; compared folded.
_GROUPS: tuple[tuple[str, ...], ...] = (
    (
        "query",
        "q",
        "question",
        "search",
        "search_query",
        "search_term",
        "search_terms",
        "search_string",
        "query_string",
        "query_text",
        "term",
        "terms",
        "keyword",
        "keywords",
        "sql",
    ),
    ("path", "file_path", "filepath", "file", "filename", "file_name", "path_name", "full_path"),
    ("directory", "dir", "folder", "dir_path", "directory_path", "folder_path"),
    ("url", "uri", "link", "href", "web_url", "page_url", "website_url"),
    ("repo", "repository", "repo_name", "repository_name"),
    ("owner", "repo_owner", "repository_owner"),
    ("message", "msg"),
    ("content", "contents", "body", "text"),
    ("limit", "max_results", "max", "top_k", "top_n", "num_results", "max_count", "count", "page_size", "per_page"),
    ("offset", "skip"),
    ("language", "lang"),
    ("timezone", "tz", "time_zone"),
    ("description", "desc"),
    ("command", "cmd"),
    ("email", "email_address", "mail"),
    ("start_date", "from_date", "date_from", "since"),
    ("end_date", "to_date", "date_to", "until"),
    ("source", "src", "source_path"),
    ("destination", "dest", "dst", "destination_path"),
    ("database", "db", "database_name", "db_name"),
    ("pid", "process_id"),
    ("latitude", "lat"),
    ("longitude", "lng", "lon"),
    ("state", "status"),
    ("namespace", "ns"),
    ("symbol", "ticker", "ticker_symbol", "stock_symbol"),
)
# Words that mean the same inside a name (`from_timezone` is `source_timezone`): direction kept.
_WORD_GROUPS: tuple[tuple[str, ...], ...] = (
    ("from", "source", "src", "origin"),
    ("to", "target", "dest", "dst", "destination"),
    ("pr", "pull"),
)
_WORD_OF = {word: group[0] for group in _WORD_GROUPS for word in group}
_GROUP_OF = {fold(name): number for number, group in enumerate(_GROUPS) for name in group}
_ID_WORDS = frozenset({"id", "ids", "identifier", "uid", "uuid"})
ID_WORDS = _ID_WORDS
# What a parameter's name may add to a passed name for `partial`: words that say what form the value
# takes, not what the call does.
_GENERIC_PARTS = frozenset(
    {"path", "name", "text", "value", "string", "str", "url", "uri", "list", "key", "data", "date", "time", "number"}
)
# What a passed name may add to a parameter's and still carry the same value (`cityName` → `city`).
_SAME_VALUE_TAILS = frozenset({"name", "text", "value", "string", "str"})
_PATH_WORDS = frozenset({"path", "dir", "directory", "folder"})


@dataclass(frozen=True)
class ParamMatch:
    declared: str | None  # the parameter meant, None when none or several are
    how: str | None
    options: tuple[str, ...] = ()  # the equally likely parameters, when several


# Words that name one thing for good, so that a passed one and the tool's qualified one (`key` and
# `issue_key` on `jira_delete_issue`) are the same thing; unlike an `index`, which may count from 0
# or 1, or a `name`, which may be another thing's.
_HANDLE_WORDS = _ID_WORDS | {"key", "gid", "number"}


def _sure(how: str, passed: str, declared: str, tool_words: frozenset[str]) -> bool:
    """Whether a rename is sure enough for a tool that can destroy data: the same words otherwise
    spelt, an identifier onto the tool's one identifier (also when named with the tool's own
    thing: `id` → `block_id` on `delete_block`), or two names of one synonym group (`file_path`,
    `path`). Any other reading changes a word, and a word changed may change what a delete touches:
    `index` is not surely `paragraph_index`, nor `query` the `filter`."""
    if how in ("spelling", "id") or _grouped(passed, declared):
        return True
    rest = {w for w in words(passed) + words(declared) if w not in tool_words}
    return how == "context" and rest <= _HANDLE_WORDS


def map_name(
    passed: str,
    declared: Sequence[str],
    free: Sequence[str],
    aliases: Mapping[str, str],
    tool_words: frozenset[str],
    destructive: bool = False,
) -> ParamMatch:
    """The parameter among `free` (declared, not passed) that `passed` means. `tool_words`: the words
    of the tool's name; `destructive`: whether the tool can destroy data (no widening guesses then)."""
    alias = aliases.get(passed)
    if alias is not None:
        return ParamMatch(alias, "alias") if alias in free else ParamMatch(None, None)
    tool_words = tool_words | {singular(w) for w in tool_words}
    if set(words(passed)) <= _ID_WORDS:
        # A bare `id` means the tool's identifier only when the tool has exactly one.
        ids = [name for name in declared if words(name) and words(name)[-1] in _ID_WORDS]
        if len(ids) != 1:
            return ParamMatch(None, "id", tuple(i for i in ids if i in free))
    for how, test in (
        ("spelling", _same_spelling),
        ("context", lambda a, b: _same_in_context(a, b, tool_words)),
        ("synonym", _synonyms),
        ("abbreviation", _abbreviated),
        ("id", lambda a, b: _both_ids(a, b, tool_words) or _named_by_id(a, b)),
    ):
        found = [name for name in free if test(passed, name)]
        if len(found) == 1 and (not destructive or _sure(how, passed, found[0], tool_words)):
            return ParamMatch(found[0], how)
        if found:
            return ParamMatch(None, how, tuple(found))
    found = [
        name for name in declared if _part_of(passed, name, tool_words) or _part_of(name, passed, _SAME_VALUE_TAILS)
    ]
    if len(found) == 1 and found[0] in free and not destructive:
        return ParamMatch(found[0], "partial")
    if found and destructive:
        return ParamMatch(None, "partial", tuple(name for name in found if name in free))
    if len(found) > 1:
        return ParamMatch(None, "partial", tuple(name for name in found if name in free))
    if passed == "path" and not destructive:
        # The tool's one path (`repo_path` on `git_status`). Not on a tool that destroys: a file's
        # path read as the repository's would widen what `git_reset` touches.
        paths = [name for name in declared if words(name) and singular(words(name)[-1]) in _PATH_WORDS]
        if len(paths) == 1 and paths[0] in free:
            return ParamMatch(paths[0], "path")
    return ParamMatch(None, None)


def _same_spelling(a: str, b: str) -> bool:
    return fold(a) == fold(b) or number_key(words(a)) == number_key(words(b))


def _same_in_context(a: str, b: str, tool_words: frozenset[str]) -> bool:
    ours = tuple(w for w in words(a) if w not in tool_words)
    theirs = tuple(w for w in words(b) if w not in tool_words)
    left_out = ours != words(a) or theirs != words(b)
    return left_out and bool(ours) and ours == theirs


def _part_of(a: str, b: str, tool_words: frozenset[str]) -> bool:
    """`a`'s words are a run of `b`'s words (number-blind), and the rest of `b` is generic or the tool's."""
    ours, theirs = number_key(words(a)).split(), number_key(words(b)).split()
    if not ours or len(ours) >= len(theirs) or set(ours) <= _ID_WORDS:
        return False
    for start in range(len(theirs) - len(ours) + 1):
        if theirs[start : start + len(ours)] == ours:
            rest = theirs[:start] + theirs[start + len(ours) :]
            return all(w in _GENERIC_PARTS or w in tool_words for w in rest)
    return False


def _grouped(a: str, b: str) -> bool:
    group = _GROUP_OF.get(fold(a))
    return group is not None and group == _GROUP_OF.get(fold(b))


def _synonyms(a: str, b: str) -> bool:
    if _grouped(a, b):
        return True
    ours, theirs = words(a), words(b)
    return len(ours) > 1 and ours != theirs and _canonical(ours) == _canonical(theirs)


def synonyms_of(name: str) -> tuple[str, ...]:
    """The other names of `name`'s synonym group (`text` → content, contents, body)."""
    group = _GROUP_OF.get(fold(name))
    return () if group is None else tuple(n for n in _GROUPS[group] if fold(n) != fold(name))


def _canonical(parts: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(_WORD_OF.get(w, w) for w in parts)


def _abbreviated(a: str, b: str) -> bool:
    """The same words, one side writing some of them cut short (at least three letters kept)."""
    ours, theirs = words(a), words(b)
    if len(ours) != len(theirs) or ours == theirs:
        return False
    return all(x == y or _cut(x, y) or _cut(y, x) for x, y in zip(ours, theirs, strict=True))


def _cut(short: str, long: str) -> bool:
    return 3 <= len(short) < len(long) and long.startswith(short) and not short.isdigit()


def _named_by_id(a: str, b: str) -> bool:
    """`customer_id` passed where the tool says `customer`: APIs name a thing by its id. Not the other
    way: what a model passes as `channel` may be a name (`#general`), not the id `channel_id` wants."""
    ours, theirs = words(a), words(b)
    return bool(theirs) and len(ours) == len(theirs) + 1 and ours[-1] in _ID_WORDS and ours[:-1] == theirs


def _both_ids(a: str, b: str, tool_words: frozenset[str]) -> bool:
    """Both name an identifier, of the same thing or of the thing the tool is about."""
    ours, theirs = words(a), words(b)
    if not (ours and theirs and ours[-1] in _ID_WORDS and theirs[-1] in _ID_WORDS):
        return False
    subject, target = set(ours[:-1]), set(theirs[:-1])
    if subject == target:
        return True
    return (not subject and target <= tool_words) or (not target and subject <= tool_words)
