"""`mcpmanager status [--json]`: the running engines and their servers, read from what each engine
advertises in the runtime directory (docs/architecture.md, the command-line contract).

Exit status 1 when no engine is running.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from mcpmanager.commands import secrets as secrets_command
from mcpmanager.core.config.secrets import mask_strings
from mcpmanager.core.engine.advertisement import read_advertisements
from mcpmanager.core.supervisor.state_line import state_detail
from mcpmanager.core.system.paths import Paths


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    status = subparsers.add_parser("status", help="the running engines and their servers")
    status.add_argument("--config", type=Path, help=argparse.SUPPRESS)
    status.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace) -> int:
    from mcpmanager.core.vault.store import Vault

    paths = Paths.resolve(config_file=args.config)
    # The engine masks what it advertises; masking again by the rule is the net under a reason some
    # future path forgets to mask (the output lands in terminals, bug reports and CI logs).
    engines = [mask_strings(info) for info in read_advertisements(paths.runtime_dir)]
    if not engines:
        if args.json:
            print(json.dumps({"engines": []}, indent=1))
        else:
            print("no mcpmanager engine is running", file=sys.stderr)
        return 1
    keyring = secrets_command.keyring_line(Vault())  # where `${keyring:…}` entries live (docs/trust.md)
    if args.json:
        print(json.dumps({"engines": engines, "keyring": keyring.removeprefix("keyring: ")}, indent=1))
        return 0
    for info in engines:
        print(format_engine(info))
    print(keyring)
    return 0


def format_engine(info: dict[str, Any]) -> str:
    if "endpoint" not in info:  # a live engine whose advertisement cannot be read (`advertisement.unreadable`)
        lines = [f"engine pid {info.get('pid')} (its advertisement cannot be read)"]
        lines += [_damaged_line(d) for d in info.get("damaged") or []]
        return "\n".join(lines)
    lines = [f"engine pid {info.get('pid')} ({info.get('mode')} mode) at {info.get('endpoint')}"]
    if info.get("socket"):  # where `mcpmanager connect` reaches it (docs/protocol.md)
        lines[0] += f", for connect at {info['socket']}"
    lines.append(f"  config {info.get('config')}; {info.get('tools')} tools")
    if info.get("config_error"):
        lines.append(f"  config change refused (the running setup stays): {info['config_error']}")
    lines += [_damaged_line(d) for d in info.get("damaged") or []]  # state files it cannot read (docs/trust.md)
    servers: dict[str, dict[str, Any]] = info.get("servers") or {}
    width = max((len(name) for name in servers), default=0)
    for name, server in servers.items():
        state = server.get("state", "?")
        tools = server.get("tools")
        detail = f"{tools} tools" if tools is not None else ""
        offered = [f"{server[kind]} {kind}" for kind in ("prompts", "resources") if server.get(kind)]
        detail = ", ".join([detail, *offered]) if detail and offered else detail
        said = state_detail(
            state,
            server.get("reason") or "",
            server.get("retry_in"),
            restarts=server.get("restarts") or 0,
            last_exit=server.get("last_exit"),
            logs=server.get("logs"),
        )
        held = [_held_name(entry) for entry in server.get("held") or []]
        withheld = f"held for review (changed or new, see `mcpmanager pins`): {', '.join(held)}" if held else ""
        text = "; ".join(part for part in (detail, said, withheld) if part)
        lines.append(f"  {name:<{width}}  {state:<8}  {text}".rstrip())
    for suggestion in info.get("suggested_always_on") or []:  # learned from use (docs/discovery.md)
        lines.append(f"  suggested always-on: {suggestion['name']} [{suggestion['server']}], called "
                     f"{suggestion['calls']} times through discovery, +{suggestion['tokens']} tokens")  # fmt: skip
    return "\n".join(lines)


def _held_name(entry: dict[str, Any]) -> str:
    """A held tool by its name; a prompt or template with its kind (`prompt:NAME`)."""
    kind = entry.get("kind", "tool")
    return str(entry["tool"]) if kind == "tool" else f"{kind}:{entry['tool']}"


def _damaged_line(damaged: dict[str, Any]) -> str:
    return f"  damaged file {damaged.get('file')} ({damaged.get('reason')}): {damaged.get('effect')}"
