#!/usr/bin/env bash
# Follows README.md's editor install lines, verbatim, in a fresh home directory (the release
# build step is replaced by the quire given, so the test does not build twice), then checks that
# Vim, Neovim and Emacs each load Quire from where those lines put it, and that quire runs from
# ~/.local/bin. Usage: editors/test/install.sh [path/to/quire]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
quire="${1:-$root/.build/debug/quire}"
quire="$(cd "$(dirname "$quire")" && pwd)/$(basename "$quire")"
home="$(mktemp -d)"
trap 'rm -rf "$home"' EXIT
lines="$(sed -n '/<!-- install:begin -->/,/<!-- install:end -->/p' "$root/README.md" | sed '1,2d;$d' | sed '$d')"
[ -n "$lines" ] || { echo "FAIL install: no install lines found in README.md"; exit 1; }
# The release build: the given binary stands in for .build/release/quire.
lines="${lines//swift build -c release && /}"
lines="${lines//.build\/release\/quire/$quire}"
(cd "$root" && env -i PATH="/usr/bin:/bin" HOME="$home" bash -euo pipefail -c "$lines")
fail() { echo "FAIL install: $*"; exit 1; }
[ -x "$home/.local/bin/quire" ] || fail "quire is not in ~/.local/bin"
env -i PATH="$home/.local/bin:/usr/bin:/bin" HOME="$home" quire --help >/dev/null 2>&1 || fail "quire does not run from ~/.local/bin"
vim_says="$(env -i PATH=/usr/bin:/bin HOME="$home" TERM=dumb vim -i NONE -N -n --not-a-term -es \
  -c 'redir! > /dev/stdout | echo exists(":QuireShare") | redir END' -c 'qall!' </dev/null 2>/dev/null | tr -d '[:space:]')"
[ "$vim_says" = "2" ] || fail "Vim does not know :QuireShare (got '$vim_says')"
nvim_says="$(env -i PATH=/usr/bin:/bin HOME="$home" nvim --headless -c 'lua io.stdout:write(vim.fn.exists(":QuireShare"))' -c q 2>/dev/null)"
[ "$nvim_says" = "2" ] || fail "Neovim does not know :QuireShare (got '$nvim_says')"
emacs_says="$(env -i PATH=/usr/bin:/bin HOME="$home" emacs --batch -l "$home/.emacs.d/init.el" --eval '(princ (if (fboundp (quote quire-share)) "yes" "no"))' 2>/dev/null)"
[ "$emacs_says" = "yes" ] || fail "Emacs does not know quire-share (got '$emacs_says')"
echo "ok   install: README's lines in a fresh home give Vim, Neovim and Emacs the client and quire on ~/.local/bin"
