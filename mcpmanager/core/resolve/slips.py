"""Names one slip of a key away from a tool's: every word the same but one, and that one misspelt.

`get_issuue` is `get_issue` with one letter doubled. When exactly one tool's name is one such slip
away, the call is that name misspelt, and other tools that would fit only a looser reading
(`jira_get_issue`: a word more) are no rivals: they would not be for the name spelt right. A name
without its server's prefix counts too, after the full names (as `normalized` comes after `exact`).
The safety rules still apply (see names.py): a slip never lands on a tool that destroys, nor on one
that does another kind of thing.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Generic, TypeVar

from mcpmanager.core.resolve.actions import is_verb
from mcpmanager.core.resolve.similarity import distance
from mcpmanager.core.resolve.words import singular

T = TypeVar("T")
SHORT = 4  # in a word this long or shorter, only two letters swapped are a slip (`tab` is no `tag`)


def one_slip(called: str, known: str) -> bool:
    """One edit apart: a letter changed, left out, added, or two swapped; in a short word only two
    swapped. Not another number (`tickets`: a spelling), and never from a real verb, which is what a
    call says (`clone_branch` is no slip of `close_branch`)."""
    if called == known or is_verb(called) or singular(called) == singular(known) or called.isdigit():
        return False
    if distance(called, known, 1) != 1:
        return False
    if max(len(called), len(known)) <= SHORT:
        return len(called) == len(known) and sorted(called) == sorted(known)
    return True


class SlipIndex(Generic[T]):
    """Tools by their names' words with one position left out, to find one-slip names fast."""

    def __init__(self) -> None:
        self._by_rest: dict[tuple[int, tuple[str, ...]], list[tuple[T, str, int]]] = defaultdict(list)

    def add(self, parts: tuple[str, ...], item: T, rank: int = 0) -> None:
        """`rank`: 0 for a tool's full name, 1 for its name without its server's prefix."""
        for at, word in enumerate(parts):
            self._by_rest[(at, parts[:at] + parts[at + 1 :])].append((item, word, rank))

    def find(self, parts: tuple[str, ...]) -> list[T]:
        """The items whose names are one slip away from `parts`, full names first, without repeats."""
        found: list[tuple[int, T]] = []
        for at, word in enumerate(parts):
            for item, known, rank in self._by_rest.get((at, parts[:at] + parts[at + 1 :]), ()):
                if one_slip(word, known):
                    found.append((rank, item))
        best = min((rank for rank, _ in found), default=0)
        unique: list[T] = []
        for rank, item in found:
            if rank == best and item not in unique:  # (items may be unhashable: compared, not hashed)
                unique.append(item)
        return unique
