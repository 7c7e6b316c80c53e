"""`mcpmanager pins`: the tools, prompts and resource templates withheld because their definition
changed since approved (or, with `proxy.newTools` "hold", because they are new to a server whose
tools, prompts or templates were approved), and approving them.

    mcpmanager pins [--json]                       what every running engine holds
    mcpmanager pins approve (NAME ... | --all)     NAME: SERVER:TOOL, SERVER:prompt:PROMPT or
                                                   SERVER:template:URI-TEMPLATE (as `pins` lists them)
    mcpmanager pins reset                          a damaged pins file kept aside, a fresh one begun

A held tool's (prompt's, template's) new definition comes from the running engine (its advertisement); the approval is
written to the pins file beside that engine's config, which the engine follows: the tool is served
again within a second, and stays approved across restarts. A pins file that cannot be read is said
first, by every form, and approving fails naming it until it is repaired or reset.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


class PinsError(Exception):
    """Nothing to approve by that name, or a damaged pins file: exit status 2 with a one-line reason."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "pins", help="tools, prompts and templates withheld because they changed (or are new) since approved"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    actions = parser.add_subparsers(dest="pins_action")
    approve = actions.add_parser("approve", help="approve the new definitions of held tools, prompts, templates")
    approve.add_argument(
        "tools", nargs="*", metavar="NAME",
        help="what to approve, as `pins` lists it: SERVER:TOOL, SERVER:prompt:PROMPT, SERVER:template:URI-TEMPLATE",
    )  # fmt: skip
    approve.add_argument("--all", action="store_true", help="everything held")
    actions.add_parser("reset", help="keep a damaged pins file aside and start a fresh one from what was served")


def run(args: argparse.Namespace) -> int:
    from mcpmanager.core.catalogue.pins import PINS_FILE, check
    from mcpmanager.core.engine.advertisement import read_advertisements
    from mcpmanager.core.system.paths import Paths

    paths = Paths.resolve()
    files = [paths.config_file.with_name(PINS_FILE)]  # the default config's, engine or not
    held: list[tuple[Path, dict[str, Any]]] = []  # (pins file, held entry) for every running engine
    watched: set[Path] = set()  # the pins files a running engine reviews against
    for info in read_advertisements(paths.runtime_dir):
        config = Path(str(info.get("config")))
        pins_file = (config if config.suffix == ".json" else paths.config_file).with_name(PINS_FILE)
        files.append(pins_file)
        watched.add(pins_file)
        for server in dict(info.get("servers") or {}).values():
            held += [(pins_file, entry) for entry in server.get("held") or []]
    damaged = {f: reason for f in dict.fromkeys(files) if (reason := check(f)) is not None}
    if args.pins_action == "reset":
        return _reset(damaged, paths.cache_dir, watched)
    if args.pins_action == "approve":
        return _approve(args, held, damaged)
    if args.json:
        found = [{"file": str(f), "reason": reason} for f, reason in damaged.items()]
        print(json.dumps({"held": [entry for _, entry in held], "damaged": found}, indent=1))
        return 0
    for pins_file, reason in damaged.items():
        print(f"damaged: {pins_file} ({reason})")
        print("  tools that differ from those served last, and prompts and templates its engine had not seen, "
              "are held; nothing is approved until the file is repaired, or reset with "
              "`mcpmanager pins reset`")  # fmt: skip
    if not held:
        print("nothing is held")
    for _, entry in held:
        what = "new" if entry.get("new") else f"changed: {', '.join(entry['changed'])}"
        print(f"{key_of(entry)}  {what}")
        for finding in entry.get("findings") or ():  # (what looks like tool poisoning in it)
            print(f"    looks like tool poisoning: {finding}")
    return 0


def key_of(entry: dict[str, Any]) -> str:
    """How a held entry is named on the command line (`Held.key`; an engine of before prompts were
    pinned reported tools alone, without it)."""
    return str(entry.get("key") or f"{entry['server']}:{entry['tool']}")


def _approve(args: argparse.Namespace, held: list[tuple[Path, dict[str, Any]]], damaged: dict[Path, str]) -> int:
    from mcpmanager.core.catalogue.pins import Pins, PinsDamaged, damaged_message

    wanted = set(args.tools)
    chosen = [(f, e) for f, e in held if args.all or key_of(e) in wanted]
    for pins_file in dict.fromkeys(f for f, _ in chosen):
        if pins_file in damaged:  # an approval would be recorded nowhere
            raise PinsError(damaged_message(pins_file, damaged[pins_file]))
    missing = wanted - {key_of(e) for _, e in chosen}
    if missing or not chosen:
        raise PinsError(f"not held now: {', '.join(sorted(missing)) or 'nothing named'} (see `mcpmanager pins`)")
    for pins_file in dict.fromkeys(f for f, _ in chosen):
        try:
            names = Pins(pins_file).approve([e for f, e in chosen if f == pins_file])
        except PinsDamaged as exc:  # damaged since it was checked
            raise PinsError(str(exc)) from None
        for name in names:
            print(f"approved {name}", file=sys.stderr)
    return 0


def _reset(damaged: dict[Path, str], cache_dir: Path, watched: set[Path]) -> int:
    """Every damaged pins file kept aside and begun again from the definitions served last (the
    catalogue cache): what was trusted stays trusted, and the running engine keeps holding what it
    holds. Only with that engine running: the cache keeps no prompt or template, nor a tool held
    as changed, so without it a reset would let those through as first seen."""
    from mcpmanager.core.catalogue import cache
    from mcpmanager.core.catalogue.pins import reset_pins
    from mcpmanager.core.engine.engine import CATALOGUE_FILE

    if not damaged:
        raise PinsError("no pins file is damaged: nothing to reset (see `mcpmanager pins`)")
    if unwatched := [str(f) for f in damaged if f not in watched]:
        raise PinsError(
            f"no running engine uses {', '.join(unwatched)}: start mcpmanager (the window or `serve`) with "
            "that config first, so that what it holds stays held through the reset, then run `pins reset` again"
        )
    served = cache.load(cache_dir / CATALOGUE_FILE)
    for pins_file, reason in damaged.items():
        aside = reset_pins(pins_file, served)
        print(f"moved the damaged pins file {pins_file} ({reason}) aside to {aside}")
        print(f"started {pins_file} afresh from the tools last served ({len(served)} servers); "
              "tools held now stay held until approved")  # fmt: skip
    return 0
