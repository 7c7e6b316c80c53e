"""The clients' own config files (the clients are the table in `locations`): where they are,
reading their servers, importing them, installing mcpmanager into them and exporting mcpmanager's
servers to them with a preview, a backup and an exact undo, each file layout a dialect (`dialect`)
edited as text so every other byte stays."""
