"""Learning from use: which calls teach something, and how what was learned lifts tools.

A call teaches only when its tool was among the results of a `discover_tools` query the same client
session made shortly before (or among the "did you mean" names it was answered since): then the
query found the tool, and the model chose it. Each shown tool counts once per query, so a tool
called ten times in a row after one search is one lesson, not ten.

The lift is a re-ranking step over the search's results. What was learned is kept per tool as a
profile: the words (the search's own analyzer: stems, no stop words) of the queries that led to it,
each as often as it was used. A later query is scored against every profile with BM25, its words
weighted by their rarity in the catalogue (a word most tools have tells nothing), and divided by
the most a profile could score: 1 when a tool's learned queries hold all of the query's words.
A confirmation (the user took the search's first result) weighs less than a correction (the user
took a lower one): the search knew those already. Only the best profile lifts, and by its margin
over the second: queries about sibling tools (`list topics`, `list subscriptions of a topic`) share
most words, and a lift they both earn must not decide between them. The lift is added to the
score divided by the best one, so it means the same whatever the search's scale; the tool may come
from beyond the results, which is how a paraphrase the search cannot bridge finds the tool the
user took for it before.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp_types import CallToolResult
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpmanager.core.catalogue.catalogue import CatalogueTool
from mcpmanager.core.proxy.connections import Connections
from mcpmanager.core.proxy.learned import Learned, LearnedStore
from mcpmanager.core.search.analyzer import analyze_query
from mcpmanager.core.tasks import spawn

RECENT = 600.0  # seconds: a call this long after a query still counts as following it
QUERIES_PER_SESSION = 4  # a model often searches a few times, then calls
SESSIONS = 64  # sessions followed at once (the oldest forgotten first)
MIN_SIMILARITY = 0.4  # a profile holding less of the query than this is about another request
LIFT = 2.0  # the lift of a margin of 1, in units of the best search score: twice the best
CONFIRMED = 0.25  # the weight of a use where the tool was the search's first result already
POOL = 20  # results asked of the search beyond the limit, for the re-ranking to reorder
_K1, _B = 1.2, 0.75  # BM25's usual saturation and length normalisation

Ranked = list[tuple[str, float]]  # (tool key, score), best first


@dataclass
class _Shown:
    query: str
    keys: dict[str, int]  # tool key → its place in the results, 1 first
    at: float


@dataclass
class _Profiles:
    """What was learned, per tool: how often each word occurred in the queries that led to it (a
    query counting as often as it was used), and the profile's length in words."""

    words: dict[str, dict[str, float]] = field(default_factory=dict)  # word → tool → occurrences
    lengths: dict[str, float] = field(default_factory=dict)  # tool → words in its profile
    average: float = 1.0


def _words(text: str) -> frozenset[str]:
    """The analysed words of `text` but numbers: an order's or a ticket's number is a value of the
    request, not what it is about (`order 12` and `order 31` ask the same)."""
    return frozenset(word for word in analyze_query(text).words if not word.isdigit())


def _profiles(entries: Sequence[Learned]) -> _Profiles:
    profiles = _Profiles()
    for entry in entries:
        words = _words(entry.query)
        weight = entry.count * (1.0 if entry.place > 1 else CONFIRMED)
        if weight <= 0.0:
            continue
        for word in words:
            by_tool = profiles.words.setdefault(word, {})
            by_tool[entry.tool] = by_tool.get(entry.tool, 0.0) + weight
        profiles.lengths[entry.tool] = profiles.lengths.get(entry.tool, 0.0) + weight * len(words)
    if any(profiles.lengths.values()):
        profiles.average = sum(profiles.lengths.values()) / len(profiles.lengths)
    return profiles


@dataclass
class _Rarity:
    """In how many of the catalogue's tools each word occurs (by name and description)."""

    count: int = 0
    df: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, texts: Iterable[str]) -> _Rarity:
        rarity = cls()
        for text in texts:
            rarity.count += 1
            for word in _words(text):
                rarity.df[word] = rarity.df.get(word, 0) + 1
        return rarity


class Learning:
    def __init__(self, store: LearnedStore | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.store = store or LearnedStore()
        self._clock = clock
        self._shown: OrderedDict[Hashable, deque[_Shown]] = OrderedDict()
        self._model: _Profiles | None = None
        self._rarity: _Rarity | None = None
        self._texts: Callable[[], Iterable[str]] | None = None
        self._weighing: Callable[[], Iterable[str]] | None = None  # the texts being counted in a thread
        self.enabled = True  # `proxy.learnFromUse`: off, nothing is learned and nothing learned lifts
        self.store.changed.connect(self._store_changed)

    def _store_changed(self, _: None) -> None:
        self._model = None
        self._weigh()  # the first lesson: word weights are needed from now on

    def catalogue_changed(self, texts: Callable[[], Iterable[str]]) -> None:
        """The tools' texts changed: word weights follow them."""
        self._texts, self._rarity = texts, None
        self._weigh()

    def _weigh(self) -> None:
        """Count the words of the catalogue's texts, once something was learned: at once without an
        event loop (a command, the benchmark); with one, in a thread (a second at 20,000 tools must
        not hold up the loop; until it is done the lift weighs every word alike)."""
        texts = self._texts
        if texts is None or self._rarity is not None or self._weighing is texts or len(self.store) == 0:
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self._rarity = _Rarity.of(texts())
            return
        self._weighing = texts
        spawn(self._weigh_in_thread(texts, list(texts())), name="learned word weights")

    async def _weigh_in_thread(self, texts: Callable[[], Iterable[str]], snapshot: list[str]) -> None:
        try:
            rarity = await asyncio.to_thread(_Rarity.of, snapshot)
        finally:
            if self._weighing is texts:
                self._weighing = None
        if self._texts is texts:  # the catalogue did not change meanwhile
            self._rarity = rarity

    # Which calls count ----------------------------------------------------------------------------

    def discovered(self, session: Hashable, query: object, keys: Sequence[str]) -> None:
        """`session` was shown `keys` for `query` (a query that is not text was answered with nothing)."""
        if not self.enabled or not keys or not isinstance(query, str):
            return
        shown = self._shown.pop(session, None) or deque(maxlen=QUERIES_PER_SESSION)
        shown.append(_Shown(query, {key: place for place, key in enumerate(keys, 1)}, self._clock()))
        self._shown[session] = shown
        while len(self._shown) > SESSIONS:
            self._shown.popitem(last=False)

    def suggested(self, session: Hashable, keys: Sequence[str]) -> None:
        """`session` was answered "did you mean" `keys`: they join its latest query's results."""
        shown = self._shown.get(session)
        if shown and keys and self._clock() - shown[-1].at <= RECENT:
            places = shown[-1].keys
            for key in keys:
                places.setdefault(key, len(places) + 1)

    def called(self, session: Hashable, key: str) -> Learned | None:
        """`session` called `key` successfully: learn it if a recent query of the session showed it."""
        shown = self._shown.get(session)
        if not shown:
            return None
        now = self._clock()
        for seen in reversed(shown):  # the latest query that showed the tool is the one that found it
            if now - seen.at > RECENT:
                break
            if key in seen.keys:
                place = seen.keys.pop(key)  # once per query
                return self.store.record(seen.query, key, place=place)
        return None

    def session_closed(self, session: Hashable) -> None:
        self._shown.pop(session, None)

    # The lift -------------------------------------------------------------------------------------

    def lifts(self, query: str) -> dict[str, float]:
        """By tool key: how much what was learned lifts it for `query` (only tools it lifts).

        BM25 of the query against each tool's profile of learned words, divided by the most any
        profile could score (every query word, saturated): 1 means the learned queries of the tool
        hold all of the query's words, rare ones weighing most."""
        if not self.enabled or len(self.store) == 0:
            return {}
        words = _words(query)
        if not words:
            return {}
        if self._model is None:
            self._model = _profiles(self.store.entries())
        profiles, rarity = self._model, self._rarity or _Rarity()
        count = max(rarity.count, 1)
        weights = {word: math.log(1.0 + (count + 1) / (rarity.df.get(word, 0) + 1)) for word in words}
        most = sum(weights.values())
        scores: dict[str, float] = {}
        for word in words:
            for tool, occurrences in profiles.words.get(word, {}).items():
                norm = 1.0 - _B + _B * profiles.lengths[tool] / profiles.average
                saturated = occurrences * (_K1 + 1.0) / (occurrences + _K1 * norm) / (_K1 + 1.0)
                scores[tool] = scores.get(tool, 0.0) + weights[word] * saturated
        ranked = sorted((score / most for score in scores.values()), reverse=True)
        runner_up = ranked[1] if len(ranked) > 1 else 0.0
        lifted: dict[str, float] = {}
        for tool, score in scores.items():
            similarity = score / most
            if similarity >= MIN_SIMILARITY and similarity > runner_up:
                lifted[tool] = LIFT * (similarity - runner_up)
        return lifted

    def rerank(self, query: str, ranked: Ranked, limit: int) -> Ranked:
        """`ranked` (the search's results for `query`, best first) with the learned tools lifted."""
        lifted = self.lifts(query)
        if not lifted:
            return ranked[:limit]
        best = max((score for _, score in ranked), default=0.0) or 1.0
        scores = {key: score / best for key, score in ranked}
        order = {key: position for position, (key, _) in enumerate(ranked)}
        for key, lift in lifted.items():
            scores[key] = scores.get(key, 0.0) + lift
        # Equal scores keep the search's order; a tool from beyond the results comes after those.
        return sorted(scores.items(), key=lambda item: (-item[1], order.get(item[0], len(order))))[:limit]


def session_of(ctx: ServerRequestContext[Any], connections: Connections) -> Hashable:
    """Who a query or a call came from: a handshake-era client's connection; a 2026-07-28 client has
    none beyond one request, so its name stands for it."""
    session = ctx.session
    if session.protocol_version in MODERN_PROTOCOL_VERSIONS:
        params = session.client_params
        return ("client", params.client_info.name if params is not None else "")
    return ("connection", connections.key(session))


def shown_keys(found: CallToolResult, lookup: Callable[[str], CatalogueTool | None]) -> list[str]:
    """The keys of the tools a discover_tools answer showed, in its order (`lookup`: by exposed name)."""
    content = found.structured_content or {}
    names = [t.get("name") for t in content.get("tools", ()) if isinstance(t, dict)]
    return [tool.key for name in names if isinstance(name, str) and (tool := lookup(name)) is not None]
