"""The clients' own config files (Claude Desktop, Cursor, VS Code, Claude Code, Windsurf, Gemini CLI,
Codex): where they are, reading their servers, importing them, installing mcpmanager into them with a
preview, a backup and an exact undo, and editing JSON (and Codex's TOML) as text so every other byte
stays."""
