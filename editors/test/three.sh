#!/usr/bin/env bash
# Three people on three daemons in a chain (A - B - C; A and C never meet): Vera in Vim on A
# shares plan.txt, Emma in Emacs on B and Nora in Neovim on C open it by name, possibly before
# it has reached their daemon (they join it rather than starting another), each types a line,
# and each must see the other two's cursors with their names. At the end the three buffers are
# identical, hold all three lines once, and each editor saw both other names.
# Usage: editors/test/three.sh [path/to/quire]   (needs vim, emacs, nvim)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
quire="${1:-$root/.build/debug/quire}"
quire="$(cd "$(dirname "$quire")" && pwd)/$(basename "$quire")"
export QUIRE_BINARY="$quire" QUIRE_SECRET="$("$quire" secret)" QUIRE_WORK="$(mktemp -d)"
export XDG_DATA_HOME="$QUIRE_WORK/xdg" XDG_CONFIG_HOME="$QUIRE_WORK/config" XDG_STATE_HOME="$QUIRE_WORK/state"
work="$QUIRE_WORK"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ -n "${QUIRE_KEEP:-}" ]; then rm -rf "$QUIRE_KEEP"; cp -r "$work" "$QUIRE_KEEP" 2>/dev/null || true; fi
  # An editor tmux has just killed can still be writing its state files here: try again,
  # and never let cleaning up fail a test that passed (set -e holds in this trap too).
  rm -rf "$work" 2>/dev/null || { sleep 0.5; rm -rf "$work" || true; }
}
trap cleanup EXIT
trap "" PIPE
"$quire" --no-stdio --log-level info --socket "$work/a.sock" --data-dir "$work/a-data" --listen 127.0.0.1:0 2>"$work/a.log" & pids+=($!)
for _ in $(seq 1 500); do grep -q "listening for peers" "$work/a.log" 2>/dev/null && break; sleep 0.01; done
port_a="$(grep -o 'listening for peers on 127.0.0.1:[0-9]*' "$work/a.log" | head -1 | sed 's/.*://')"
"$quire" --no-stdio --log-level info --socket "$work/b.sock" --data-dir "$work/b-data" --listen 127.0.0.1:0 --connect "127.0.0.1:$port_a" 2>"$work/b.log" & pids+=($!)
for _ in $(seq 1 500); do grep -q "listening for peers" "$work/b.log" 2>/dev/null && break; sleep 0.01; done
port_b="$(grep -o 'listening for peers on 127.0.0.1:[0-9]*' "$work/b.log" | head -1 | sed 's/.*://')"
"$quire" --no-stdio --log-level info --socket "$work/c.sock" --data-dir "$work/c-data" --connect "127.0.0.1:$port_b" 2>"$work/c.log" & pids+=($!)
for _ in $(seq 1 500); do [ -S "$work/a.sock" ] && [ -S "$work/b.sock" ] && [ -S "$work/c.sock" ] && break; sleep 0.01; done

QUIRE_SOCKET="$work/a.sock" timeout 40 vim -u NONE -i NONE -N --not-a-term -n --cmd "set rtp^=$root/editors/vim" \
  -S "$here/three_vim.vim" </dev/null >/dev/null 2>&1 & vim=$!
QUIRE_SOCKET="$work/b.sock" timeout 40 emacs -Q --batch -L "$root/editors/emacs" -l "$here/three_emacs.el" \
  >"$work/emacs.out" 2>&1 & emacs=$!
QUIRE_SOCKET="$work/c.sock" timeout 40 nvim --headless -u NONE -i NONE -n --cmd "set rtp^=$root/editors/nvim" \
  --cmd 'runtime plugin/quire.lua' -c "luafile $here/three_nvim.lua" </dev/null >"$work/nvim.out" 2>&1 & nvim=$!
wait "$vim" || true; wait "$emacs" || true; wait "$nvim" || true

python3 - "$work" <<'PY'
import os, sys
work = sys.argv[1]
def read(name):
    path = os.path.join(work, name)
    return open(path, encoding="utf-8").read() if os.path.exists(path) else None
texts = {who: read(f"{who}.text") for who in ("vera", "emma", "nora")}
seen = {who: (read(f"{who}.names") or "").split() for who in ("vera", "emma", "nora")}
problems = []
if None in texts.values():
    problems.append("an editor wrote no text: " + ", ".join(w for w, t in texts.items() if t is None))
elif len(set(texts.values())) != 1:
    problems.append(f"the buffers differ: {texts!r}")
else:
    text = texts["vera"]
    for who in ("vera", "emma", "nora"):
        if text.count(f"from {who}\n") != 1:
            problems.append(f"'from {who}' is not there once: {text!r}")
for who, names in seen.items():
    others = {"vera", "emma", "nora"} - {who}
    if not others <= set(names):
        problems.append(f"{who} saw the cursors of {names}, not of both {sorted(others)}")
if problems:
    print("FAIL three:\n  " + "\n  ".join(problems))
    for log in ("emacs.out", "nvim.out"):
        print(f"--- {log}\n" + (read(log) or "")[-1500:])
    sys.exit(1)
print(f"ok   three: Vim, Emacs and Neovim on three chained daemons joined plan.txt by name, "
      f"{texts['vera'].count(chr(10))} identical lines, each saw the other two's cursors and names")
PY
