"""The files of `deploy/` read as their consumers read them: the Kubernetes manifests as YAML
documents, the Dockerfile through `dockerfile-parse` (its exec forms as JSON, as Docker reads them),
`.dockerignore` by Docker's rules (last matching pattern wins, `!` lets a path back in)."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from dockerfile_parse import DockerfileParser

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
KUBERNETES = DEPLOY / "kubernetes"
DOCKERFILE = DEPLOY / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"  # the build context is the repository root
KUSTOMIZATION = "kustomization.yaml"

Resource = dict[str, Any]


def manifest_files(folder: Path = KUBERNETES) -> list[Path]:
    """Every Kubernetes manifest (kustomization.yaml is kustomize's, not an API object)."""
    return sorted(p for p in folder.glob("*.yaml") if p.name != KUSTOMIZATION)


def documents(path: Path) -> list[Resource]:
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc is not None]


@dataclass(frozen=True)
class Manifests:
    """Every resource of `deploy/kubernetes`, found by kind and name."""

    resources: list[Resource]

    @classmethod
    def load(cls, folder: Path = KUBERNETES) -> Manifests:
        return cls([doc for path in manifest_files(folder) for doc in documents(path)])

    def named(self, kind: str) -> dict[str, Resource]:
        return {r["metadata"]["name"]: r for r in self.resources if r["kind"] == kind}

    def one(self, kind: str) -> Resource:
        found = list(self.named(kind).values())
        assert len(found) == 1, f"expected one {kind} in deploy/kubernetes, found {len(found)}"
        return found[0]

    @property
    def deployment(self) -> Resource:
        return self.one("Deployment")

    @property
    def pod(self) -> Resource:
        spec: Resource = self.deployment["spec"]["template"]["spec"]
        return spec

    @property
    def container(self) -> Resource:
        containers: list[Resource] = self.pod["containers"]
        assert len(containers) == 1, "the gateway pod has one container"
        return containers[0]

    def volume(self, name: str) -> Resource:
        volumes: dict[str, Resource] = {v["name"]: v for v in self.pod.get("volumes", [])}
        assert name in volumes, f"no volume {name!r} in the Deployment (it has {sorted(volumes)})"
        return volumes[name]

    def mount_of(self, path: str) -> Resource:
        """The volumeMount whose folder holds `path` (the deepest one)."""
        holding = [
            m for m in self.container.get("volumeMounts", []) if path.startswith(m["mountPath"].rstrip("/") + "/")
        ]
        assert holding, f"{path} lies in no volume mounted in the container"
        deepest: Resource = max(holding, key=lambda m: len(m["mountPath"]))
        return deepest


@dataclass(frozen=True)
class Dockerfile:
    parser: DockerfileParser

    @classmethod
    def load(cls, path: Path = DOCKERFILE) -> Dockerfile:
        return cls(DockerfileParser(path=str(path)))

    def instructions(self, name: str) -> list[str]:
        return [i["value"] for i in self.parser.structure if i["instruction"] == name]

    def last_stage(self, name: str) -> list[str]:
        """The values of `name` in the final stage (what the image is)."""
        found: list[str] = []
        for item in self.parser.structure:
            if item["instruction"] == "FROM":
                found = []
            elif item["instruction"] == name:
                found.append(item["value"])
        return found

    def exec_form(self, name: str) -> list[str]:
        """ENTRYPOINT or CMD of the final stage, which must be exec form (a JSON array)."""
        values = self.last_stage(name)
        assert len(values) == 1, f"expected one {name} in the final stage, found {len(values)}"
        return json_array(values[0], name)

    def healthcheck(self) -> list[str]:
        values = self.last_stage("HEALTHCHECK")
        assert len(values) == 1, "expected one HEALTHCHECK in the final stage"
        _, found, command = values[0].partition("CMD ")
        assert found, f"HEALTHCHECK without CMD: {values[0]}"
        return json_array(command, "HEALTHCHECK CMD")

    def env(self) -> dict[str, str]:
        return dict(self.parser.envs)

    def arg_default(self, name: str) -> str | None:
        for value in self.last_stage("ARG"):
            key, _, default = value.partition("=")
            if key.strip() == name:
                return default.strip() or None
        return None

    def copied_sources(self) -> list[str]:
        """What the COPY instructions take from the build context (not `--from` another stage)."""
        sources: list[str] = []
        for value in self.instructions("COPY"):
            words = shlex.split(value)
            if any(w.startswith("--from") for w in words):
                continue
            sources.extend(w for w in words[:-1] if not w.startswith("--"))
        return sources


def json_array(text: str, what: str) -> list[str]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise AssertionError(f"{what} is not exec form (a JSON array): {text!r}: {exc}") from None
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), f"{what}: not a list of strings"
    return value


def _pattern(text: str) -> re.Pattern[str]:
    """A .dockerignore pattern as a regex: `**` any folders, `*` and `?` within one name."""
    out = []
    i = 0
    while i < len(text):
        if text.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif text.startswith("**", i):
            out.append(".*")
            i += 2
        elif text[i] == "*":
            out.append("[^/]*")
            i += 1
        elif text[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(text[i]))
            i += 1
    return re.compile("".join(out))


def ignored(path: str, rules: str) -> bool:
    """Whether Docker leaves `path` (relative to the context) out: the last pattern that matches the
    path or one of its folders decides."""
    parts = path.strip("/").split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    verdict = False
    for line in rules.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        keep = line.startswith("!")
        pattern = _pattern(line.lstrip("!").strip().strip("/"))
        if any(pattern.fullmatch(prefix) for prefix in prefixes):
            verdict = not keep
    return verdict
