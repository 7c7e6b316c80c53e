"""Whether a guessed tool name may land on a tool, and whether a tool fits a call as well as the best.

A guess never lands on a tool that destroys, nor on one that does another kind of thing than the
call says (docs/resolution.md, Safety rules). A tool a guess may not land on can still fit a call as
well as the best does, and then it makes the call ambiguous: a bare `undo` names `excel_undo` no
more than another server's `undo_edit`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpmanager.core.resolve.actions import Action, action_of, is_destructive, is_verb
from mcpmanager.core.resolve.similarity import GENERIC_TAILS, TYPO, Match, word_similarity
from mcpmanager.core.resolve.words import head_of


def unsafe(called: tuple[str, ...], parts: tuple[str, ...], spec: Mapping[str, Any]) -> str | None:
    """Why a guess called `called` must not land on the tool named `parts`, or None when it may."""
    if is_destructive(parts, spec):
        return "destructive"
    # The call's verbs; failing any, its words misspelt from the tool's verbs (`creat_issue`). A
    # word that is a misspelling of one of the tool's words that is no verb is read as that word
    # (`unstage` of `git_diff_unstage` is `unstaged`), unless it is the only verb the call has:
    # then it is what the call asks to do (`delete_file` is not `deleted_files`).
    modifiers = [w for w in called if w not in parts and _misspells_a_non_verb(w, parts)]
    theirs = action_of(w for w in called if w not in modifiers) if modifiers else None
    if theirs is None:
        theirs = action_of(called)
    if theirs is None:
        theirs = action_of(t for t in parts if is_verb(t) and any(word_similarity(w, t) >= TYPO for w in called))
    ours = action_of(parts)
    if theirs is not None and ours is not None and theirs != ours:
        return "another action"
    if theirs is not None and theirs > Action.READ and ours is None:
        return "another action"  # asked to change something: only a tool that says it changes it
    if theirs is None and ours is not None and ours > Action.READ:
        return "another action"  # a name that says no verb is not a licence to write
    return None


def fits_as_well(
    called: tuple[str, ...], sure: frozenset[str], parts: tuple[str, ...], spec: Mapping[str, Any]
) -> bool:
    """Whether the tool fits the call as well as the best, as far as what it does goes: it does the
    same kind of thing, or the call says no action and the tool has every word of it (`sure`: the
    called words the tool's name matched surely)."""
    if unsafe(called, parts, spec) != "another action":
        return True
    return action_of(called) is None and set(called) <= sure


def _misspells_a_non_verb(word: str, parts: tuple[str, ...]) -> bool:
    return any(not is_verb(part) and word_similarity(word, part) >= TYPO for part in parts)


def core_of(called: tuple[str, ...], match: Match) -> set[str]:
    """What the call is about, as far as it was surely matched: its head thing, or its things
    (words that only say what form a result takes, such as `details`, tell no tool apart)."""
    at = head_of(called)
    if at >= 0 and not is_verb(called[at]) and called[at] in match.sure and called[at] not in GENERIC_TAILS:
        return {called[at]}
    return {w for w in match.sure if not is_verb(w) and w not in GENERIC_TAILS}
