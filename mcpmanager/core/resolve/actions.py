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
        "transfer"
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
    ("update", "edit", "modify", "change", "set", "patch"),
    ("delete", "remove", "rm", "del", "erase", "destroy"),
    ("write", "save", "store"),
    ("run", "execute", "exec", "invoke"),
    ("start", "launch"),
    ("stop", "terminate", "kill", "halt"),
    ("show", "display", "view"),
)


# Verbs that all read, across those groups: a model that says `get_commits` for `list_commits` is
# close, though not as close as a synonym.
READING_VERBS = frozenset({"get", "list", "show", "view", "search", "find", "read", "fetch", "query", "retrieve"})


def is_verb(word: str) -> bool:
    return word in _CLASS_OF or word in _OTHER_VERBS


def action_of(parts: Iterable[str]) -> Action | None:
    """The riskiest action a name's words say it takes; None when no word is a known verb."""
    found = [_CLASS_OF[w] for w in parts if w in _CLASS_OF]
    return max(found) if found else None


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
    return action_of(parts) is Action.DELETE
