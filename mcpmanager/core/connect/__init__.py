"""`mcpmanager connect`: a client's stdio relayed to the user's one engine (started if none runs).
Light on imports on purpose: a client waits for it to start."""
