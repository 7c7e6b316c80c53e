"""PySide6 front end: observes the core engine."""
