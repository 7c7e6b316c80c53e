"""Query expansion with the general vocabulary of software tools.

People say "repo", "PR" and "remove" where a tool says "repository", "pull request" and "delete".
Each built-in group below lists words that mean the same thing in a tool catalogue, whatever the
domain; a query word from a group brings in the others at a lower weight (they hint, the user's own
words decide). The config's `synonyms` section adds one-way expansions: `{"pr": ["pull request"]}`
(or `["pull", "request"]`) expands `pr`. Keys and expansions go through the analyzer, so plurals and
inflections match too; a key of several words matches those words in a row in the query.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mcpmanager.core.search.analyzer import analyze

# Groups of interchangeable words and phrases (no domain rules: these hold for any catalogue).
BUILTIN_GROUPS: tuple[tuple[str, ...], ...] = (
    # Things
    ("repo", "repository"),
    ("pr", "pull request"),
    ("mr", "merge request"),
    ("k8s", "kubernetes", "kube"),
    ("db", "database"),
    ("dm", "direct message"),
    ("msg", "message"),
    ("dir", "directory", "folder"),
    ("doc", "document"),
    ("docs", "documentation"),
    ("config", "configuration", "settings", "cfg", "conf", "preferences"),
    ("auth", "authentication", "authenticate"),
    ("login", "sign in", "log in", "signin"),
    ("logout", "sign out", "log out", "signout"),
    ("env", "environment"),
    ("vm", "virtual machine"),
    ("app", "application"),
    ("img", "image", "picture", "photo", "pic"),
    ("vid", "video"),
    ("info", "information", "details"),
    ("stats", "statistics"),
    ("cmd", "command"),
    ("org", "organization"),
    ("num", "number"),
    ("addr", "address"),
    ("pwd", "password", "passwd"),
    ("creds", "credentials"),
    ("perms", "permissions"),
    ("spec", "specification"),
    ("func", "function", "fn"),
    ("param", "parameter", "arg", "argument"),
    ("var", "variable"),
    ("lang", "language"),
    ("txt", "text"),
    ("desc", "description"),
    ("email", "mail", "e-mail"),
    ("url", "link", "uri"),
    ("website", "site", "webpage", "web page"),
    ("js", "javascript"),
    ("ts", "typescript"),
    ("py", "python"),
    ("ai", "artificial intelligence"),
    ("ml", "machine learning"),
    ("llm", "language model"),
    ("ui", "user interface"),
    ("cli", "command line"),
    ("os", "operating system"),
    ("svc", "service"),
    ("pkg", "package"),
    ("deps", "dependencies"),
    ("lib", "library"),
    ("prod", "production"),
    ("dev", "development"),
    ("tmp", "temp", "temporary"),
    ("max", "maximum"),
    ("min", "minimum"),
    ("avg", "average"),
    ("qty", "quantity"),
    ("id", "identifier"),
    ("tz", "timezone"),
    ("ver", "version"),
    ("proc", "process"),
    ("mem", "memory"),
    ("txn", "transaction", "tx"),
    ("acct", "account"),
    ("usr", "user"),
    ("ticket", "issue"),
    ("error", "exception"),
    ("chart", "graph", "plot"),
    ("spreadsheet", "sheet", "excel", "xlsx"),
    ("ppt", "pptx", "powerpoint", "presentation"),
    ("docx", "word document"),
    # Actions
    ("delete", "remove", "rm", "del", "erase", "destroy"),
    ("create", "add", "new", "make"),
    ("list", "show", "get", "enumerate", "display"),
    ("get", "fetch", "retrieve", "obtain"),
    ("search", "find", "query", "lookup", "look up"),
    ("update", "edit", "modify", "change"),
    ("run", "execute", "exec", "invoke"),
    ("start", "launch"),
    ("stop", "terminate", "kill", "halt"),
    ("restart", "reboot"),
    ("save", "store", "write"),
    ("calc", "calculate", "compute"),
    ("summarize", "summary", "summarise", "tldr"),
    ("remind", "reminder"),
    ("notify", "notification", "alert"),
    ("buy", "purchase"),
    ("price", "cost"),
    ("browse", "navigate"),
    ("click", "tap"),
    ("sync", "synchronize"),
    ("current", "now", "latest"),
)

# A key is a run of analysed words; each expansion is the analysed words of one alternative.
Key = tuple[str, ...]


@dataclass(frozen=True)
class Expansion:
    words: tuple[str, ...]
    pairs: tuple[str, ...]


class SynonymMap:
    def __init__(self, extra: Mapping[str, Sequence[str]] | None = None, *, builtin: bool = True) -> None:
        self._map: dict[Key, list[Expansion]] = {}
        if builtin:
            for group in BUILTIN_GROUPS:
                for member in group:
                    self._add(member, [other for other in group if other != member])
        for key, expansions in (extra or {}).items():
            self._add(key, list(expansions))
        self._longest = max((len(k) for k in self._map), default=0)

    def _add(self, key_text: str, alternatives: Sequence[str]) -> None:
        key = tuple(analyze(key_text).words)
        if not key:
            return
        known = self._map.setdefault(key, [])
        for text in alternatives:
            analyzed = analyze(text)
            expansion = Expansion(tuple(analyzed.words), tuple(analyzed.pairs))
            if expansion.words and expansion.words != key and expansion not in known:
                known.append(expansion)

    def expand(self, words: Sequence[str]) -> list[Expansion]:
        """The expansions of every key found in `words` (analysed query words, in order)."""
        found: list[Expansion] = []
        for start in range(len(words)):
            for length in range(1, min(self._longest, len(words) - start) + 1):
                for expansion in self._map.get(tuple(words[start : start + length]), ()):
                    if expansion not in found:
                        found.append(expansion)
        return found

    def __contains__(self, key_text: object) -> bool:
        return isinstance(key_text, str) and tuple(analyze(key_text).words) in self._map
