"""The config file: typed servers and settings (each option declared once with its check), loading
with errors that name the file, key path, line and column, lossless atomic saves, the proxy modes,
server names, JSON as text, and servers from pasted JSON."""
