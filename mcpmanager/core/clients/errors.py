"""What the clients' files refuse: one line each, naming the file; nothing was written."""

from __future__ import annotations


class ClientNotFound(Exception):
    """No config of the client exists; str() is one line naming the places looked at."""


class InstallError(Exception):
    """Not installed or undone; str() is one line naming the file, and the file was left as it is."""
