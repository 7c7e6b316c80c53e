from mcpmanager.cli import main

raise SystemExit(main())
