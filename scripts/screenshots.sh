#!/usr/bin/env bash
# The README's screenshots: the real app on a virtual X screen (Xvfb), captured with ImageMagick.
# scripts/screenshots.sh [SCENE...]: the scenes of scripts/screenshots.py (all by default).
# Needs xvfb, xauth and imagemagick (apt), and the published servers (scripts/install-published-servers.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
for tool in Xvfb import; do
  command -v "$tool" >/dev/null || { echo "screenshots: $tool is missing (apt-get install xvfb xauth imagemagick)" >&2; exit 2; }
done
display=:87
Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
xvfb=$!
trap 'kill "$xvfb" 2>/dev/null' EXIT
sleep 1
scenes=("$@")  # scripts/screenshots.py's scenes; all of them when none is named
[ ${#scenes[@]} -gt 0 ] || scenes=(tour failing-start pins-diff approval keyring sign-in learned more-clients)
for scene in "${scenes[@]}"; do  # one process each: one app, one engine, one config per scene
  DISPLAY="$display" QT_QPA_PLATFORM=xcb .venv/bin/python scripts/screenshots.py "$scene"
done
