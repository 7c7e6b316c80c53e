"""What clients see: the two modes of the proxy, defined once.

`discovery` lists a few meta-tools (search, schema, call) and the always-on tools; `direct` lists
every enabled tool. The config's `proxy.mode`, `serve --mode`, `connect --mode`, `install --mode`, the
endpoint's paths (`/mcp/discovery`, `/mcp/direct`) and the window's mode choices all come from here.
"""

from __future__ import annotations

from typing import Literal, TypeGuard, get_args

Mode = Literal["discovery", "direct"]
MODES: tuple[Mode, ...] = get_args(Mode)
DEFAULT_MODE: Mode = "discovery"


def is_mode(value: object) -> TypeGuard[Mode]:
    return value in MODES
