"""The meta-tools' behaviour: search the catalogue, show schemas, route calls by (almost) any name.

The search index follows the catalogue lazily: before a query it catches up with whatever changed
(servers' tools, enabled/disabled), touching only the tools that differ. The meta-tools are the
model's, so an MCP App's app-only tool is not in the index and no meta-tool shows it (`apps`); a
tool with a UI is shown with its `_meta.ui`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import mcp_types as types

from mcpmanager.core.catalogue import apps
from mcpmanager.core.catalogue.call_templates import call_template, optional_parameters
from mcpmanager.core.catalogue.catalogue import Catalogue, CatalogueTool
from mcpmanager.core.proxy import meta_tools as meta
from mcpmanager.core.proxy.learning import POOL, Learning
from mcpmanager.core.resolve.messages import miss_text
from mcpmanager.core.resolve.names import Resolution
from mcpmanager.core.search.index import SearchDoc, SearchIndex
from mcpmanager.core.tool_results import error_result, text_result

_MAX_PATTERN = 300
_DESCRIPTION_CHARS = 160


def one_line(text: str) -> str:
    text = " ".join(text.split())
    sentence = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    return sentence if len(sentence) <= _DESCRIPTION_CHARS else sentence[: _DESCRIPTION_CHARS - 1] + "…"


class Discovery:
    def __init__(self, catalogue: Catalogue, index: SearchIndex, learning: Learning | None = None) -> None:
        self.catalogue = catalogue
        self.index = index
        self.learning = learning  # what was learned from use lifts tools in discover_tools
        self._indexed: dict[str, SearchDoc] = {}
        self._generation = -1

    # Keeping the index in step with the catalogue -------------------------------------------------

    def sync(self) -> None:
        if self._generation == self.catalogue.generation:
            return
        current = {t.key: SearchDoc.from_tool(t.server, t.name, t.exposed, t.spec) for t in self._for_model()}
        for key in self._indexed.keys() - current.keys():
            self.index.remove(key)
        for key, doc in current.items():
            if self._indexed.get(key) != doc:
                self.index.upsert(doc)
        self._indexed = current
        self._generation = self.catalogue.generation
        if self.learning is not None:  # its word weights follow the catalogue's texts
            docs = tuple(current.values())
            self.learning.catalogue_changed(lambda: (f"{d.name} {d.description}" for d in docs))

    def vector_job(self) -> Callable[[], None]:
        """Work for a thread: compute (or read from disk) the semantic vectors of the catalogue's tools
        as they are now, so that `sync` on the event loop finds them ready. The engine runs it when
        the catalogue changes; nothing when search is BM25F alone."""
        semantic = self.index.semantic
        if semantic is None:
            return lambda: None
        docs = [SearchDoc.from_tool(t.server, t.name, t.exposed, t.spec) for t in self._for_model()]
        return lambda: semantic.prepare(docs)

    def _for_model(self) -> list[CatalogueTool]:
        """The tools a model may be shown: all but MCP Apps' app-only ones."""
        return [t for t in self.catalogue.tools() if not t.app_only]

    def search_names(self, query: str, limit: int) -> list[str]:
        """Exposed names of the best tools for `query` (the resolver's suggestions use it)."""
        self.sync()
        docs = self._indexed
        return [docs[hit.key].exposed for hit in self.index.search(query, limit) if hit.key in docs]

    # The meta-tools -------------------------------------------------------------------------------

    def discover(self, args: dict[str, Any] | None, unknown: str = "") -> types.CallToolResult:
        """`unknown`: what a miss adds about servers whose tools are not known (down, starting)."""
        query = meta.argument(args, "query")
        if not isinstance(query, str) or not query.strip():
            return error_result("discover_tools needs 'query': the task in plain words.")
        self.sync()
        limit = meta.limit_of(args, 5)
        by_key = {t.key: t for t in self._for_model()}
        found = [(by_key[key], score) for key, score in self._ranked(query, limit) if key in by_key][:limit]
        if not found:
            return text_result(
                f"No tool matches {_short(query)!r}. Try broader or different words, or search_tools_regex "
                f"with part of a tool name.{unknown}",
                {"query": _short(query), "tools": []},
            )
        entries = [self._entry(tool, score) for tool, score in found]
        lines = [f"Tools for {_short(query)!r} (call them with call_tool):"]
        for number, entry in enumerate(entries, 1):
            lines.append(f"{number}. {entry['name']} [{entry['server']}] — {entry['description']}")
            lines.append(f"   call_tool {json.dumps(entry['call'], ensure_ascii=False)}")
            if entry["optional"]:
                lines.append(f"   optional: {', '.join(entry['optional'])}")
        return text_result("\n".join(lines), {"query": _short(query), "tools": entries})

    def _ranked(self, query: str, limit: int) -> list[tuple[str, float]]:
        """The search's results, re-ranked by what was learned (from a deeper pool, so a learned
        tool can move up from beyond the limit; gone tools are dropped by the caller)."""
        if self.learning is None:
            return [(hit.key, hit.score) for hit in self.index.search(query, limit)]
        hits = [(hit.key, hit.score) for hit in self.index.search(query, limit + POOL)]
        return self.learning.rerank(query, hits, limit + POOL)

    def _entry(self, tool: CatalogueTool, score: float | None = None) -> dict[str, Any]:
        schema = tool.spec.get("inputSchema")
        entry: dict[str, Any] = {
            "name": tool.exposed,
            "server": tool.server,
            "description": one_line(tool.description),
            "call": call_template(tool.exposed, schema),
            "optional": optional_parameters(schema),
        }
        if score is not None:
            entry["score"] = round(score, 3)
        ui = apps.ui_meta(tool.exposed_spec())
        if ui is not None:  # MCP Apps: the tool's UI, as its definition shows it
            entry["_meta"] = {"ui": ui}
        return entry

    def regex(self, args: dict[str, Any] | None) -> types.CallToolResult:
        pattern = meta.argument(args, "pattern")
        if not isinstance(pattern, str) or not pattern:
            return error_result("search_tools_regex needs 'pattern', a regular expression.")
        if len(pattern) > _MAX_PATTERN:
            return error_result(f"The pattern is too long ({len(pattern)} characters; at most {_MAX_PATTERN}).")
        try:
            compiled = re.compile(pattern, re.IGNORECASE)
        except re.error as exc:
            return error_result(f"Invalid regular expression {pattern!r}: {exc}.")
        limit = meta.limit_of(args, 10, maximum=50)
        matches = [t for t in self._for_model() if compiled.search(t.exposed) or compiled.search(t.description)]
        entries = [self._entry(t) for t in sorted(matches, key=lambda t: t.exposed)[:limit]]
        if not entries:
            return text_result(f"No tool name or description matches /{pattern}/.", {"pattern": pattern, "tools": []})
        lines = [f"{len(matches)} tools match /{pattern}/" + (f" (first {limit})" if len(matches) > limit else "")]
        lines += [f"- {e['name']} [{e['server']}] — {e['description']}" for e in entries]
        return text_result("\n".join(lines), {"pattern": pattern, "total": len(matches), "tools": entries})

    def schema(
        self,
        args: dict[str, Any] | None,
        resolve: Callable[[str], Resolution],
        approval: Callable[[CatalogueTool], str] | None = None,
    ) -> types.CallToolResult:
        """A tool's full definition and call template; `approval`: its calls' policy (allow, ask, deny),
        so a model knows a call may wait for a person, or be refused."""
        name = meta.argument(args, "tool_name")
        if not isinstance(name, str) or not name:
            return error_result("get_tool_schema needs 'tool_name'.")
        resolution = resolve(name)
        if resolution.tool is None:
            return error_result(miss_text(resolution))
        tool = resolution.tool
        if tool.app_only:  # not the model's to call (`apps`)
            return error_result(f"Unknown tool '{name}'.")
        document: dict[str, Any] = {
            "name": tool.exposed,
            "server": tool.server,
            "description": tool.description,
        }
        shown = tool.exposed_spec()
        for key in ("inputSchema", "outputSchema", "annotations", "_meta"):
            if key in shown:
                document[key] = shown[key]
        if approval is not None:
            document["approval"] = approval(tool)
        document["call"] = call_template(tool.exposed, tool.spec.get("inputSchema"))
        return text_result(json.dumps(document, ensure_ascii=False, indent=1), document)


def _short(text: str, limit: int = 80) -> str:
    """A query as echoed back: a pasted blob must not be repeated into the model's context."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
