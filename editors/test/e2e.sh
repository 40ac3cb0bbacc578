#!/usr/bin/env bash
# End to end: a Vim and an Emacs, each on its own daemon, the daemons paired over loopback TCP
# and then over a pipe (quire peer --stdio); both type at once; both buffers must end
# identical and equal to the daemons' text. Usage: editors/test/e2e.sh [path/to/quire]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
quire="${1:-$root/.build/debug/quire}"
export QUIRE_BINARY="$quire" QUIRE_SECRET="e2e-$$-secret"
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT
failed=0

run_pair() {  # $1: name of the topology; daemons already started on $QUIRE_SOCKET_A/B
  local name="$1"
  for _ in $(seq 1 1000); do [ -S "$QUIRE_SOCKET_A" ] && [ -S "$QUIRE_SOCKET_B" ] && break; sleep 0.01; done
  timeout 120 vim -u NONE -i NONE -N --not-a-term -n --cmd "set rtp^=$root/editors/vim" -S "$here/e2e_vim.vim" </dev/null >/dev/null 2>&1 &
  local vim=$!
  timeout 120 emacs -Q --batch -L "$root/editors/emacs" -l "$here/e2e_emacs.el" >"$QUIRE_WORK/emacs.out" 2>&1 || true
  wait "$vim" || true
  if [ ! -f "$QUIRE_WORK/vim.result" ] || [ ! -f "$QUIRE_WORK/emacs.result" ]; then
    echo "FAIL e2e over $name: an editor did not finish"; cat "$QUIRE_WORK/emacs.out"; failed=$((failed + 1)); return
  fi
  # Vim's lines plus its 'eol' flag, as text, against Emacs's buffer.
  if python3 - "$QUIRE_WORK/vim.result" "$QUIRE_WORK/emacs.result" "$name" <<'PY'
import sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")[:-1]
eol = lines.pop() == "EOL"
vim = "\n".join(lines) + ("\n" if eol else "")
emacs = open(sys.argv[2], encoding="utf-8").read()
if vim == emacs and "v19" in vim and "jumps over" in vim and "e19" in vim and "ünï😀" in vim:
    print(f"ok   e2e over {sys.argv[3]}: {vim.count(chr(10)) + 1} lines, {len(vim)} characters, identical in Vim and Emacs")
    sys.exit(0)
print(f"FAIL e2e over {sys.argv[3]}:\n  vim:   {vim!r}\n  emacs: {emacs!r}")
sys.exit(1)
PY
  then :; else failed=$((failed + 1)); fi
}

# Over loopback TCP.
export QUIRE_WORK="$(mktemp -d)" ; export QUIRE_SOCKET_A="$QUIRE_WORK/a.sock" QUIRE_SOCKET_B="$QUIRE_WORK/b.sock"
"$quire" --no-stdio --socket "$QUIRE_SOCKET_A" --listen 127.0.0.1:0 2>"$QUIRE_WORK/a.log" & pids+=($!)
for _ in $(seq 1 500); do grep -q "listening for peers" "$QUIRE_WORK/a.log" 2>/dev/null && break; sleep 0.01; done
port="$(grep -o 'listening for peers on 127.0.0.1:[0-9]*' "$QUIRE_WORK/a.log" | head -1 | sed 's/.*://')"
"$quire" --no-stdio --socket "$QUIRE_SOCKET_B" --connect "127.0.0.1:$port" 2>"$QUIRE_WORK/b.log" & pids+=($!)
run_pair "loopback TCP"
cleanup; pids=()

# Over a pipe: daemon B runs under daemon A as `quire peer --stdio`, as over ssh.
export QUIRE_WORK="$(mktemp -d)" ; export QUIRE_SOCKET_A="$QUIRE_WORK/a.sock" QUIRE_SOCKET_B="$QUIRE_WORK/b.sock"
"$quire" --no-stdio --socket "$QUIRE_SOCKET_A" --connect-command "'$quire' peer --stdio --socket '$QUIRE_SOCKET_B'" 2>"$QUIRE_WORK/a.log" & pids+=($!)
run_pair "a pipe (quire peer --stdio)"
exit "$failed"
