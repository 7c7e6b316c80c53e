#!/usr/bin/env bash
# Install mcpmanager for the current user (no root): the desktop entry, the icon in the icon theme,
# and `mcpmanager` on PATH (~/.local/bin). `--uninstall` removes exactly what was installed; your
# config and logs stay.
#
#   From the app tarball:   mcpmanager/install.sh [--uninstall]
#   From a source checkout: resources/install.sh [--uninstall]   (after ./scripts/run.sh set it up)
#
# The app is copied to ~/.local/share/mcpmanager/app (so the unpacked tarball can go); from source
# the entry runs the checkout's .venv/bin/mcpmanager. XDG_DATA_HOME is honoured.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
data="${XDG_DATA_HOME:-$HOME/.local/share}"
bin="$HOME/.local/bin"
own="$data/mcpmanager"
manifest="$own/installed-files"
app_home="$own/app"

say() { printf 'mcpmanager install: %s\n' "$*"; }
fail() { printf 'mcpmanager install: %s\n' "$*" >&2; exit 1; }

refresh_caches() {
  # Menus and icon themes watch these folders' times. No icon-theme.cache is written here: a cache in
  # the user's theme that other installers do not update would hide their icons.
  touch "$data/applications" "$data/icons/hicolor" 2>/dev/null || true
}

uninstall() {
  [ -f "$manifest" ] || fail "nothing to uninstall: $manifest does not exist"
  while IFS= read -r path; do
    [ -n "$path" ] || continue
    if [ -L "$path" ] || [ -f "$path" ]; then rm -f -- "$path"; fi
  done <"$manifest"
  rm -f -- "$manifest"
  rm -rf -- "$app_home"
  rmdir -- "$own" 2>/dev/null || true
  refresh_caches
  say "uninstalled. Your config and logs were kept (\`mcpmanager\` Help → About names the folders)."
}

case "${1:-}" in
  --uninstall) uninstall; exit 0 ;;
  "") ;;
  -h|--help) sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) fail "unknown option $1 (use --uninstall, or nothing to install)" ;;
esac

# Where the app and its desktop files are: the frozen app's folder, or a source checkout. The SVG icon
# is the package's own (the window draws it too), beside its modules in either.
if [ -x "$here/mcpmanager" ] && [ -d "$here/_internal" ]; then
  resources="$here/_internal/resources"
  svg="$here/_internal/mcpmanager/gui/icons/mcpmanager.svg"
  if [ "$here" != "$app_home" ]; then
    mkdir -p "$own"
    staging="$own/.app-new"
    rm -rf -- "$staging"
    cp -a -- "$here" "$staging"
    rm -rf -- "$app_home"
    mv -- "$staging" "$app_home"
  fi
  command="$app_home/mcpmanager"
  uninstaller="$app_home/install.sh"
elif [ -f "$here/mcpmanager.desktop" ] && [ -x "$here/../.venv/bin/mcpmanager" ]; then
  resources="$here"
  svg="$here/../mcpmanager/gui/icons/mcpmanager.svg"
  command="$(cd "$here/.." && pwd)/.venv/bin/mcpmanager"
  uninstaller="$here/install.sh"
elif [ -f "$here/mcpmanager.desktop" ]; then
  fail "this checkout has no .venv yet: run ./scripts/run.sh once, then this again"
else
  fail "cannot find the app next to this script ($here)"
fi
[ -f "$resources/mcpmanager.desktop" ] || fail "missing $resources/mcpmanager.desktop"
[ -f "$svg" ] || fail "missing $svg"

installed=()

# The desktop entry, pointing at this installation (clients and menus do not use the shell's PATH).
mkdir -p "$data/applications"
entry="$data/applications/mcpmanager.desktop"
quoted="\"${command//\"/\\\"}\""
sed -e "s|^Exec=.*|Exec=$quoted|" -e "s|^TryExec=.*|TryExec=$command|" "$resources/mcpmanager.desktop" >"$entry"
installed+=("$entry")
if command -v desktop-file-validate >/dev/null 2>&1; then
  desktop-file-validate "$entry" || fail "the desktop entry did not validate: $entry"
fi

# The icon: the SVG for scalable themes, the PNG sizes for the rest.
icons="$data/icons/hicolor"
mkdir -p "$icons/scalable/apps"
cp -- "$svg" "$icons/scalable/apps/mcpmanager.svg"
installed+=("$icons/scalable/apps/mcpmanager.svg")
for png in "$resources"/icons/png/mcpmanager-*.png; do
  size="${png##*-}"
  size="${size%.png}"
  mkdir -p "$icons/${size}x${size}/apps"
  cp -- "$png" "$icons/${size}x${size}/apps/mcpmanager.png"
  installed+=("$icons/${size}x${size}/apps/mcpmanager.png")
done

# `mcpmanager` on PATH for the command line, unless something else of that name is there already.
mkdir -p "$bin"
link="$bin/mcpmanager"
if [ -e "$link" ] && [ ! -L "$link" ]; then
  say "left $link alone (it is not ours); the app is $command"
else
  ln -sfn -- "$command" "$link"
  installed+=("$link")
fi

mkdir -p "$own"
printf '%s\n' "${installed[@]}" >"$manifest"
refresh_caches
say "installed: mcpmanager is in your applications menu (runs $command)."
case ":$PATH:" in
  *":$bin:"*) ;;
  *) say "$bin is not on your PATH: add it to use \`mcpmanager\` in a terminal." ;;
esac
say "to connect your clients: \`mcpmanager install --client claude-desktop\` (or the Clients page)."
say "to remove: $uninstaller --uninstall"
