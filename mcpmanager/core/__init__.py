"""Qt-free core: config, supervision, catalogue, proxy. Never imports PySide6 or qasync."""
