"""`mcpmanager resolve`: what serving would do with a tool name and arguments a model sent.

    mcpmanager resolve [--config P] [--catalogue FILE] [--json] (--tool NAME [--arguments JSON] | --calls FILE.jsonl)

The catalogue is a JSON dump of tools (`--catalogue`) or, by default, the configured servers' cached
tools; aliases, parameter aliases and synonyms come from the config. `--calls` reads one
`{"id"?, "tool_name", "arguments"?}` object per line and writes one line for each, in order:
`{"id", "resolved": {"server", "tool", "name"} | null, "how", "arguments", "renamed", "suggestions",
"error"}` — `arguments` is what would be forwarded (null when refused or when none were given),
`error` the isError text a model would read instead (null when the call would go ahead).
Bad usage or input: exit status 2 and one line on stderr naming the file (and line) at fault.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from mcpmanager.commands.catalogue_input import BadInput

if TYPE_CHECKING:  # the machinery loads only when the command runs: `connect` shares this parser
    from mcpmanager.core.catalogue.catalogue import Catalogue
    from mcpmanager.core.config.model import Config
    from mcpmanager.core.resolve.resolver import CallPlan, Resolver

Call = tuple[Any, str, dict[str, Any] | None]  # (id, tool_name, arguments)


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("resolve", help="show how a tool name and arguments would be resolved")
    parser.add_argument("--config", type=Path, help="config file (default: the user's mcpmanager config)")
    parser.add_argument("--catalogue", type=Path, help="JSON list of tools (default: the cache)")
    parser.add_argument("--json", action="store_true", help="print the JSON object instead of text")
    parser.add_argument("--tool", help="the tool name as a model called it")
    parser.add_argument("--arguments", help="the arguments it passed, a JSON object")
    parser.add_argument("--calls", type=Path, help='JSON lines {"id", "tool_name", "arguments"}; "-" reads stdin')


def run(args: argparse.Namespace) -> int:
    from mcpmanager.commands.catalogue_input import command_catalogue, load_settings
    from mcpmanager.core.config.model import ConfigError

    try:
        if (args.tool is None) == (args.calls is None):
            raise BadInput("give either --tool NAME or --calls FILE, not both or neither")
        if args.arguments is not None and args.tool is None:
            raise BadInput("--arguments goes with --tool")
        config = load_settings(args.config)
        calls = _read_calls(args.calls) if args.calls is not None else [(None, args.tool, _arguments(args.arguments))]
        catalogue = command_catalogue(args.catalogue, args.config, config)
    except (BadInput, ConfigError) as exc:
        print(f"mcpmanager: {exc}", file=sys.stderr)
        return 2
    resolver = build_resolver(catalogue, config)
    refused = False
    for call_id, name, arguments in calls:
        plan = resolver.plan(name, arguments, check=arguments is not None)
        refused = plan.tool is None or plan.error is not None
        if args.calls is not None or args.json:
            sys.stdout.write(json.dumps(plan_json(call_id, plan, arguments), ensure_ascii=False) + "\n")
        else:
            _write_text(sys.stdout, name, plan, arguments)
    # One --tool: its answer is the status too (1: serving would refuse it). --calls reports each call.
    return 1 if args.tool is not None and refused else 0


def build_resolver(catalogue: Catalogue, config: Config) -> Resolver:
    from mcpmanager.commands.search import search_index
    from mcpmanager.core.proxy.discovery import Discovery
    from mcpmanager.core.resolve.resolver import Resolver

    """A resolver whose suggestions search the catalogue as discover_tools does."""
    discovery = Discovery(catalogue, search_index(config))
    return Resolver(catalogue, discovery.search_names)


def plan_json(call_id: Any, plan: CallPlan, arguments: dict[str, Any] | None) -> dict[str, Any]:
    tool = plan.tool
    renames = plan.checked.renames if plan.checked is not None else ()
    return {
        "id": call_id,
        "resolved": {"server": tool.server, "tool": tool.name, "name": tool.exposed} if tool else None,
        "how": plan.resolution.how,
        "arguments": plan.arguments if arguments is not None else None,
        "renamed": {r.passed: r.declared for r in renames},
        "suggestions": list(plan.resolution.suggestions),
        "error": plan.error,
    }


# Input ----------------------------------------------------------------------------------------------


def _arguments(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInput(f"--arguments: invalid JSON: {exc.msg}") from None
    if not isinstance(value, dict):
        raise BadInput("--arguments must be a JSON object")
    return value


def _read_calls(path: Path) -> list[Call]:
    """Every call of the file, all checked before any result is written."""
    try:
        if str(path) == "-":
            return list(_parse_calls("<stdin>", sys.stdin))
        with path.open(encoding="utf-8-sig") as handle:
            return list(_parse_calls(str(path), handle))
    except OSError as exc:
        raise BadInput(f"cannot read the calls {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise BadInput(f"{path}: not UTF-8 text") from None


def _parse_calls(name: str, lines: TextIO) -> Iterator[Call]:
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BadInput(f"{name}:{number}: invalid JSON: {exc.msg}") from None
        if not isinstance(item, dict):
            raise BadInput(f"{name}:{number}: expected a JSON object")
        if not isinstance(item.get("tool_name"), str) or not item["tool_name"]:
            raise BadInput(f"{name}:{number}: 'tool_name' must be a non-empty string")
        arguments = item.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            raise BadInput(f"{name}:{number}: 'arguments' must be an object")
        yield item.get("id"), item["tool_name"], arguments


# Output ---------------------------------------------------------------------------------------------


def _write_text(out: TextIO, name: str, plan: CallPlan, arguments: dict[str, Any] | None) -> None:
    tool = plan.tool
    if tool is not None:
        out.write(f"{name} → {tool.exposed} [{tool.server}] ({plan.resolution.how})\n")
    if plan.error is not None:
        out.write(plan.error + "\n")
        return
    if arguments is not None and plan.checked is not None:
        for rename in plan.checked.renames:
            out.write(f"argument {rename.passed} → {rename.declared} ({rename.how})\n")
        out.write(f"would send {json.dumps(plan.arguments, ensure_ascii=False)}\n")
