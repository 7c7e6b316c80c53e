"""The engine, Qt-free: it runs headless (`mcpmanager serve`) and the window only observes it.

Rooms, top layer first (the order is enforced: docs/architecture.md, tests/core/test_architecture.py):
`connect` → `engine` → `serve` | `clients` → `proxy` → `resolve` → `search` | `catalogue` |
`supervisor` → `config` → `system`, and below them the modules of this folder that every room uses
(`tasks`, `signals`, `tool_results`, `sdk_compat`).

The words are the proxy's point of view: *downstream* is towards the MCP servers mcpmanager runs (it
is their client), *upstream* towards the clients that talk to mcpmanager (it is their server).
"""
