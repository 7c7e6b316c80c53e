"""Secrets kept out of files: the OS keyring, and `${keyring:NAME}` references to it in the config."""
