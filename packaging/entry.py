"""The frozen app's entry point: the same command line as the `mcpmanager` console script (the
window with no arguments; `serve`, `connect` and the rest as subcommands)."""

import sys

from mcpmanager.cli import entry

if __name__ == "__main__":
    sys.exit(entry())
