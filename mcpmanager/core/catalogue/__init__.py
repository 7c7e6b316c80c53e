"""The merged catalogue: every enabled tool of every enabled server under a short, valid, unique
exposed name, the per-tool settings applied, the last good lists cached on disk; and call templates."""
