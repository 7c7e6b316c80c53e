"""Tool-name resolution: from what a model called to one catalogue tool, or to "did you mean".

The ladder, first match wins (docs/architecture.md, Resolution):

1. `exact` — an exposed name;
2. `alias` — a name the config gives a tool (`tools."server:tool".aliases`);
3. `namespaced` — `server:tool`, `server.tool`, `server/tool`, `server__tool`, `server_tool` with the
   server's name in any case or spelling and the tool's own name;
4. `original` — the server's own name for the tool, when only one server has it;
5. `normalized` — the same words spelled otherwise: case, separators, camelCase, plural/singular,
   word order (not across `to`/`from`), a server prefix added (`GitHub.createIssue`,
   `mcp__github__create_issue`) or dropped (`navigate` for `playwright_navigate`), unless a bare
   one-word call fits a tool of another server as well (`undo`: `excel_undo` or `undo_edit`);
6. `fuzzy` — one name misspelt in one word, when no other name is (`slips`); else the most similar
   name, at most one change away (a typo, a synonym, a word more or less), when it is clearly ahead
   of every other (by score, and in structure: see `Match.rivals`); either way it must do the same
   kind of thing (reads, writes, destroys) and destroy nothing.

A name two tools answer equally (a bare name on two servers, `sqlite_query` beside `read_query` and
`write_query`) is never resolved: the caller gets the candidates. Every miss carries suggestions:
the closest names merged with a search over the called name's words.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from mcpmanager.core.catalogue.catalogue import CatalogueTool
from mcpmanager.core.resolve.actions import action_of, is_destructive, is_verb, same_operation
from mcpmanager.core.resolve.brands import BrandedNames
from mcpmanager.core.resolve.guards import core_of, fits_as_well, unsafe
from mcpmanager.core.resolve.similarity import (
    GENERIC_TAILS,
    Match,
    NameShape,
    Vocabulary,
    param_words,
    thing_of,
)
from mcpmanager.core.resolve.slips import SlipIndex
from mcpmanager.core.resolve.words import (
    NOISE_WORDS,
    SEPARATORS,
    fold,
    head_of,
    name_keys,
    server_forms,
    singular,
    words,
)
from mcpmanager.core.search.synonyms import BUILTIN_GROUPS

# Fuzzy: the best must score this much, this much more than the runner-up, and be at most
# MAX_STEPS changes (a typo, a synonym, a word more or less) away from the called name.
THRESHOLD = 0.5
MARGIN = 0.08
MAX_STEPS = 1.0
TIE_FLOOR = 0.45  # near-equal best matches this good are named as the ambiguity they are
GENERIC = 3  # a word in this many tools' names says too little alone (see the server prefix below)
SUGGESTIONS = 5
_RRF = 3  # rank fusion constant: small, so the first places of each list dominate
_LOOKUPS = frozenset({"by", "using", "via"})  # `get_weather_by_city`: the same thing, found another way
Search = Callable[[str, int], list[str]]  # (query, limit) → exposed names, best first


def _expansions() -> dict[str, list[tuple[str, ...]]]:
    """One-word abbreviations of several words, from the search's vocabulary: `pr` → (pull, request)."""
    found: dict[str, list[tuple[str, ...]]] = defaultdict(list)
    for group in BUILTIN_GROUPS:
        for short in (m for m in group if " " not in m and "-" not in m):
            found[short] += [tuple(m.split()) for m in group if " " in m]
    return dict(found)


_EXPANSIONS = _expansions()


@dataclass(frozen=True)
class Resolution:
    called: str
    tool: CatalogueTool | None
    how: str | None  # exact, alias, namespaced, original, normalized, fuzzy, arguments
    suggestions: tuple[str, ...] = ()  # exposed names, best first
    ambiguous: tuple[CatalogueTool, ...] = ()  # equally good matches: why nothing was chosen
    withheld: CatalogueTool | None = None  # the clear best match, not taken for safety
    withheld_why: str | None = None  # "destructive" or "another action"


_Scored = tuple[Match, CatalogueTool, tuple[str, ...]]  # a tool, how it matched, the call's words it matched


@dataclass(frozen=True)
class _Form:
    """The called name read one way: its words, and the server its prefix names (if it names one)."""

    parts: tuple[str, ...]
    server: str | None
    loose: bool = False  # a reading that changes the words: for the fuzzy step only
    penalty: float = 0.0  # changes the reading itself counts as (an abbreviation spelt out: 0.5)


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
        self._slips: SlipIndex[CatalogueTool] = SlipIndex()
        shapes: list[NameShape] = []
        self._parts: dict[str, tuple[str, ...]] = {}
        for tool in self.tools:
            for alias in tool.aliases:
                if alias not in self._exposed:  # an exposed name always means its own tool
                    self._aliases[alias].append(tool)
            self._by_name[tool.name].append(tool)
            for form in server_forms(tool.server):
                self._server_forms[form].add(tool.server)
        counts: dict[str, int] = defaultdict(int)  # in how many tools' names each word is
        firsts: dict[tuple[str, str], int] = defaultdict(int)
        self._params: dict[str, frozenset[str]] = {}
        self._of_server: dict[str, list[CatalogueTool]] = defaultdict(list)
        for tool in self.tools:
            self._of_server[tool.server].append(tool)
            parts = words(tool.name)
            self._parts[tool.key] = parts
            schema = tool.spec.get("inputSchema")
            properties = schema.get("properties") if isinstance(schema, dict) else None
            self._params[tool.key] = param_words(properties if isinstance(properties, dict) else ())
            for word in set(parts):
                counts[word] += 1
            if len(parts) > 1:
                firsts[(parts[0], tool.server)] += 1
        # Words that name a server: its names, the first word of several of its tools' names
        # (`kubectl_*`, `jira_*`, `browser_*`), and the first word of its own name that its tools
        # start with (`bing_search` of `bing-cn-mcp`): a call saying one is about that server, and a
        # tool's name may leave it out (`take_screenshot` for `browser_take_screenshot`).
        self._brands: dict[str, set[str]] = defaultdict(set)
        for (word, server), count in firsts.items():
            if (count >= GENERIC or word == words(server)[0]) and not is_verb(word):
                self._brands[word].add(server)
        for tool in self.tools:
            parts = self._parts[tool.key]
            stripped = self._strip_own_server(tool.server, parts)
            if len(stripped) == 1 and counts[stripped[0]] >= GENERIC:
                stripped = ()  # `git_add` is not simply `add`: a dozen tools add something
            for variant in {parts, stripped}:
                if variant:
                    self._index(tool, variant)  # a server prefix dropped is a spelling; a brand is not
                    self._slips.add(variant, tool, 0 if variant == parts else 1)
            if not stripped and len(parts) > 2 and tool.server in self._brands.get(parts[0], ()):
                stripped = parts[1:]
            optional = len(parts) - len(stripped) if stripped else 0  # the prefix, free to leave out
            shapes.append(NameShape(tool.key, parts, optional, "".join(parts)))
        self._vocabulary = Vocabulary(shapes)
        self._branded = BrandedNames(self.tools, self._parts)
        self._by_key = {t.key: t for t in self.tools}
        for form, servers in self._server_forms.items():
            self._brands[form].update(servers)

    def _index(self, tool: CatalogueTool, parts: tuple[str, ...]) -> None:
        for level, key in enumerate(name_keys(parts)):
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
        normalized, level = self._normalized(forms)
        if len(normalized) > 1:
            return self._miss(called, ambiguous=normalized)
        if normalized and level == 0:
            spelled = [f.parts for f in forms if f.server is None and not f.loose]
            rivals = self._elsewhere(called, forms, normalized[0]) + self._branded.rivals(spelled, normalized[0])
            if rivals:
                return self._miss(called, ambiguous=[normalized[0], *rivals])
            return Resolution(called, normalized[0], "normalized")
        slipped = self._slipped(forms) if not normalized else None
        if slipped is not None:
            why = self._unsafe(words(called), slipped)
            if why is None:
                return Resolution(called, slipped, "fuzzy")
            return self._miss(called, withheld=slipped, why=why)
        # Another number or word order may name another thing (`get_user` is not `get_users` when
        # `get_user_profile` exists): such a spelling must also win the fuzzy comparison, rivals and
        # safety rules included, to be taken.
        return self._fuzzy(called, forms, normalized[0] if normalized else None)

    def _namespaced(self, called: str) -> list[CatalogueTool]:
        found: list[CatalogueTool] = []
        for match in SEPARATORS.finditer(called):
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
        # Abbreviations of several words spelt out (`list_prs` → `list pull requests`).
        for at, word in enumerate(parts):
            for expansion in _EXPANSIONS.get(singular(word), ()):
                forms.append(_Form(parts[:at] + expansion + parts[at + 1 :], None, loose=True, penalty=0.5))
        # A server named inside the call (`list_sentry_projects`) qualifies it too.
        for at in range(1, len(parts) - 1):
            for server in sorted(self._server_forms.get(parts[at], ())):
                forms.append(_Form(parts[:at] + parts[at + 1 :], server, loose=True))
        return forms

    def _normalized(self, forms: list[_Form]) -> tuple[list[CatalogueTool], int]:
        """The tools the call spells, at the first level that has any: 0 the same words (case,
        separators), 1 also another number, 2 also another word order."""
        for level in range(3):
            qualified: list[CatalogueTool] = []
            plain: list[CatalogueTool] = []
            for form in forms:
                key = name_keys(form.parts)[level]
                if key is None or form.loose:
                    continue
                for tool in self._keys.get((level, key), []):
                    bucket = plain if form.server is None else qualified
                    if (form.server is None or tool.server == form.server) and tool not in bucket:
                        bucket.append(tool)
            if qualified or plain:
                return qualified or plain, level  # a named server is the more specific reading
        return [], 0

    def _slipped(self, forms: list[_Form]) -> CatalogueTool | None:
        """The one tool whose name the call misspells in one word (`get_issuue`), if only one."""
        qualified: list[CatalogueTool] = []
        plain: list[CatalogueTool] = []
        for form in (f for f in forms if not f.loose):
            for tool in self._slips.find(form.parts):
                bucket = plain if form.server is None else qualified
                if (form.server is None or tool.server == form.server) and tool not in bucket:
                    bucket.append(tool)
        found = qualified or plain
        return found[0] if len(found) == 1 else None

    def _fuzzy(self, called: str, forms: list[_Form], spelled: CatalogueTool | None = None) -> Resolution:
        scored = self._ranked(forms)
        # Only names within reach (at most MAX_STEPS changes away) can be meant; among them the best
        # must be clearly ahead of every other.
        reach = [entry for entry in scored if entry[0].steps <= MAX_STEPS and entry[0].score >= TIE_FLOOR]
        if not reach:
            return self._miss(called, ranked=scored)
        best_match, best, best_words = reach[0]
        rivals = self._rivals(reach, scored, spelled)
        if spelled is not None and best is spelled and not rivals:
            if is_destructive(self._parts[best.key], best.spec):
                # Another number or order may name another scope (`delete_files`): a tool that
                # destroys is called by a spelling of its exact words only.
                return self._miss(called, ranked=scored, withheld=best, why="destructive")
            return Resolution(called, best, "normalized")
        if not rivals and best_match.structure[3]:
            rivals = self._search_disagrees(best, best_words)
        if rivals:
            # Other names answer the call about as well: say which, rather than guess.
            tied = [best, *rivals]
            return self._miss(called, ambiguous=tied if len(tied) <= 3 else (), ranked=scored)
        if best_match.score < THRESHOLD:
            return self._miss(called, ranked=scored)
        if all(is_verb(w) for w in best_words) and best_match.structure[2]:
            return self._miss(called, ranked=scored)  # `add` → `git_add`: a verb alone names no thing to add to
        why = self._unsafe(best_words, best)
        if why is not None:
            return self._miss(called, ranked=scored, withheld=best, why=why)
        return Resolution(called, best, "fuzzy")

    # Rivals: other tools the call may as well mean ------------------------------------------------

    def _rivals(
        self, reach: list[_Scored], scored: list[_Scored], spelled: CatalogueTool | None
    ) -> list[CatalogueTool]:
        best_match, best, best_words = reach[0]
        # The best's siblings as their parameters may explain them (`getComments(storyId)` beside
        # `getStoryWithComments` for `get_story_comments`): one server's tools are made around each
        # other, and a name that leaves out what its parameter says is no worse a guess.
        thing = thing_of([w for w in best_words if w not in self._brands])
        explained = [
            (m.explained_by(self._params[t.key], thing) if t.server == best.server else m, t, w) for m, t, w in scored
        ]
        # A tool of another server than the one the call names is no rival (`bing_web_search`).
        others = [
            e
            for e in explained
            if e[1] is not best
            and e[0].steps <= MAX_STEPS
            and e[0].score >= TIE_FLOOR
            and not (e[0].contradicted and not best_match.contradicted)
        ]
        # About as similar, or not worse in structure (see Match.dominates).
        rivals = [t for m, t, _ in others if best_match.score - m.score < MARGIN or not best_match.dominates(m)]
        core = core_of(best_words, best_match)
        verb = next((w for w in best_words if is_verb(w)), None)
        # Another server's tool about the same thing, at most one change further (two past a mere
        # respelling), whatever the scores: `kubectl_logs` beside `mongodb-logs` for `get_logs` — which
        # server is meant, the name cannot say, unless it names one (`browser_…`: see `_brands`). A
        # tool no guess may land on still makes the name ambiguous when it fits it (`fits_as_well`).
        further = MAX_STEPS + 1 if spelled is best else best_match.steps + 1
        for m, t, w in scored:
            if t in rivals or t.server == best.server or not core or not core <= m.sure:
                continue
            if m.steps <= further and not m.contradicted and fits_as_well(w, m.sure, self._parts[t.key], t.spec):
                rivals.append(t)
        # In one server, two tools whose verbs both name the call's operation: `get_note` beside
        # `read_note` and `view_note`. (`update_note` is `edit_note`, not `write_note`.)
        if verb is not None and self._same_operation(verb, best):
            for m, t, _ in others:
                if t.server != best.server or t in rivals or not core <= m.sure:
                    continue
                if not best_match.dominates(m) and self._same_operation(verb, t):
                    rivals.append(t)
        # One thing or many: `slack_get_user` is not surely `slack_get_users` when another tool of
        # the server has the call's own `user` (`slack_get_user_profile`).
        at = head_of(best_words)
        head = best_words[at] if at >= 0 else ""
        ours = self._parts[best.key]
        if head and head not in ours and any(singular(head) == singular(p) for p in ours):
            for m, t, _ in scored[1:]:
                if t.server != best.server or t in rivals or head not in self._parts[t.key]:
                    continue
                if m.steps <= MAX_STEPS + 1 and (verb is None or self._same_operation(verb, t)):
                    rivals.append(t)
        ours = self._parts[best.key]
        for t in self._siblings(best):
            theirs = self._parts[t.key]
            # The call says more than the best name (`get_current_weather` → `get_weather`), and the
            # server looks the same thing up another way (`get_weather_by_city`): which way, the name
            # cannot say (the call's arguments may: see Resolver.plan).
            lookup = len(theirs) > len(ours) + 1 and theirs[: len(ours)] == ours and theirs[len(ours)] in _LOOKUPS
            if lookup and any(not is_verb(w) for w in best_match.left) and t not in rivals:
                rivals.append(t)
            # A word that only says what form the result takes, matched by a mere synonym
            # (`get_character_details` → `_info`), does not tell apart tools that differ only in it
            # (`get_character_profile`).
            tail = best_words[-1] if best_words else ""
            weak = tail not in best_match.sure and tail not in best_match.left and not is_verb(tail)
            differ_in_tail = len(theirs) == len(ours) and theirs[:-1] == ours[:-1]
            if tail in GENERIC_TAILS and weak and differ_in_tail and t not in rivals:
                rivals.append(t)
        return rivals

    def _siblings(self, best: CatalogueTool) -> list[CatalogueTool]:
        """The other tools of the best's server that do the same kind of thing."""
        theirs = action_of(self._parts[best.key])
        return [t for t in self._of_server[best.server] if t is not best and action_of(self._parts[t.key]) == theirs]

    def _same_operation(self, verb: str, tool: CatalogueTool) -> bool:
        theirs = next((w for w in self._parts[tool.key] if is_verb(w)), None)
        return theirs is not None and same_operation(verb, theirs)

    def _search_disagrees(self, best: CatalogueTool, called: tuple[str, ...]) -> list[CatalogueTool]:
        """The name leaves words of the call unexplained (`list_kv_namespaces` → `kv_list`): then the
        search over the call's words, descriptions included, must agree on the best tool."""
        found = self._search(" ".join(called), 1) if self._search is not None else []
        if not found or found[0] == best.exposed or found[0] not in self._exposed:
            return []
        other = self._exposed[found[0]]
        if any(other.server not in self._brands[w] for w in called if w in self._brands):
            return []  # the call names another server than the search's pick (`bing_web_search`)
        return [other]

    def unsafe(self, called: str, tool: CatalogueTool) -> str | None:
        """Why a call by this name must not land on `tool` unless named exactly (see `_unsafe`)."""
        return self._unsafe(words(called), tool)

    def _unsafe(self, called: tuple[str, ...], tool: CatalogueTool) -> str | None:
        """Why a guess must not land on `tool`, or None when it may (see `guards.unsafe`)."""
        return unsafe(called, self._parts[tool.key], tool.spec)

    def _elsewhere(self, called: str, forms: list[_Form], tool: CatalogueTool) -> list[CatalogueTool]:
        """Other servers' tools a bare one-word call fits as well as the tool whose server prefix it
        left out, within two changes as for a spelling in `_rivals` (`undo`: `excel_undo`, `undo_edit`;
        `click`: `puppeteer_click`, `browser_click`). A call that spells the whole name is exact."""
        said = tuple(w for w in words(called) if w not in NOISE_WORDS)  # `functions.undo` is bare too
        if len(said) != 1 or "".join(said) == "".join(self._parts[tool.key]):
            return []
        return [
            t
            for m, t, w in self._ranked(forms)
            if t.server != tool.server
            and said[0] in m.sure
            and m.steps <= MAX_STEPS + 1
            and not m.contradicted
            and fits_as_well(w, m.sure, self._parts[t.key], t.spec)
        ]

    def _ranked(self, forms: list[_Form]) -> list[_Scored]:
        """Tools by similarity to the called words, best first (only those sharing something): each
        tool by its best reading of the call, a prefix naming its server read as the server."""
        vocabulary = self._vocabulary
        best: dict[str, _Scored] = {}
        called_words = forms[0].parts if forms else ()  # brands count wherever the call says them
        # A call that names a server is about that server's tools (`slack_send_message`), when one of
        # them is within reach that way (`fetch_issue` is about an issue, not the fetch server).
        named = {form.server for form in forms if form.server is not None and form.parts and self._within_reach(form)}
        for form in forms:
            if not form.parts:
                continue
            folded = "".join(form.parts)
            brands = {w: self._brands[w] for w in called_words if w in self._brands}
            for key in vocabulary.candidates(form.parts, folded):
                tool = self._by_key[key]
                if tool.server != form.server and (form.server is not None or (tool.server not in named and named)):
                    continue
                foreign = frozenset(w for w, servers in brands.items() if tool.server not in servers)
                match = vocabulary.score(form.parts, folded, vocabulary.shapes[key], foreign)
                # A brand this reading left out (`API-…` read without its `api`) still contradicts.
                dropped = sum(2 for w in foreign if w not in form.parts)
                if form.penalty or dropped:
                    steps = match.steps + form.penalty + dropped
                    match = dataclasses.replace(match, steps=steps, contradicted=match.contradicted or bool(dropped))
                if key not in best or match.score > best[key][0].score:
                    best[key] = (match, tool, form.parts)
        return sorted(best.values(), key=lambda entry: (-entry[0].score, entry[0].steps, entry[1].exposed))

    def _within_reach(self, form: _Form) -> bool:
        vocabulary = self._vocabulary
        folded = "".join(form.parts)
        return any(
            vocabulary.score(form.parts, folded, vocabulary.shapes[t.key]).steps <= MAX_STEPS
            for t in self.tools
            if t.server == form.server
        )

    # Suggestions ----------------------------------------------------------------------------------

    def _miss(
        self,
        called: str,
        *,
        ambiguous: Sequence[CatalogueTool] = (),
        ranked: Sequence[_Scored] | None = None,
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
