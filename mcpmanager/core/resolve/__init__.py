"""Resolution of what models call: tool names (`names`) and argument names (`arguments`), safely."""
