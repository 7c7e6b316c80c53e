"""Downstream servers: one `Downstream` per server, owning its child process (or its remote
connection) and SDK session; the lifecycle state machine (sans-io) decides, the downstream carries
out; every server's stderr as a bounded line stream."""
