"""`mcpmanager login SERVER` and `mcpmanager logout SERVER`: signing in to a remote server that
uses OAuth, and out again.

    mcpmanager login SERVER [--no-browser] [--timeout SECONDS]
    mcpmanager logout SERVER

`login` opens the authorization page in the system browser (Python's `webbrowser`, which honours
$BROWSER), always prints its address, and waits for the redirect back to 127.0.0.1. The tokens go
to the keyring; a running engine is told to connect the server again. `logout` revokes the tokens
where the authorization server offers revocation, and forgets them.
"""

from __future__ import annotations

import argparse
import sys
import webbrowser
from pathlib import Path
from urllib.parse import quote

import anyio


class LoginError(Exception):
    """No such remote server: exit status 2 with a one-line reason."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    login = subparsers.add_parser("login", help="sign in to a remote server that uses OAuth")
    login.add_argument("server", help="the server's name in the config")
    login.add_argument("--no-browser", action="store_true", help="only print the address to open")
    login.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for the browser (300)")
    logout = subparsers.add_parser("logout", help="sign out of a remote server (forget and revoke its tokens)")
    logout.add_argument("server", help="the server's name in the config")


def run(args: argparse.Namespace) -> int:
    from mcpmanager.core.auth.loopback import SignInFailed
    from mcpmanager.core.auth.sign_in import sign_in, sign_out
    from mcpmanager.core.config.load import load_config
    from mcpmanager.core.config.servers import HttpServerConfig
    from mcpmanager.core.supervisor.filled import filled_server
    from mcpmanager.core.system.paths import Paths
    from mcpmanager.core.vault.store import Vault, VaultError

    paths = Paths.resolve()
    config = load_config(paths.config_file)
    server = config.servers.get(args.server)
    if not isinstance(server, HttpServerConfig):
        what = "is not a remote (http or sse) server" if server else f"is not in {paths.config_file}"
        raise LoginError(f"'{args.server}' {what}")
    vault = Vault()
    if args.command == "logout":
        done = anyio.run(sign_out, server, vault)
        revoked = " (revoked at the authorization server)" if done.revoked else ""
        print(f"signed out of '{server.name}'{revoked}" if done.had_tokens else f"'{server.name}' was not signed in")
        _tell_engines(paths.runtime_dir, server.name)
        return 0
    try:
        filled = filled_server(server, vault)
    except VaultError as exc:
        raise LoginError(str(exc)) from None
    assert isinstance(filled, HttpServerConfig)

    async def open_url(url: str) -> None:
        print(f"To sign in to '{server.name}', open:\n\n  {url}\n", file=sys.stderr, flush=True)
        opened = False if args.no_browser else await anyio.to_thread.run_sync(webbrowser.open, url)
        if not opened:
            print("(no browser could be opened here: open the address above)", file=sys.stderr, flush=True)
        print("waiting for the sign-in to finish in the browser…", file=sys.stderr, flush=True)

    try:
        anyio.run(lambda: sign_in(filled, vault, open_url, args.timeout))
    except SignInFailed as exc:
        print(f"mcpmanager: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("mcpmanager: sign-in cancelled", file=sys.stderr)
        return 130
    print(f"signed in to '{server.name}'")
    _tell_engines(paths.runtime_dir, server.name)
    return 0


def _tell_engines(runtime_dir: Path, server: str) -> None:
    """A running engine with `server` connects it again, with the new tokens or without any."""
    from mcpmanager.core.engine.advertisement import read_advertisements
    from mcpmanager.core.engine.single_instance import control

    for info in read_advertisements(runtime_dir):
        if server in dict(info.get("servers") or {}) and control(info, f"reconnect?server={quote(server)}"):
            print(f"the running engine (pid {info.get('pid')}) connects '{server}' again", file=sys.stderr)
