"""Filter-as-you-type for the catalogue table, fast at 20,000 tools; and the filter by kind.

Every typed word must occur (case-insensitively) in a row's name, exposed name, server, aliases or
description (for a prompt or resource also its title, MIME type, arguments); a kind filter keeps
only tools, prompts, or resources and templates. The rows are matched in bulk against the model's
precomputed haystacks; Qt's per-row `filterAcceptsRow` (called from C++ for every row, about 1 µs
each through PySide) only looks the answer up. Typing on narrows, so only the rows still shown are
tested; erasing goes back through queries already answered (kept until the model changes). Sorting
is the model's own (see there).
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QObject, QPersistentModelIndex, QSortFilterProxyModel, Qt

from mcpmanager.gui.catalogue_model import CatalogueModel

_REMEMBERED = 64  # answered queries kept for backspacing


class CatalogueFilter(QSortFilterProxyModel):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._model: CatalogueModel | None = None
        self._words: tuple[str, ...] = ()
        self._kinds: frozenset[str] | None = None  # None: every kind
        self._accepted: frozenset[int] | None = None  # None: every row
        self._revision = -1  # the model revision the answers below belong to
        self._answers: dict[tuple[frozenset[str] | None, tuple[str, ...]], frozenset[int]] = {}

    def setSourceModel(self, model: QAbstractItemModel) -> None:
        if not isinstance(model, CatalogueModel):
            raise TypeError("CatalogueFilter filters a CatalogueModel")
        self._model = model
        self._revision = -1
        super().setSourceModel(model)

    def source(self) -> CatalogueModel:
        if self._model is None:
            raise RuntimeError("CatalogueFilter has no model yet")
        return self._model

    @property
    def words(self) -> tuple[str, ...]:
        return self._words

    @property
    def kinds(self) -> frozenset[str] | None:
        return self._kinds

    def set_query(self, text: str) -> bool:
        """Filter by `text`; True if the rows shown changed."""
        return self._set(tuple(dict.fromkeys(text.casefold().split())), self._kinds)

    def set_kinds(self, kinds: frozenset[str] | None) -> bool:
        """Show only rows of these kinds (`catalogue_offers.GROUPS`), None for all; True if the rows shown changed."""
        return self._set(self._words, kinds)

    def _set(self, words: tuple[str, ...], kinds: frozenset[str] | None) -> bool:
        if words == self._words and kinds == self._kinds:
            return False
        revision = self.source().revision
        stale = revision != self._revision  # the rows changed since the last answer
        if stale:
            self._revision = revision
            self._answers.clear()
        # Narrowing from the words before holds only while the same kinds are shown.
        previous = () if stale or kinds != self._kinds else self._words
        self._words, self._kinds = words, kinds
        accepted = self._answer(previous)
        if accepted == self._accepted and not stale:
            return False  # e.g. "create issue" → "create issu": nothing to redo, nothing to repaint
        self._accepted = accepted
        # One layout change costs the same whatever moved; the incremental filter change removes and
        # inserts row runs one by one, and the view relays out per run (measured up to 4× slower).
        self.invalidate()
        return True

    def _sync(self) -> None:
        """The rows moved or changed under the current query: answer it again."""
        revision = self.source().revision
        if revision != self._revision:
            self._revision = revision
            self._answers.clear()
            self._accepted = self._answer(())

    def _answer(self, previous: tuple[str, ...]) -> frozenset[int] | None:
        words, kinds = self._words, self._kinds
        if not words and kinds is None:
            return None
        known = self._answers.get((kinds, words))
        if known is not None:
            return known
        model = self.source()
        haystacks = model.haystacks()
        # Each old word inside a new one: the new query can only match rows the old one matched.
        narrowing = previous and all(any(old in new for new in words) for old in previous)
        candidates: Iterable[int] = range(len(haystacks))
        if narrowing and self._accepted is not None:
            candidates = self._accepted
        elif kinds is not None:
            row_kinds = model.kinds()
            candidates = [i for i in candidates if row_kinds[i] in kinds]
        for word in words:
            candidates = [i for i in candidates if word in haystacks[i]]
        found = frozenset(candidates)
        if len(self._answers) >= _REMEMBERED:
            self._answers.pop(next(iter(self._answers)))
        self._answers[(kinds, words)] = found
        return found

    def filterAcceptsRow(self, source_row: int, source_parent: QModelIndex | QPersistentModelIndex) -> bool:
        # Called once per source row on every change: keep it to a lookup.
        accepted = self._accepted
        if accepted is None:
            return True
        model = self._model
        if model is not None and self._revision != model.revision:
            self._sync()
            accepted = self._accepted
        return accepted is None or source_row in accepted

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self.source().sort(column, order)
