"""What the index knows of a tool, and what a search returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SearchDoc:
    key: str  # "server:tool" — stable identity
    server: str
    name: str  # the tool's original name
    exposed: str  # the name clients call
    title: str
    description: str
    # (parameter name, parameter description), from inputSchema.properties
    params: tuple[tuple[str, str], ...]

    @classmethod
    def from_tool(cls, server: str, name: str, exposed: str, spec: dict[str, Any]) -> SearchDoc:
        """From the tool's JSON as its server listed it (name, title, description, inputSchema, annotations).

        Anything malformed (a schema that is not an object, a description that is not text) counts as
        absent: a server's sloppy listing must not keep its other tools out of the index.
        """
        annotations = spec.get("annotations")
        title = spec.get("title")
        if not isinstance(title, str) and isinstance(annotations, dict):
            title = annotations.get("title")
        return cls(
            key=f"{server}:{name}",
            server=server,
            name=name,
            exposed=exposed,
            title=title if isinstance(title, str) else "",
            description=_text(spec.get("description")),
            params=_params(spec.get("inputSchema")),
        )


@dataclass(frozen=True)
class Hit:
    key: str
    score: float


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _params(schema: object) -> tuple[tuple[str, str], ...]:
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return ()
    return tuple((str(name), _param_text(prop)) for name, prop in properties.items())


def _param_text(prop: object) -> str:
    """A parameter's description plus its allowed values: `state` with `open|closed` is how a tool
    says it can list open pull requests, often nowhere else."""
    if not isinstance(prop, dict):
        return ""
    text = _text(prop.get("description"))
    values = prop.get("enum")
    if isinstance(values, list):
        words = [str(v) for v in values[:20] if isinstance(v, str | int | float)]
        if words:
            text = f"{text} {' '.join(words)}".strip()
    return text
