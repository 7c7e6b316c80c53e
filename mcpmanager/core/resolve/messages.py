"""What a model reads when its tool name was not resolved: candidates, suggestions, a next step."""

from __future__ import annotations

from mcpmanager.core.resolve.names import Resolution
from mcpmanager.core.resolve.words import words

_WHY = {
    "destructive": "it can destroy data, so only its exact name calls it",
    "another action": "it does another kind of thing, so it is not called in its place",
}


def miss_text(resolution: Resolution, search: bool = True) -> str:
    """`Unknown tool 'x'. Did you mean: a, b, c? Or call discover_tools("x words").`

    `search`: the client can call discover_tools (discovery mode); in direct mode it lists every
    tool already, and a next step naming a tool it cannot call would mislead it."""
    called = resolution.called
    phrase = " ".join(words(called)) or called
    next_step = f'Or call discover_tools("{phrase}").' if search else ""
    if resolution.ambiguous:
        listed = " or ".join(f"{t.exposed} [{t.server}]" for t in resolution.ambiguous)
        text = f"Ambiguous tool name '{called}': it may be {listed}. Call one of them by its exact name."
        return f"{text} {next_step}".rstrip()
    text = f"Unknown tool '{called}'."
    suggestions = list(resolution.suggestions)
    if resolution.withheld is not None and resolution.withheld_why in _WHY:
        first = resolution.withheld.exposed
        text += f" The closest is {first}, but {_WHY[resolution.withheld_why]}."
        suggestions = [s for s in suggestions if s != first]
        if suggestions:
            text += f" Others: {', '.join(suggestions)}."
        return f"{text} {next_step}".rstrip()
    if suggestions:
        text += f" Did you mean: {', '.join(suggestions)}?"
    elif search:
        return f'{text} Find one with discover_tools("{phrase}").'  # nothing came before: no "Or"
    return f"{text} {next_step}".rstrip()
