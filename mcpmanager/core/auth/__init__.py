"""Signing in to remote servers with OAuth: tokens in the vault, the loopback redirect, sign-in state
(docs/trust.md, "Signing in to remote servers")."""
