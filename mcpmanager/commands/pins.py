"""`mcpmanager pins`: the tools withheld because their definition changed since approved (or, with
`proxy.newTools` "hold", because they are new to a server whose tools were approved), and approving them.

    mcpmanager pins [--json]                       the held tools of every running engine
    mcpmanager pins approve (SERVER:TOOL ... | --all)

A held tool's new definition comes from the running engine (its advertisement); the approval is
written to the pins file beside that engine's config, which the engine follows: the tool is served
again within a second, and stays approved across restarts.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


class PinsError(Exception):
    """Nothing to approve by that name: exit status 2 with a one-line reason."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("pins", help="tools withheld because they changed (or are new) since approved")
    parser.add_argument("--json", action="store_true", help="print JSON")
    actions = parser.add_subparsers(dest="pins_action")
    approve = actions.add_parser("approve", help="approve the new definitions of held tools")
    approve.add_argument("tools", nargs="*", metavar="SERVER:TOOL", help="the held tools to approve")
    approve.add_argument("--all", action="store_true", help="every held tool")


def run(args: argparse.Namespace) -> int:
    from mcpmanager.core.catalogue.pins import PINS_FILE, Pins
    from mcpmanager.core.engine.advertisement import read_advertisements
    from mcpmanager.core.system.paths import Paths

    paths = Paths.resolve()
    held: list[tuple[Path, dict[str, Any]]] = []  # (pins file, held tool) for every running engine
    for info in read_advertisements(paths.runtime_dir):
        config = Path(str(info.get("config")))
        pins_file = (config if config.suffix == ".json" else paths.config_file).with_name(PINS_FILE)
        for server in dict(info.get("servers") or {}).values():
            held += [(pins_file, entry) for entry in server.get("held") or []]
    if args.pins_action != "approve":
        if args.json:
            print(json.dumps({"held": [entry for _, entry in held]}, indent=1))
        elif not held:
            print("no tool is held")
        for _, entry in held if not args.json else []:
            what = "new" if entry.get("new") else f"changed: {', '.join(entry['changed'])}"
            print(f"{entry['server']}:{entry['tool']}  {what}")
        return 0
    wanted = set(args.tools)
    chosen = [(f, e) for f, e in held if args.all or f"{e['server']}:{e['tool']}" in wanted]
    missing = wanted - {f"{e['server']}:{e['tool']}" for _, e in chosen}
    if missing or not chosen:
        raise PinsError(f"not held now: {', '.join(sorted(missing)) or 'nothing named'} (see `mcpmanager pins`)")
    for pins_file in {f for f, _ in chosen}:
        for name in Pins(pins_file).approve([e for f, e in chosen if f == pins_file]):
            print(f"approved {name}", file=sys.stderr)
    return 0
