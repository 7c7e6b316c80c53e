#!/usr/bin/env bash
# Build the desktop app: a PyInstaller onedir folder and a tarball of it.
#
#   packaging/build.sh [--dist DIR]      (default DIR: dist/ in the checkout)
#
# Produces DIR/mcpmanager/ (the `mcpmanager` binary: the window, `serve`, `connect` and every other
# subcommand; `install.sh` for the desktop entry) and DIR/mcpmanager-<version>-linux-<arch>.tar.gz.
# Builds for the machine it runs on (PyInstaller does not cross-build).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
dist="$root/dist"
case "${1:-}" in
  --dist) dist="$(mkdir -p "$2" && cd "$2" && pwd)" ;;
  "") ;;
  *) echo "usage: packaging/build.sh [--dist DIR]" >&2; exit 2 ;;
esac

"$root/scripts/setup.sh"
.venv/bin/python -m pip install -q "pyinstaller>=6.10,<7"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "build: PyInstaller (onedir) into $dist/mcpmanager" >&2
.venv/bin/pyinstaller --noconfirm --clean --log-level WARN \
  --distpath "$dist" --workpath "$work" packaging/mcpmanager.spec
cp resources/install.sh "$dist/mcpmanager/install.sh"
"$dist/mcpmanager/mcpmanager" --version >/dev/null  # the binary starts at all

version="$(.venv/bin/python -c 'import mcpmanager; print(mcpmanager.__version__)')"
tarball="$dist/mcpmanager-$version-linux-$(uname -m).tar.gz"
tar -C "$dist" -czf "$tarball" mcpmanager
echo "build: $dist/mcpmanager/mcpmanager ($(du -sh "$dist/mcpmanager" | cut -f1)), $tarball ($(du -sh "$tarball" | cut -f1))" >&2
