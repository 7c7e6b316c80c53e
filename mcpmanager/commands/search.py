"""`mcpmanager search`: rank the catalogue's tools for a plain-language need, as `discover_tools` does.

    mcpmanager search [--config P] [--catalogue FILE] [--limit K] [--json] (QUERY | --queries FILE.jsonl)

The catalogue is a JSON dump of tools (`--catalogue`) or, by default, the configured servers' cached
tools; synonyms come from the config. `--queries` reads one `{"id", "query", ...}` object per line and
writes one `{"id", "results": [...]}` line for each, in order, so evaluation scripts can drive it.
Bad usage or input: exit status 2 and one line on stderr naming the file (and line) at fault.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from mcpmanager.commands.catalogue_input import BadInput

if TYPE_CHECKING:  # the machinery loads only when the command runs: `connect` shares this parser
    from mcpmanager.core.config.model import Config
    from mcpmanager.core.search.index import SearchDoc, SearchIndex

DEFAULT_LIMIT = 10


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("search", help="rank tools for a plain-language need")
    parser.add_argument("--config", type=Path, help="config file (default: the user's mcpmanager config)")
    parser.add_argument("--catalogue", type=Path, help="JSON list of tools (default: the cache)")
    # Checked in run(), so a bad value gets the one-line error of the contract, not argparse's usage.
    parser.add_argument("--limit", default=str(DEFAULT_LIMIT), help="results per query (default 10)")
    parser.add_argument("--json", action="store_true", help="print the JSON object instead of a list")
    parser.add_argument("--queries", type=Path, help='JSON lines {"id", "query"}; "-" reads stdin')
    parser.add_argument("query", nargs="?", help="what the tool should do, in plain words")


def run(args: argparse.Namespace) -> int:
    from mcpmanager.commands.catalogue_input import command_catalogue, load_settings
    from mcpmanager.core.config.model import ConfigError
    from mcpmanager.core.proxy.approval_rule import rule_for
    from mcpmanager.core.search.index import SearchDoc

    try:
        if (args.query is None) == (args.queries is None):
            raise BadInput("give either a QUERY or --queries FILE, not both or neither")
        limit = _limit(args.limit)
        config = load_settings(args.config)
        queries = _read_queries(args.queries) if args.queries is not None else None
        catalogue = command_catalogue(args.catalogue, args.config, config)
        docs = [SearchDoc.from_tool(t.server, t.name, t.exposed, t.spec) for t in catalogue.tools()]
        # Whether serving would ask before a call of each (core/proxy/approval_rule.py).
        policies = {
            t.key: rule_for(t.name, t.spec, config.tools.get(t.key), config.proxy).policy for t in catalogue.tools()
        }
    except (BadInput, ConfigError) as exc:
        print(f"mcpmanager: {exc}", file=sys.stderr)
        return 2
    index = search_index(config)
    index.replace_all(docs)
    by_key = {doc.key: doc for doc in docs}
    if queries is not None:
        for query_id, text in queries:
            _write_json(sys.stdout, query_id, _results(index, by_key, text, limit, policies))
    elif args.json:
        _write_json(sys.stdout, None, _results(index, by_key, args.query, limit, policies))
    else:
        _write_list(sys.stdout, args.query, index, by_key, limit)
    return 0


def search_index(config: Config) -> SearchIndex:
    """The index `discover_tools` searches with. The encoder reads the tools' vectors the engine has
    cached (without, embedding 2,000 tools takes about half a minute); the static vectors cost nothing."""
    from mcpmanager.core.search.index import SearchIndex
    from mcpmanager.core.search.semantic import CACHE_FILES, SemanticIndex, vector_cache
    from mcpmanager.core.system.paths import Paths

    if not config.proxy.semantic_search or config.proxy.semantic_model == "static":
        return SearchIndex(config.synonyms, config.proxy.semantic_search)
    cache = vector_cache("encoder", Paths.resolve().cache_dir / CACHE_FILES["encoder"])
    cache.load()  # read only: the engine keeps the file
    return SearchIndex(config.synonyms, SemanticIndex(cache=cache, model="encoder"))


# Input ----------------------------------------------------------------------------------------------


def _limit(value: object) -> int:
    try:
        limit = int(str(value))
    except ValueError:
        raise BadInput(f"--limit must be a whole number, got {value!r}") from None
    if limit < 1:
        raise BadInput(f"--limit must be at least 1, got {limit}")
    return limit


def _read_queries(path: Path) -> list[tuple[Any, str]]:
    """Every (id, query) of the file, all checked before any result is written."""
    try:
        if str(path) == "-":
            return list(_parse_queries("<stdin>", sys.stdin))
        with path.open(encoding="utf-8-sig") as handle:
            return list(_parse_queries(str(path), handle))
    except OSError as exc:
        raise BadInput(f"cannot read the queries {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise BadInput(f"{path}: not UTF-8 text") from None


def _parse_queries(name: str, lines: TextIO) -> Iterator[tuple[Any, str]]:
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BadInput(f"{name}:{number}: invalid JSON: {exc.msg}") from None
        if not isinstance(item, dict):
            raise BadInput(f"{name}:{number}: expected a JSON object")
        if not isinstance(item.get("query"), str):
            raise BadInput(f"{name}:{number}: 'query' must be a string")
        yield item.get("id"), item["query"]


# Output ---------------------------------------------------------------------------------------------


Docs = dict[str, "SearchDoc"]  # by key


def _results(
    index: SearchIndex, docs: Docs, query: str, limit: int, policies: Mapping[str, str]
) -> list[dict[str, Any]]:
    results = []
    for hit in index.search(query, limit):
        doc = docs[hit.key]
        score = round(hit.score, 4)
        approval = policies.get(hit.key, "allow")
        results.append(
            {"server": doc.server, "tool": doc.name, "name": doc.exposed, "score": score, "approval": approval}
        )
    return results


def _write_json(out: TextIO, query_id: Any, results: Sequence[dict[str, Any]]) -> None:
    out.write(json.dumps({"id": query_id, "results": list(results)}, ensure_ascii=False) + "\n")


def _write_list(out: TextIO, query: str, index: SearchIndex, docs: Docs, limit: int) -> None:
    hits = index.search(query, limit)
    if not hits:
        out.write(f"No tool matches {query!r}. Try broader or different words.\n")
        return
    width = max(len(docs[h.key].exposed) for h in hits)
    for rank, hit in enumerate(hits, 1):
        doc = docs[hit.key]
        out.write(f"{rank:>2}. {doc.exposed:<{width}}  [{doc.server}]  {hit.score:.2f}\n")
        if summary := _one_line(doc.description):
            out.write(f"    {summary}\n")


def _one_line(text: str, width: int = 100) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"
