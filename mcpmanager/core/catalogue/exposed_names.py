"""Exposed tool names: short, valid, collision-free names for the merged catalogue.

Clients see one flat list of tools, so every (server, tool) pair needs a name that is

* valid everywhere: `[A-Za-z0-9_-]`, 1 to `max_length` (default 64) characters — the strictest rule
  among the clients (Claude, OpenAI-style function names);
* unique across all servers;
* stable: the same for the same set of tools, whatever order they are listed in, and as close to
  the server's own name as possible (clients and users recognise it).

The rules, in order of preference for each tool:

1. its own name, when no other server has a tool of that name (sanitised when it has other
   characters: `sanitize`);
2. `<server>__<tool>` for every tool whose name is on more than one server;
3. the server form plus a short hash of the pair, when sanitising or shortening still makes two
   names equal (`a.b` and `a b` on one server both sanitise to `a_b`);
4. further salted hashes in the (astronomically unlikely) case that a hash collides.

A name that is exactly a tool's original name wins a collision against names that were made up
(sanitised, prefixed), so `a_b` keeps its name when another server's `a.b` would also become `a_b`.
Names longer than `max_length` are shortened (`shorten`): the head and the distinguishing tail are
kept around a 6-hex hash of the full `server:tool`.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable

DEFAULT_MAX_LENGTH = 64
MIN_MAX_LENGTH = 16
SERVER_SEPARATOR = "__"
HASH_LENGTH = 6

_VALID = re.compile(r"[A-Za-z0-9_-]+")
_INVALID_RUN = re.compile(r"[^A-Za-z0-9_-]+")
_UNDERSCORES = re.compile(r"_{2,}")


def sanitize(name: str) -> str:
    """`name` made of `[A-Za-z0-9_-]` only. A name that is already valid is returned unchanged.

    Otherwise: accents are dropped (`café` → `cafe`), every run of other characters becomes one `_`,
    runs of `_` collapse to one, leading and trailing `_` go; nothing left gives `tool`.
    """
    if _VALID.fullmatch(name):
        return name
    decomposed = unicodedata.normalize("NFKD", name)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    cleaned = _UNDERSCORES.sub("_", _INVALID_RUN.sub("_", plain)).strip("_")
    return cleaned or "tool"


def _digest(key: str, length: int = HASH_LENGTH) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:length]


def shorten(name: str, key: str, max_length: int) -> str:
    """`name` if it fits in `max_length`, else its head and tail around a stable hash of `key`.

    `key` is the full `server:tool`, so two long names that share their head and tail still differ.
    The tail gets two thirds of the room: it tells the tools of one server apart (`..._by_id`).
    `name` should already be sanitised; the result then is too.
    """
    _check_max_length(max_length)
    if len(name) <= max_length:
        return name
    return _around(name, _digest(key), max_length)


def _around(name: str, digest: str, max_length: int) -> str:
    """The head and tail of `name` around `digest`, in at most `max_length` characters."""
    room = max_length - len(digest) - 2  # two `_` around the hash
    tail_length = room * 2 // 3
    head = name[: room - tail_length].rstrip("_")
    tail = name[len(name) - tail_length :].lstrip("_")
    return "_".join(part for part in (head, digest, tail) if part)


def _check_max_length(max_length: int) -> None:
    if max_length < MIN_MAX_LENGTH:
        raise ValueError(f"max_length must be at least {MIN_MAX_LENGTH}, got {max_length}")


def _with_hash(name: str, key: str, max_length: int) -> str:
    """`name` with a hash of `key` appended (shortened around the hash when that is too long)."""
    digest = _digest(key)
    suffixed = f"{name}_{digest}"
    return suffixed if len(suffixed) <= max_length else _around(name, digest, max_length)


def _candidate(server: str, tool: str, level: int, max_length: int) -> str:
    key = f"{server}:{tool}"
    if level == 0:
        return shorten(sanitize(tool), key, max_length)
    server_form = f"{sanitize(server)}{SERVER_SEPARATOR}{sanitize(tool)}"
    if level == 1:
        return shorten(server_form, key, max_length)
    # `server:tool` is ambiguous (`a:` + `b` and `a` + `:b`); the hashed forms must tell every pair apart.
    exact_key = json.dumps([server, tool])
    if level == 2:
        return _with_hash(server_form, exact_key, max_length)
    return _with_hash(server_form, f"{exact_key}#{level}", max_length)


def _is_original(server: str, tool: str, level: int, name: str) -> bool:
    """Whether `name` is the tool's own name (level 0) or its unaltered server form (level 1)."""
    if level == 0:
        return name == tool
    return level == 1 and name == f"{server}{SERVER_SEPARATOR}{tool}"


def assign_exposed_names(
    tools: Iterable[tuple[str, str]], max_length: int = DEFAULT_MAX_LENGTH
) -> dict[tuple[str, str], str]:
    """The exposed name of every (server, tool name) pair: valid, unique, independent of input order.

    Repeated pairs are one tool. Raises ValueError when `max_length` is below 16.
    """
    _check_max_length(max_length)
    pairs = sorted(set(tools))
    servers_per_name = Counter(tool for _, tool in pairs)
    levels = {pair: 0 if servers_per_name[pair[1]] == 1 else 1 for pair in pairs}
    while True:
        names = {pair: _candidate(*pair, levels[pair], max_length) for pair in pairs}
        holders: defaultdict[str, list[tuple[str, str]]] = defaultdict(list)
        for pair, name in names.items():
            holders[name].append(pair)
        clashes = [group for group in holders.values() if len(group) > 1]
        if not clashes:
            return names
        for group in clashes:
            # An unaltered name keeps it against made-up ones (the lowest level wins among those);
            # everyone else moves on to the next form.
            originals = [p for p in group if _is_original(*p, levels[p], names[p])]
            keeper: tuple[str, str] | None = None
            if originals:
                lowest = min(levels[p] for p in originals)
                at_lowest = [p for p in originals if levels[p] == lowest]
                keeper = at_lowest[0] if len(at_lowest) == 1 else None
            for pair in group:
                if pair != keeper:
                    levels[pair] += 1
