from mcpmanager.cli import entry

raise SystemExit(entry())
