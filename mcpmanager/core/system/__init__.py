"""The operating system, as every room needs it: where files live, writing them atomically, finding a
command the way a shell would (and cmd.exe on Windows), our own command line, file locks, whether a
window can be shown, whether stdin and stdout can be polled."""
