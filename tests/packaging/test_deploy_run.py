"""deploy/ run for real, as far as this machine can without a container runtime: the Deployment's
own command line starts a TLS gateway, its mounted files laid out in a temporary folder the way the
kubelet lays out a ConfigMap or Secret volume. Its /healthz answers the probes and the image's
HEALTHCHECK command while everything else stays guarded; a tokens Secret updated the kubelet's way
(a new folder, the `..data` link swapped) revokes a token without a restart; and what `serve`
imports never pulls in Qt, which the image leaves out."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from mcpmanager.core.serve.team_tokens import add_token, revoke_token
from tests.helpers.gateway import SERVING, make_certificate
from tests.helpers.vaults import current_keyring_env
from tests.packaging.deploy_files import Dockerfile, Manifests

MOUNTED = "/etc/mcpmanager/"  # where the Deployment's ConfigMap and Secrets appear in the pod
QT = ("PySide6", "shiboken6", "qasync")

pytestmark = pytest.mark.timeout(90, func_only=True)


def relocated(argv: list[str], root: Path) -> list[str]:
    """The Deployment's arguments with its mounted files under `root` and any free port."""
    out = [str(root / a.removeprefix("/")) if a.startswith(MOUNTED) else a for a in argv]
    port = out.index("--port")
    out[port + 1] = "0"
    return out


def unverified() -> ssl.SSLContext:
    """What a kubelet probe does: TLS without checking the certificate (it asks a pod by address)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def kubelet_volume(folder: Path) -> None:
    """Lay out `folder`'s files as the kubelet mounts a ConfigMap or Secret: in a hidden folder that
    `..data` points to, each file a link through `..data`."""
    first = folder / "..v1"
    first.mkdir()
    for file in [f for f in folder.iterdir() if f.is_file()]:
        file.rename(first / file.name)
        (folder / file.name).symlink_to(Path("..data") / file.name)
    (folder / "..data").symlink_to(first.name)


def kubelet_update(folder: Path, name: str, content: bytes) -> None:
    """What the kubelet does when the Secret changes: a new hidden folder, `..data` swapped to it
    atomically (a rename), the old folder removed."""
    old = (folder / "..data").readlink()
    new = folder / f"..v{len(list(folder.glob('..v*'))) + 1}"
    new.mkdir()
    (new / name).write_bytes(content)
    (folder / "..data_tmp").symlink_to(new.name)
    os.replace(folder / "..data_tmp", folder / "..data")
    shutil.rmtree(folder / old)


@dataclass(frozen=True)
class Gateway:
    port: int
    tokens: Path  # the tokens file as the operator keeps it, outside the pod
    mounted_tokens: Path  # the pod's folder of the tokens Secret
    alice: str  # a token in it


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[Gateway]:
    """The Deployment's container command (less tini) on this machine."""
    manifests = Manifests.load()
    container = manifests.container
    argv = relocated(list(container["args"]), tmp_path)
    files = {argv[i]: Path(argv[i + 1]) for i, flag in enumerate(argv) if flag.startswith("--") and i + 1 < len(argv)}
    files["--config"].parent.mkdir(parents=True)
    files["--config"].write_text(json.dumps({"mcpServers": {}}), encoding="utf-8")  # no server to wait for
    make_certificate(files["--tls-cert"].parent, [argv[argv.index("--allow-host") + 1]])
    kept = tmp_path / "operator" / "tokens.json"
    alice = add_token(kept, "alice")
    add_token(kept, "bob")  # so that revoking alice leaves a usable file
    files["--tokens"].parent.mkdir(parents=True)
    shutil.copy(kept, files["--tokens"])
    for flag in ("--config", "--tls-cert", "--tokens"):
        kubelet_volume(files[flag].parent)
    env = {e["name"]: str(tmp_path / e["value"].removeprefix("/")) for e in container["env"]}
    env |= {"PATH": os.environ.get("PATH", ""), "PYTHONUNBUFFERED": "1", **current_keyring_env()}
    log = tmp_path / "serve.log"
    with log.open("wb") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "mcpmanager", *argv], env=env, stdin=subprocess.DEVNULL, stdout=err, stderr=err
        )
    try:
        deadline = time.monotonic() + 30
        while not (found := SERVING.search(log.read_text(errors="replace"))) and process.poll() is None:
            assert time.monotonic() < deadline, f"the gateway did not listen within 30 s:\n{log.read_text()}"
            time.sleep(0.1)
        assert found, f"the Deployment's command exited {process.returncode}:\n{log.read_text()}"
        port = re.search(r":(\d+)/mcp", found.group(2))
        assert port, found.group(2)
        yield Gateway(int(port.group(1)), kept, files["--tokens"].parent, alice)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def status(port: int, token: str | None) -> int:
    """The HTTP status of a tools/list sent to the gateway's public name, with `token` or none."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).encode()
    request = urllib.request.Request(f"https://127.0.0.1:{port}/mcp/direct", method="POST", data=body)
    headers = {"Host": "mcp.example.com", "Content-Type": "application/json", "MCP-Protocol-Version": "2025-06-18"}
    headers["Accept"] = "application/json, text/event-stream"
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    for name, value in headers.items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, context=unverified(), timeout=10) as answer:
            answer.read()
            return int(answer.status)
    except urllib.error.HTTPError as refused:
        refused.close()
        return refused.code


def healthcheck(port: int) -> subprocess.CompletedProcess[str]:
    """The image's HEALTHCHECK command, its port made `port`."""
    command = Dockerfile.load().healthcheck()
    assert command[:2] == ["python", "-c"], command
    code = command[2]
    assert ":8443/" in code, "the HEALTHCHECK asks the port the image serves"
    return subprocess.run(
        [sys.executable, "-c", code.replace(":8443/", f":{port}/")], capture_output=True, text=True, timeout=30
    )


def test_the_deployments_command_serves_healthz_to_probes_and_guards_the_rest(gateway: Gateway) -> None:
    probes = Manifests.load().container
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        path = probes[probe]["httpGet"]["path"]
        # As the kubelet asks: by the pod's address (not an --allow-host name), no token.
        url = f"https://127.0.0.1:{gateway.port}{path}"
        with urllib.request.urlopen(url, context=unverified(), timeout=10) as answer:
            assert answer.status == 200 and answer.read().strip() == b"ok", probe
    assert status(gateway.port, None) == 401, "past /healthz a token is needed"
    assert status(gateway.port, gateway.alice) == 200


def test_a_token_revoked_in_the_secret_is_refused_without_a_restart(gateway: Gateway) -> None:
    assert status(gateway.port, gateway.alice) == 200
    revoke_token(gateway.tokens, "alice")
    kubelet_update(gateway.mounted_tokens, "tokens.json", gateway.tokens.read_bytes())
    assert status(gateway.port, gateway.alice) == 401, "the swapped Secret was not seen"


def test_the_images_healthcheck_passes_on_a_gateway_and_fails_without_one(gateway: Gateway) -> None:
    passed = healthcheck(gateway.port)
    assert passed.returncode == 0, passed.stderr
    with socket.socket() as free:  # a port nothing listens on
        free.bind(("127.0.0.1", 0))
        closed = free.getsockname()[1]
    failed = healthcheck(closed)
    assert failed.returncode != 0


def test_what_serve_imports_needs_no_qt() -> None:
    """The image uninstalls PySide6: the CLI and every module of core and commands (all `serve` and
    `tokens` can reach) must import without it."""
    code = (
        "import importlib, json, pkgutil, sys\n"
        "import mcpmanager.cli\n"
        "for name in ('mcpmanager.core', 'mcpmanager.commands'):\n"
        "    package = importlib.import_module(name)\n"
        "    for info in pkgutil.walk_packages(package.__path__, name + '.'):\n"
        "        importlib.import_module(info.name)\n"
        f"print(json.dumps(sorted(n for n in sys.modules if n.split('.')[0] in {QT!r})))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [], f"serving imports Qt: {done.stdout}"
