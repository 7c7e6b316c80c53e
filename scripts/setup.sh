#!/usr/bin/env bash
# Make this checkout runnable on a fresh Debian/Ubuntu machine: the system libraries Qt needs,
# a virtualenv in .venv, and the package with its test tools. Idempotent and quiet when done.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# Qt's platform plugins (offscreen for tests, xcb for a real window) load these at run time.
qt_libs=(libegl1 libgl1 libglx0 libglvnd0 libfontconfig1 libfreetype6 libxkbcommon0 libdbus-1-3
  libglib2.0-0 libx11-6 libxcb1 fonts-dejavu-core libxcb-cursor0 libxcb-icccm4 libxcb-image0
  libxcb-keysyms1 libxcb-randr0 libxcb-render-util0 libxcb-shape0 libxcb-shm0 libxcb-sync1
  libxcb-util1 libxcb-xfixes0 libxcb-xkb1 libxkbcommon-x11-0 libx11-xcb1
  # The app build (PyInstaller reads binaries with objdump) and its desktop entry's check.
  binutils desktop-file-utils
  # The team gateway's two-replica test runs behind a real load balancer.
  haproxy)
if command -v dpkg-query >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  missing=()
  for pkg in "${qt_libs[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  if ((${#missing[@]})); then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "setup: installing system libraries: ${missing[*]}" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

python="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $("$python" --version)" >&2
  "$python" -m venv .venv
fi
stamp=.venv/.mcpmanager-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "setup: installing mcpmanager and its test tools into .venv" >&2
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  .venv/bin/python -m pip install -q -e ".[test]"
  touch "$stamp"
fi
