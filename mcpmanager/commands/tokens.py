"""`mcpmanager tokens`: a team gateway's named tokens (one per person; `docs/deploy.md`).

mcpmanager tokens add NAME --file FILE      prints the new token once; the file keeps its SHA-256
mcpmanager tokens revoke NAME --file FILE   refused from the next request on (no restart)
mcpmanager tokens list --file FILE [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


class TokensCommandError(Exception):
    """A token that cannot be made, revoked or listed: exit status 2 with a one-line reason."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("tokens", help="a team gateway's named tokens (add, revoke, list)")
    actions = parser.add_subparsers(dest="tokens_action", required=True)
    for action, text in (
        ("add", "make a token for NAME (shown once)"),
        ("revoke", "take NAME's token back"),
        ("list", "the names that hold a token"),
    ):
        sub = actions.add_parser(action, help=text)
        if action != "list":
            sub.add_argument("name", metavar="NAME", help="whose token: a person, or a machine")
        else:
            sub.add_argument("--json", action="store_true", help="print JSON")
        sub.add_argument("--file", type=Path, required=True, help="the tokens file (`serve --tokens FILE`)")


def run(args: argparse.Namespace) -> int:
    from mcpmanager.core.serve.team_tokens import TokensError, add_token, read_entries, revoke_token

    try:
        if args.tokens_action == "add":
            token = add_token(args.file, args.name)
            print(token)
            print(f"token for {args.name} added to {args.file}; it is shown only now", file=sys.stderr)
        elif args.tokens_action == "revoke":
            revoke_token(args.file, args.name)
            print(f"token of {args.name} revoked: refused from the next request on", file=sys.stderr)
        else:
            entries = read_entries(args.file)
            if args.json:
                print(json.dumps({"tokens": [{"name": e.name, "created": e.created} for e in entries]}, indent=1))
            elif not entries:
                print("no tokens")
            for entry in entries if not args.json else []:
                print(f"{entry.name}  {entry.created}".rstrip())
    except TokensError as exc:
        raise TokensCommandError(str(exc)) from None
    except OSError as exc:  # a read-only mount, a folder that cannot be made
        raise TokensCommandError(f"{args.file}: {exc.strerror or exc}") from None
    return 0
