"""What a tool does, as far as resolution's safety rules care: reads, writes or destroys.

A guessed name may land on a tool with another name, but never on one that does something else:
`delete_issue` is not `get_issue`, however close the spelling. And no guess ever lands on a tool that
destroys data: those are called by their exact name (or a spelling of it) or not at all.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import IntEnum
from typing import Any


class Action(IntEnum):
    """Ordered by risk: a name with several verbs (`get_or_create`) counts as its riskiest."""

    READ = 1
    WRITE = 2
    DELETE = 3


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_VERBS: dict[Action, frozenset[str]] = {
    Action.READ: _set(
        "get read list search find fetch show describe view lookup retrieve check count inspect browse "
        "download query peek stat stats exists validate analyze analyse summarize explain compare diff "
        "preview watch monitor"
    ),
    Action.WRITE: _set(
        "create add new make insert post write update edit modify set put patch upload save append rename "
        "move copy push commit merge publish import assign fork replace upsert apply change enable install "
        "register upgrade configure send submit deploy restore archive approve invite schedule pay "
        "transfer stage unstage checkout rebase revert clone switch"
    ),
    Action.DELETE: _set(
        "delete remove rm del drop destroy purge erase clear reset kill terminate truncate wipe uninstall "
        "revoke unlink prune flush discard overwrite disable unregister unpublish deprovision shutdown "
        "cancel close stop abort reject unassign unstar unfollow ban block"
    ),
}
_CLASS_OF = {verb: action for action, verbs in _VERBS.items() for verb in verbs}
# Verbs of no class above: they run or drive something (a browser, a process).
_OTHER_VERBS = _set(
    "run execute exec invoke start launch navigate browse click tap call trigger open take type fill press "
    "hover select scroll evaluate eval convert translate calculate compute render draw play"
)


# Verbs that name the same operation in tool names (a model swaps one for another). Not transitive
# across groups; `get` (one thing) and `list` (many) stay apart.
VERB_GROUPS: tuple[tuple[str, ...], ...] = (
    ("get", "fetch", "retrieve", "read", "obtain", "load"),
    ("list", "enumerate", "ls"),
    ("search", "find", "query", "lookup"),
    ("create", "add", "new", "make", "insert"),
    ("update", "edit", "modify", "change", "set", "patch", "put"),
    ("delete", "remove", "rm", "del", "erase", "destroy"),
    ("write", "save", "store", "put", "upload"),
    ("send", "post"),
    ("run", "execute", "exec", "invoke"),
    ("start", "launch"),
    ("stop", "terminate", "kill", "halt", "cancel", "abort"),
    ("show", "display", "view"),
)


# Reading verbs of neighbouring kinds: getting one thing, listing many, searching. A model that says
# `get_commits` for `list_commits`, or `list_organizations` for `find_organizations`, is close, though
# not as close as with a synonym; getting and searching are further apart (`query` is not `retrieve`).
_GETTING = frozenset({"get", "fetch", "retrieve", "read", "show", "view", "obtain", "load"})
_LISTING = frozenset({"list", "enumerate", "ls"})
_SEARCHING = frozenset({"search", "find", "query", "lookup"})


def same_operation(a: str, b: str) -> bool:
    """Whether two verbs name one operation: synonyms, or two ways of getting one thing."""
    if a == b or (a in _GETTING and b in _GETTING):
        return True
    return any(a in group and b in group for group in VERB_GROUPS)


def related_readers(a: str, b: str) -> bool:
    return (a in _LISTING and (b in _GETTING or b in _SEARCHING)) or (
        b in _LISTING and (a in _GETTING or a in _SEARCHING)
    )


def is_verb(word: str) -> bool:
    return word in _CLASS_OF or word in _OTHER_VERBS


def action_of(parts: Iterable[str]) -> Action | None:
    """The riskiest action a name's words say it takes; None when no word is a known verb."""
    found = [_CLASS_OF[w] for w in parts if w in _CLASS_OF]
    return max(found) if found else None


# The DELETE verbs that destroy data (the rest end or refuse something: `stop_search`, `close_issue`).
_DESTROYING = _set(
    "delete remove rm del drop destroy purge erase clear reset kill terminate truncate wipe uninstall "
    "revoke unlink prune flush discard overwrite unregister unpublish deprovision shutdown"
)


def reads_only(parts: Iterable[str], spec: Mapping[str, Any]) -> bool:
    """Whether a tool only reads: by annotation (`readOnlyHint: true`), or by its name's verbs."""
    annotations = spec.get("annotations")
    if isinstance(annotations, Mapping) and annotations.get("readOnlyHint") is True:
        return True
    return action_of(parts) == Action.READ


def is_destructive(parts: Iterable[str], spec: Mapping[str, Any]) -> bool:
    """By annotation (`destructiveHint: true`), or by its name's verbs; a read-only tool never is.

    A false `destructiveHint` does not clear a name that says `delete`: annotations are the server's
    word, unverified, and the cost of trusting a wrong one is the user's data.
    """
    annotations = spec.get("annotations")
    if isinstance(annotations, Mapping):
        if annotations.get("readOnlyHint") is True:
            return False
        if annotations.get("destructiveHint") is True:
            return True
    return any(word in _DESTROYING for word in parts)
