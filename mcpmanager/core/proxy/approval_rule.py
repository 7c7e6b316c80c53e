"""Which calls are asked before they are forwarded: the rule, and what a person is shown.

A tool's own `approval` in the config (`allow`, `ask`, `deny`) wins. Without one, `proxy.askBefore`
decides: `destructive` (the default) asks before tools that can destroy data, `all` before every
tool, `never` before none.

A tool can destroy data (`can_destroy`):
- by its annotations, read as the MCP spec defines them: `readOnlyHint: true` never does;
  `destructiveHint: true` does; `readOnlyHint: false` without `destructiveHint: false` does too,
  since the spec's default for `destructiveHint` is true for a tool that is not read-only;
- by its name, whatever the annotations that are not `readOnlyHint: true` say: a `delete_*` or
  `drop_*` (resolution's rule, `resolve/actions.py`, which does not trust a `destructiveHint: false`
  over a name that says delete: annotations are the server's unverified word).
A tool whose annotations say nothing either way is judged by its name alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from mcpmanager.core.config.secrets import MASK, mask_strings, names_secret
from mcpmanager.core.config.settings import Approval, ProxySettings, ToolSettings
from mcpmanager.core.resolve.actions import is_destructive
from mcpmanager.core.resolve.words import words


@dataclass(frozen=True)
class Rule:
    """What the config says about one tool's calls, and why (a phrase for messages and the window)."""

    policy: Approval
    why: str
    own: bool  # set for this tool (`tools."server:tool".approval`), not by `proxy.askBefore`


def destroys_by(name: str, spec: Mapping[str, Any]) -> Literal["annotations", "name"] | None:
    """What says tool `name` can destroy data: its annotations, its name, or nothing."""
    annotations = spec.get("annotations")
    if isinstance(annotations, Mapping):
        read_only, destructive = annotations.get("readOnlyHint"), annotations.get("destructiveHint")
        if read_only is True:
            return None
        if destructive is True or (read_only is False and destructive is not False):
            return "annotations"
    return "name" if is_destructive(words(name), {}) else None


def can_destroy(name: str, spec: Mapping[str, Any]) -> bool:
    return destroys_by(name, spec) is not None


def rule_for(name: str, spec: Mapping[str, Any], settings: ToolSettings | None, proxy: ProxySettings) -> Rule:
    """The policy for calls of tool `name` (as its server calls it) with definition `spec`."""
    if settings is not None and settings.approval is not None:
        return Rule(settings.approval, f"its approval is set to '{settings.approval}'", own=True)
    if proxy.ask_before == "never":
        return Rule("allow", "proxy.askBefore is 'never'", own=False)
    if proxy.ask_before == "all":
        return Rule("ask", "proxy.askBefore is 'all'", own=False)
    by = destroys_by(name, spec)
    if by is not None:
        said = "its annotations say" if by == "annotations" else "its name says"
        return Rule("ask", f"{said} it can destroy data", own=False)
    return Rule("allow", "it does not destroy data", own=False)


def masked_arguments(arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """Arguments as a person is shown them: a value under a secret's name (`apiKey`, `password`)
    masked whole, and secrets found in any other string by their shape (`core/config/secrets.py`)."""
    shown: dict[str, Any] = {}
    for key, value in (arguments or {}).items():
        if names_secret(key) and value not in (None, ""):
            shown[key] = MASK
        elif isinstance(value, Mapping):
            shown[key] = masked_arguments(value)
        else:
            shown[key] = mask_strings(value)
    return shown
