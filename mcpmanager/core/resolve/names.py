"""Tool-name resolution: from what a model called to one catalogue tool, or to "did you mean".

The ladder, first match wins (ARCHITECTURE §7):

1. `exact` — an exposed name;
2. `alias` — a name the config gives a tool (`tools."server:tool".aliases`);
3. `namespaced` — `server:tool`, `server.tool`, `server/tool`, `server__tool`, `server_tool` with the
   server's name in any case or spelling and the tool's own name;
4. `original` — the server's own name for the tool, when only one server has it;
5. `normalized` — the same words spelled otherwise: case, separators, camelCase, plural/singular,
   word order (not across `to`/`from`), a server prefix added (`GitHub.createIssue`,
   `mcp__github__create_issue`) or dropped (`navigate` for `playwright_navigate`);
6. `fuzzy` — the most similar name, at most one change away (a typo, a synonym, a word more or
   less), when it is clearly ahead of every other (by score, and in structure: see `Match.rivals`),
   does the same kind of thing (reads, writes, destroys) and destroys nothing.

A name two tools answer equally (a bare name on two servers, `sqlite_query` beside `read_query` and
`write_query`) is never resolved: the caller gets the candidates. Every miss carries suggestions:
the closest names merged with a search over the called name's words.
"""

from __future__ import annotations

import difflib
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from mcpmanager.core.catalogue import CatalogueTool
from mcpmanager.core.resolve.actions import Action, action_of, is_destructive, is_verb
from mcpmanager.core.resolve.similarity import TYPO, Match, NameShape, Vocabulary, word_similarity
from mcpmanager.core.resolve.words import NOISE_WORDS, bag_key, fold, number_key, server_forms, words

# Fuzzy: the best must score this much, this much more than the runner-up, and be at most
# MAX_STEPS changes (a typo, a synonym, a word more or less) away from the called name.
THRESHOLD = 0.6
MARGIN = 0.08
MAX_STEPS = 1.0
TIE_FLOOR = 0.45  # near-equal best matches this good are named as the ambiguity they are
SUGGESTIONS = 5
_SEPARATORS = re.compile(r"__|[:/.]|_|-")
_RRF = 3  # rank fusion constant: small, so the first places of each list dominate

Search = Callable[[str, int], list[str]]  # (query, limit) → exposed names, best first


@dataclass(frozen=True)
class Resolution:
    called: str
    tool: CatalogueTool | None
    how: str | None  # exact, alias, namespaced, original, normalized, fuzzy
    suggestions: tuple[str, ...] = ()  # exposed names, best first
    ambiguous: tuple[CatalogueTool, ...] = ()  # equally good matches: why nothing was chosen
    withheld: CatalogueTool | None = None  # the clear best match, not taken for safety
    withheld_why: str | None = None  # "destructive" or "another action"


@dataclass(frozen=True)
class _Form:
    """The called name read one way: its words, and the server its prefix names (if it names one)."""

    parts: tuple[str, ...]
    server: str | None


class NameResolver:
    """Resolves names against one snapshot of the catalogue (build a new one when it changes)."""

    def __init__(self, tools: Sequence[CatalogueTool], search: Search | None = None) -> None:
        self.tools = list(tools)
        self._search = search
        self._exposed = {t.exposed: t for t in self.tools}
        self._aliases: dict[str, list[CatalogueTool]] = defaultdict(list)
        self._by_name: dict[str, list[CatalogueTool]] = defaultdict(list)
        self._server_forms: dict[str, set[str]] = defaultdict(set)  # folded prefix → servers
        self._keys: dict[tuple[int, str], list[CatalogueTool]] = defaultdict(list)
        shapes: list[NameShape] = []
        self._parts: dict[str, tuple[str, ...]] = {}
        for tool in self.tools:
            for alias in tool.aliases:
                if alias not in self._exposed:  # an exposed name always means its own tool
                    self._aliases[alias].append(tool)
            self._by_name[tool.name].append(tool)
            for form in server_forms(tool.server):
                self._server_forms[form].add(tool.server)
        for tool in self.tools:
            parts = words(tool.name)
            self._parts[tool.key] = parts
            stripped = self._strip_own_server(tool.server, parts)
            shapes.append(NameShape(tool.key, parts, len(parts) - len(stripped) if stripped else 0, "".join(parts)))
            for variant in {parts, stripped}:
                if variant:
                    self._index(tool, variant)
        self._vocabulary = Vocabulary(shapes)
        self._by_key = {t.key: t for t in self.tools}

    def _index(self, tool: CatalogueTool, parts: tuple[str, ...]) -> None:
        for level, key in enumerate(_keys(parts)):
            if key is not None and tool not in self._keys[(level, key)]:
                self._keys[(level, key)].append(tool)

    def _strip_own_server(self, server: str, parts: tuple[str, ...]) -> tuple[str, ...]:
        """`playwright_navigate` of server playwright → `navigate` (models drop the prefix)."""
        for cut in range(1, len(parts)):
            if "".join(parts[:cut]) in server_forms(server):
                return parts[cut:]
        return ()

    # The ladder -----------------------------------------------------------------------------------

    def resolve(self, called: str) -> Resolution:
        if called in self._exposed:
            return Resolution(called, self._exposed[called], "exact")
        aliased = self._aliases.get(called, [])
        if len(aliased) == 1:
            return Resolution(called, aliased[0], "alias")
        if aliased:
            return self._miss(called, ambiguous=aliased)
        namespaced = self._namespaced(called)
        if len(namespaced) == 1:
            return Resolution(called, namespaced[0], "namespaced")
        bare = self._by_name.get(called, [])
        if len(bare) == 1 and not namespaced:
            return Resolution(called, bare[0], "original")
        if namespaced or bare:
            return self._miss(called, ambiguous=namespaced or bare)
        forms = self._forms(called)
        normalized = self._normalized(forms)
        if len(normalized) == 1:
            return Resolution(called, normalized[0], "normalized")
        if normalized:
            return self._miss(called, ambiguous=normalized)
        return self._fuzzy(called, forms)

    def _namespaced(self, called: str) -> list[CatalogueTool]:
        found: list[CatalogueTool] = []
        for match in _SEPARATORS.finditer(called):
            prefix, name = called[: match.start()], called[match.end() :]
            if not prefix or not name:
                continue
            for server in self._server_forms.get(fold(prefix), ()):
                for tool in self._by_name.get(name, []) + [t for t in [self._exposed.get(name)] if t]:
                    if tool.server == server and tool not in found:
                        found.append(tool)
        return found

    def _forms(self, called: str) -> list[_Form]:
        """The called words, and each way of reading a prefix of them as a server's name."""
        parts = words(called)
        readings = [parts]
        while len(parts) > 1 and parts[0] in NOISE_WORDS and parts[0] not in self._server_forms:
            parts = parts[1:]  # `mcp__github__…`, `functions.…`, `default_api:…`
            readings.append(parts)
        forms = [_Form(reading, None) for reading in readings]
        for reading in readings:
            for cut in range(1, len(reading)):
                for server in sorted(self._server_forms.get("".join(reading[:cut]), ())):
                    forms.append(_Form(reading[cut:], server))
        return forms

    def _normalized(self, forms: list[_Form]) -> list[CatalogueTool]:
        for level in range(3):
            qualified: list[CatalogueTool] = []
            plain: list[CatalogueTool] = []
            for form in forms:
                key = _keys(form.parts)[level]
                if key is None:
                    continue
                for tool in self._keys.get((level, key), []):
                    bucket = plain if form.server is None else qualified
                    if (form.server is None or tool.server == form.server) and tool not in bucket:
                        bucket.append(tool)
            if qualified or plain:
                return qualified or plain  # a named server is the more specific reading
        return []

    def _fuzzy(self, called: str, forms: list[_Form]) -> Resolution:
        scored = self._ranked(forms)
        if not scored:
            return self._miss(called)
        best_match, best, best_words = scored[0]
        best_score = best_match.score
        # A rival: about as similar, or as good a match in structure and itself within reach.
        rivals = [
            t
            for m, t, _ in scored[1:]
            if m.steps <= MAX_STEPS and (best_score - m.score < MARGIN or best_match.rivals(m))
        ]
        if rivals and best_score >= TIE_FLOOR and best_match.steps <= MAX_STEPS:
            # Other names answer the call about as well: say which, rather than guess.
            tied = [best, *rivals]
            return self._miss(called, ambiguous=tied if len(tied) <= 3 else (), ranked=scored)
        if best_score < THRESHOLD or best_match.steps > MAX_STEPS:
            return self._miss(called, ranked=scored)
        why = self._unsafe(best_words, best)
        if why is not None:
            return self._miss(called, ranked=scored, withheld=best, why=why)
        return Resolution(called, best, "fuzzy")

    def _unsafe(self, called: tuple[str, ...], tool: CatalogueTool) -> str | None:
        """Why a guess must not land on `tool`, or None when it may."""
        parts = self._parts[tool.key]
        if is_destructive(parts, tool.spec):
            return "destructive"
        # The call's verbs; failing any, its first word misspelt from one of the tool's (`creat_issue`).
        theirs = action_of(called)
        if theirs is None and called:
            first = called[0]
            theirs = action_of(t for t in parts if is_verb(t) and word_similarity(first, t) >= TYPO)
        ours = action_of(parts)
        if theirs is not None and ours is not None and theirs != ours:
            return "another action"
        if theirs is not None and theirs > Action.READ and ours is None:
            return "another action"  # asked to change something: only a tool that says it changes it
        if theirs is None and ours is not None and ours > Action.READ:
            return "another action"  # a name that says no verb is not a licence to write
        return None

    def _ranked(self, forms: list[_Form]) -> list[tuple[Match, CatalogueTool, tuple[str, ...]]]:
        """Tools by similarity to the called words, best first (only those sharing something): each
        tool by its best reading of the call, a prefix naming its server read as the server."""
        vocabulary = self._vocabulary
        best: dict[str, tuple[Match, CatalogueTool, tuple[str, ...]]] = {}
        for form in forms:
            if not form.parts:
                continue
            folded = "".join(form.parts)
            for key in vocabulary.candidates(form.parts, folded):
                tool = self._by_key[key]
                if form.server is not None and tool.server != form.server:
                    continue
                match = vocabulary.score(form.parts, folded, vocabulary.shapes[key])
                if key not in best or match.score > best[key][0].score:
                    best[key] = (match, tool, form.parts)
        return sorted(best.values(), key=lambda entry: (-entry[0].score, entry[0].steps, entry[1].exposed))

    # Suggestions ----------------------------------------------------------------------------------

    def _miss(
        self,
        called: str,
        *,
        ambiguous: Sequence[CatalogueTool] = (),
        ranked: Sequence[tuple[Match, CatalogueTool, tuple[str, ...]]] | None = None,
        withheld: CatalogueTool | None = None,
        why: str | None = None,
    ) -> Resolution:
        if ranked is None:
            ranked = self._ranked(self._forms(called))
        first = [t.exposed for t in ambiguous] + ([withheld.exposed] if withheld else [])
        near = [t.exposed for match, t, _ in ranked[:10] if match.score >= 0.3]
        searched = self._search(" ".join(words(called)), 10) if self._search else []
        fused: dict[str, float] = defaultdict(float)
        for names in (near, searched):
            for rank, name in enumerate(names):
                fused[name] += 1.0 / (_RRF + rank)
        merged = sorted(fused, key=lambda name: (-fused[name], name))
        suggestions = list(dict.fromkeys(first + merged))[: max(SUGGESTIONS, len(first))]
        return Resolution(called, None, None, tuple(suggestions), tuple(ambiguous), withheld, why)


def _keys(parts: tuple[str, ...]) -> tuple[str | None, str | None, str | None]:
    if not parts:
        return (None, None, None)
    return ("".join(parts), number_key(parts), bag_key(parts))


def close_names(called: str, names: Sequence[str], limit: int = SUGGESTIONS) -> list[str]:
    """The names spelled most like `called` (for lists without a catalogue: parameters, servers)."""
    folded = {fold(name): name for name in names}
    return [folded[f] for f in difflib.get_close_matches(fold(called), list(folded), n=limit, cutoff=0.6)]
