"""The frozen app's entry point: the same command line as the `mcpmanager` console script (the
window with no arguments; `serve`, `connect` and the rest as subcommands), and the engine's
watchdog (`mcpmanager.core.system.watchdog`), which a frozen app cannot start with `-m`."""

import sys

if __name__ == "__main__":
    from mcpmanager.core.system import watchdog

    if sys.argv[1:2] == [watchdog.ARGUMENT]:
        sys.exit(watchdog.main(sys.argv[2:]))
    from mcpmanager.cli import entry

    sys.exit(entry())
