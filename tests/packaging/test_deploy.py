"""deploy/: the Kubernetes manifests validate against the Kubernetes API schemas (offline, with the
schemas `kubernetes-validate` ships) and agree with each other, with the Dockerfile and with the
product itself: the container's arguments parse with mcpmanager's own command-line parser, the
sample config loads with its own loader, the tokens file reads with its own reader."""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import tomllib
from pathlib import Path, PurePosixPath

import kubernetes_validate
import pytest
import yaml

from mcpmanager.cli import build_parser
from mcpmanager.core.config.load import parse_config
from mcpmanager.core.config.servers import StdioServerConfig
from mcpmanager.core.serve.team_tokens import read_entries
from tests.packaging.deploy_files import (
    DOCKERIGNORE,
    KUBERNETES,
    KUSTOMIZATION,
    ROOT,
    Dockerfile,
    Manifests,
    documents,
    ignored,
    manifest_files,
)

# The oldest Kubernetes the manifests promise to work on, and the newest the checker ships: a field
# added after the first, or one removed before the second, fails.
KUBERNETES_VERSIONS = ("1.30", "1.37")
LABELS = {"app.kubernetes.io/name": "mcpmanager", "app.kubernetes.io/component": "gateway"}
SECRETS_FILE = "secret.yaml"  # made from real files, never applied from the placeholders in it
MAKES_SECRET = re.compile(r"kubectl (?:-n \S+ )?create secret (?:tls|generic) ([a-z0-9-]+)")


@pytest.fixture(scope="module")
def manifests() -> Manifests:
    return Manifests.load()


@pytest.fixture(scope="module")
def dockerfile() -> Dockerfile:
    return Dockerfile.load()


def parse(argv: list[str]) -> argparse.Namespace:
    """`argv` (after the program name) as `mcpmanager` parses it; argparse's own error on failure."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            return build_parser().parse_args(argv)
    except SystemExit:
        pytest.fail(f"mcpmanager's parser refuses {argv}:\n{err.getvalue()}")


def gateway_argv(command: list[str]) -> list[str]:
    """The arguments after `mcpmanager` in a command run under tini (`tini -- mcpmanager …`)."""
    assert command[:2] == ["tini", "--"], f"not run under tini (PID 1 must reap orphans): {command}"
    assert command[2] == "mcpmanager", f"not mcpmanager: {command}"
    return command[3:]


def container_argv(manifests: Manifests) -> list[str]:
    container = manifests.container
    return gateway_argv([*container["command"], *container["args"]])


def image_argv(dockerfile: Dockerfile) -> list[str]:
    return gateway_argv([*dockerfile.exec_form("ENTRYPOINT"), *dockerfile.exec_form("CMD")])


def served_files(args: argparse.Namespace) -> dict[str, str]:
    return {"config": str(args.config), "tls": str(args.tls_cert), "tokens": str(args.tokens)}


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("path", manifest_files(), ids=lambda p: p.name)
def test_every_manifest_validates_against_the_kubernetes_schemas(path: Path, version: str) -> None:
    resources = documents(path)
    assert resources, f"{path.name} holds no resource"
    for resource in resources:
        try:
            kubernetes_validate.validate(resource, version, strict=True)  # strict: an unknown field fails
        except kubernetes_validate.ValidationError as exc:
            where = ".".join(str(part) for part in exc.path)
            pytest.fail(f"{path.name}: {resource['kind']}/{resource['metadata']['name']} at {where}: {exc.message}")


def test_the_manifests_hold_a_gateway_and_what_it_mounts(manifests: Manifests) -> None:
    kinds = sorted(r["kind"] for r in manifests.resources)
    assert kinds == ["ConfigMap", "Deployment", "PodDisruptionBudget", "Secret", "Secret", "Service"]
    assert manifests.named("Secret")["mcpmanager-tls"]["type"] == "kubernetes.io/tls"


def test_kustomization_applies_every_manifest_but_the_secrets() -> None:
    kustomization = yaml.safe_load((KUBERNETES / KUSTOMIZATION).read_text(encoding="utf-8"))
    listed = kustomization["resources"]
    assert len(listed) == len(set(listed)), f"listed twice: {listed}"
    expected = {p.name for p in manifest_files()} - {SECRETS_FILE}
    assert set(listed) == expected, "kustomization.yaml must list every manifest except the Secrets' placeholders"


def test_every_resource_carries_the_gateway_labels_and_the_selectors_match(manifests: Manifests) -> None:
    for resource in manifests.resources:
        labels = resource["metadata"].get("labels", {})
        assert labels.items() >= LABELS.items(), f"{resource['kind']}/{resource['metadata']['name']}: {labels}"
    deployment = manifests.deployment
    chosen = deployment["spec"]["selector"]["matchLabels"]
    assert chosen == LABELS
    assert deployment["spec"]["template"]["metadata"]["labels"].items() >= chosen.items()
    assert manifests.one("Service")["spec"]["selector"] == chosen
    assert manifests.one("PodDisruptionBudget")["spec"]["selector"]["matchLabels"] == chosen
    for spread in manifests.pod.get("topologySpreadConstraints", []):
        assert spread["labelSelector"]["matchLabels"] == chosen


def test_the_deployments_volumes_name_a_configmap_and_secrets_that_exist(manifests: Manifests) -> None:
    config_maps, secrets = manifests.named("ConfigMap"), manifests.named("Secret")
    volumes = manifests.pod["volumes"]
    for volume in volumes:
        if "configMap" in volume:
            assert volume["configMap"]["name"] in config_maps, f"volume {volume['name']}: no such ConfigMap"
        if "secret" in volume:
            assert volume["secret"]["secretName"] in secrets, f"volume {volume['name']}: no such Secret"
    named = {v["name"] for v in volumes}
    for mount in manifests.container["volumeMounts"]:
        assert mount["name"] in named, f"mount {mount['mountPath']}: no volume {mount['name']!r}"


def test_the_files_the_gateway_reads_are_folder_mounts_of_their_configmap_and_secrets(manifests: Manifests) -> None:
    args = parse(container_argv(manifests))
    wanted = {
        "config": ("configMap", "name", "ConfigMap", [args.config]),
        "tls": ("secret", "secretName", "Secret", [args.tls_cert, args.tls_key]),
        "tokens": ("secret", "secretName", "Secret", [args.tokens]),
    }
    for label, (source, key, kind, files) in wanted.items():
        for file in files:
            assert file is not None, f"the container is not given its {label} file"
            path = PurePosixPath(file)
            mount = manifests.mount_of(str(path))
            # A subPath mount never sees the ConfigMap or Secret change: an edited config or a revoked
            # token would wait for a restart. The file must sit directly in a folder mount.
            assert "subPath" not in mount and "subPathExpr" not in mount, f"{path}: mounted with subPath"
            assert mount.get("readOnly") is True, f"{path}: its mount is writable"
            assert str(path.parent) == mount["mountPath"].rstrip("/"), f"{path} is not directly in {mount}"
            volume = manifests.volume(mount["name"])
            assert source in volume, f"{path} comes from volume {volume} (expected a {kind})"
            resource = manifests.named(kind)[volume[source][key]]
            held = {**resource.get("data", {}), **resource.get("stringData", {})}
            assert path.name in held, f"{path}: the {kind} {volume[source][key]} has no key {path.name}"


def test_every_writable_place_is_an_emptydir_beside_a_read_only_root(
    manifests: Manifests, dockerfile: Dockerfile
) -> None:
    container = manifests.container
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    env = {e["name"]: e["value"] for e in container.get("env", [])}
    image_env = dockerfile.env()
    for name in ("MCPMANAGER_HOME", "HOME"):
        assert env.get(name) == image_env.get(name), f"{name}: the Deployment and the image disagree"
    for path in (env["MCPMANAGER_HOME"], env["HOME"], "/tmp"):
        mounts = [m for m in container["volumeMounts"] if m["mountPath"].rstrip("/") == path]
        assert len(mounts) == 1, f"{path} is written to but is no volume of its own"
        volume = manifests.volume(mounts[0]["name"])
        assert "emptyDir" in volume, f"{path}: {volume} (expected an emptyDir)"
        assert not mounts[0].get("readOnly"), f"{path} is mounted read-only"


def test_the_service_targets_the_container_port_without_session_affinity(manifests: Manifests) -> None:
    service = manifests.one("Service")["spec"]
    assert service.get("type", "ClusterIP") == "ClusterIP"
    # Replicas run --stateless: any of them answers any request, so clients are spread freely.
    assert service.get("sessionAffinity", "None") == "None"
    ports = manifests.container["ports"]
    served = int(parse(container_argv(manifests)).port)
    assert [p["containerPort"] for p in ports] == [served], "the container declares the port it serves"
    for port in service["ports"]:
        target = port["targetPort"]
        assert target in ({p["name"] for p in ports} | {p["containerPort"] for p in ports}), target


def test_the_probes_ask_healthz_over_https_on_the_served_port(manifests: Manifests) -> None:
    container = manifests.container
    served = int(parse(container_argv(manifests)).port)
    by_name = {p["name"]: p["containerPort"] for p in container["ports"]}
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        assert probe in container, f"the gateway has no {probe}"
        get = container[probe]["httpGet"]
        assert get["path"] == "/healthz"
        assert get["scheme"] == "HTTPS", f"{probe}: the gateway serves TLS only"
        assert by_name.get(get["port"], get["port"]) == served, f"{probe} asks port {get['port']}"


def test_the_gateway_runs_replicated_unprivileged_and_within_limits(
    manifests: Manifests, dockerfile: Dockerfile
) -> None:
    spec, pod, container = manifests.deployment["spec"], manifests.pod, manifests.container
    assert spec["replicas"] >= 2
    assert spec["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert str(pod["securityContext"]["runAsUser"]) == dockerfile.last_stage("USER")[0].split(":")[0]
    assert pod["securityContext"]["runAsUser"] != 0
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["securityContext"]["capabilities"]["drop"] == ["ALL"]
    assert {"cpu", "memory"} <= container["resources"]["requests"].keys()
    assert "memory" in container["resources"]["limits"]
    for name in ("tls", "tokens"):
        assert manifests.volume(name)["secret"]["defaultMode"] == 0o440, f"{name}: readable by the group only"


def test_the_deployments_command_is_a_stateless_gateway_to_mcpmanagers_parser(manifests: Manifests) -> None:
    container = manifests.container
    args = parse(container_argv(manifests))
    assert args.command == "serve" and args.http
    assert args.host == "0.0.0.0"
    assert args.stateless, "replicas behind a Service must run --stateless"
    assert args.tls_cert is not None and args.tls_key is not None and args.tokens is not None
    assert args.allow_host, "a wildcard address needs the names clients use"
    assert args.config is not None
    image = str(container["image"])
    assert ":" in image.rsplit("/", 1)[-1] and not image.endswith(":latest"), f"image not pinned: {image}"


def test_the_images_entrypoint_and_cmd_are_the_same_gateway_to_mcpmanagers_parser(
    manifests: Manifests, dockerfile: Dockerfile
) -> None:
    image = parse(image_argv(dockerfile))
    pod = parse(container_argv(manifests))
    assert image.command == "serve" and image.http and image.host == "0.0.0.0" and image.allow_host
    assert image.port == pod.port, "the image and the Deployment serve different ports"
    assert served_files(image) == served_files(pod), "the image and the Deployment read different files"
    assert image.tls_key == pod.tls_key
    assert dockerfile.last_stage("EXPOSE") == [str(image.port)]
    healthcheck = " ".join(dockerfile.healthcheck())
    assert f"https://127.0.0.1:{image.port}/healthz" in healthcheck, healthcheck


def test_the_dockerfile_is_unprivileged_checked_and_pinned(dockerfile: Dockerfile) -> None:
    users = dockerfile.last_stage("USER")
    assert len(users) == 1, "the final stage sets its USER once"
    user = users[0].split(":")[0]
    assert user not in ("root", "0") and user.isdigit(), f"USER {users[0]}: a numeric non-root uid"
    assert dockerfile.healthcheck()[0] == "python"
    for base in dockerfile.parser.parent_images:
        name = base.rsplit("/", 1)[-1]
        assert ":" in name or "@" in name, f"base image without a tag: {base}"
        assert not name.endswith(":latest"), f"base image on latest: {base}"
    assert "tini" in " ".join(dockerfile.last_stage("RUN")), "tini is installed"


def test_the_dockerignore_lets_in_what_the_build_copies_and_keeps_the_work_tree_out(dockerfile: Dockerfile) -> None:
    rules = DOCKERIGNORE.read_text(encoding="utf-8")
    sources = dockerfile.copied_sources()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["readme"] in sources, "`pip install .` reads the readme pyproject names"
    assert "pyproject.toml" in sources and "mcpmanager" in sources
    for source in sources:
        assert (ROOT / source).exists(), f"COPY {source}: no such file in the repository"
        assert not ignored(source, rules), f"COPY {source}: left out of the context by .dockerignore"
    assert not ignored("mcpmanager/cli.py", rules)
    assert not ignored("mcpmanager/core/search/data/README.md", rules)  # package data
    for private in (".venv/bin/python", ".git/config", "tests/conftest.py", ".cache/x", "mcpmanager/__pycache__/x.pyc"):
        assert ignored(private, rules), f"{private} would be sent to the build"


def test_the_sample_config_loads_with_mcpmanagers_loader(manifests: Manifests, dockerfile: Dockerfile) -> None:
    text = manifests.named("ConfigMap")["mcpmanager-config"]["data"]["config.json"]
    config = parse_config(text, "deploy/kubernetes/configmap.yaml: config.json")
    assert len(config.servers) >= 2
    commands = {server.command for server in config.servers.values() if isinstance(server, StdioServerConfig)}
    if "npx" in commands:
        assert dockerfile.arg_default("WITH_NODE") == "yes", "the sample runs npx: the image must have Node.js"


def test_the_tokens_secret_is_a_file_mcpmanagers_reader_accepts(manifests: Manifests, tmp_path: Path) -> None:
    text = manifests.named("Secret")["mcpmanager-tokens"]["stringData"]["tokens.json"]
    sample = tmp_path / "tokens.json"
    sample.write_text(text, encoding="utf-8")
    assert read_entries(sample) == []  # a placeholder grants nothing


def test_the_docs_make_the_secrets_the_deployment_mounts(manifests: Manifests) -> None:
    mounted = {v["secret"]["secretName"] for v in manifests.pod["volumes"] if "secret" in v}
    for doc in (ROOT / "docs" / "deploy.md", KUBERNETES / SECRETS_FILE):
        made = set(MAKES_SECRET.findall(doc.read_text(encoding="utf-8")))
        assert made == mounted, f"{doc.name} makes {sorted(made)}, the Deployment mounts {sorted(mounted)}"
