#!/usr/bin/env bash
# Line moves in the real Vim (`:m 0`, `:m +2`, `ddp`, `:sort`, `:g/^/m`) while a second Vim, on
# another daemon, types a token at the end of a line that stays put at the same moment: both
# buffers end identical, every token once and whole, in the line it was typed in
# (protocol/decisions/edit-intent.md, rule 7). Run N times (default 3): when each edit reaches
# the other is up to timing, and every order must give the same text.
# Usage: editors/test/line_moves.sh [path/to/quire] [runs]   (needs vim)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
quire="${1:-$root/.build/debug/quire}"
quire="$(cd "$(dirname "$quire")" && pwd)/$(basename "$quire")"
runs="${2:-3}"
export QUIRE_BINARY="$quire" QUIRE_SECRET="$("$quire" secret)"
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; pids=(); }
trap cleanup EXIT
failed=0
for run in $(seq 1 "$runs"); do
  export QUIRE_WORK="$(mktemp -d)"
  a="$QUIRE_WORK/a.sock" b="$QUIRE_WORK/b.sock"
  "$quire" --no-stdio --socket "$a" --data-dir "$QUIRE_WORK/a-data" --listen 127.0.0.1:0 2>"$QUIRE_WORK/a.log" & pids+=($!)
  for _ in $(seq 1 500); do grep -q "listening for peers" "$QUIRE_WORK/a.log" 2>/dev/null && break; sleep 0.01; done
  port="$(grep -o 'listening for peers on 127.0.0.1:[0-9]*' "$QUIRE_WORK/a.log" | head -1 | sed 's/.*://')"
  "$quire" --no-stdio --socket "$b" --data-dir "$QUIRE_WORK/b-data" --connect "127.0.0.1:$port" 2>"$QUIRE_WORK/b.log" & pids+=($!)
  for _ in $(seq 1 1000); do [ -S "$a" ] && [ -S "$b" ] && break; sleep 0.01; done
  vimrun() {  # $1: role, $2: socket
    QUIRE_ROLE="$1" QUIRE_SOCKET="$2" timeout 120 \
      vim -u NONE -i NONE -N --not-a-term -n --cmd "set rtp^=$root/editors/vim" -S "$here/line_moves_vim.vim" </dev/null >/dev/null 2>&1
  }
  vimrun mover "$a" & mover=$!
  vimrun typist "$b" || true
  wait "$mover" || true
  cleanup
  if python3 - "$QUIRE_WORK" "$run" <<'PY'
import os, sys
work, run = sys.argv[1:]
expected = ["    row 3 c", "    row 1 a <A17>", "    row 2 b", "--", "  y = 2;", "  z = 3; // \"s\"", "  x = 1;", "--",
            "top", "  dp2 two; <B5>", "  dp1 one;", "end", "srt-a", "srt-b <E12>", "srt-c", "--",
            "row 5;", "row 4;", "row 3; f(y)", "row 2;", "row 1;", "--", "EOL"]
def result(role):
    path = os.path.join(work, f"{role}.result")
    return open(path, encoding="utf-8").read().split("\n")[:-1] if os.path.exists(path) else None
mover, typist = result("mover"), result("typist")
if mover == expected and typist == expected:
    print(f"ok   line_moves run {run}: both Vims show every move, each token in its line")
    sys.exit(0)
print(f"FAIL line_moves run {run}:\n  mover:  {mover!r}\n  typist: {typist!r}\n  wanted: {expected!r}")
sys.exit(1)
PY
  then rm -rf "$QUIRE_WORK"; else failed=$((failed + 1)); echo "  kept $QUIRE_WORK"; fi
done
exit "$failed"
