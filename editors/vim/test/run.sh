#!/usr/bin/env bash
# Runs the Vim client's headless tests against the built quire binary, and, where tmux is
# installed, editors/test/vim_prompts.sh (Vim in a terminal, by keystrokes).
# Usage: editors/vim/test/run.sh [--bench] [path/to/quire]   (default: .build/debug/quire)
# With --bench, runs bench_*.vim instead and prints their figures.
set -euo pipefail
pattern="${QUIRE_TEST_PATTERN:-test_*.vim}"   # QUIRE_TEST_PATTERN=test_undo.vim runs one
if [ "${1:-}" = "--bench" ]; then pattern="bench_*.vim"; shift; fi
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
quire="${1:-$root/.build/debug/quire}"
quire="$(cd "$(dirname "$quire")" && pwd)/$(basename "$quire")"   # absolute: the editors run elsewhere
work="$(mktemp -d)"
. "$root/editors/test/runner_cleanup.sh"
trap runner_cleanup EXIT
export QUIRE_BINARY="$quire" QUIRE_TEST_SOCKET="$work/quire.sock" QUIRE_TEST_LOG="$work/client.log"
export XDG_DATA_HOME="$work/data"   # never the user's documents
if [[ "$pattern" == bench_* ]]; then
  # Benchmarks also get a second daemon paired over loopback TCP, for cross-daemon figures.
  export QUIRE_SECRET="$("$quire" secret)"
  "$quire" --no-stdio --socket "$QUIRE_TEST_SOCKET" --listen 127.0.0.1:0 2>"$work/daemon.log" &
  daemon=$!
  for _ in $(seq 1 500); do grep -q "listening for peers" "$work/daemon.log" 2>/dev/null && break; sleep 0.01; done
  port="$(grep -o 'listening for peers on 127.0.0.1:[0-9]*' "$work/daemon.log" | head -1 | sed 's/.*://')"
  "$quire" --no-stdio --socket "$work/peer.sock" --connect "127.0.0.1:$port" --data-dir "$work/peer-data" 2>"$work/peer.log" &
  peer=$!
else
  "$quire" --no-stdio --socket "$QUIRE_TEST_SOCKET" 2>"$work/daemon.log" &
  daemon=$!
fi
for _ in $(seq 1 500); do [ -S "$QUIRE_TEST_SOCKET" ] && break; sleep 0.01; done
failed=0
runs=("")
[[ "$pattern" == bench_* ]] && runs=("" "$work/peer.sock")
for test in "$here"/$pattern; do
 for peer_socket in "${runs[@]}"; do
  export QUIRE_TEST_RESULT="$work/$(basename "$test").result" QUIRE_TEST_PEER_SOCKET="$peer_socket"
  rm -f "$QUIRE_TEST_RESULT"
  # harness.vim sources the test and quits with its result whatever happens (an error, its
  # deadline): "no result" means Vim itself crashed or hung inside one call past 60 s.
  status=0
  QUIRE_TEST_SCRIPT="$test" timeout -k 5 60 vim -u NONE -i NONE -N --not-a-term -n --cmd "set rtp^=$here/.." --cmd 'filetype off' \
    -S "$here/harness.vim" </dev/null >/dev/null 2>&1 || status=$?
  if [ ! -f "$QUIRE_TEST_RESULT" ]; then
    echo "FAIL $(basename "$test"): no result (vim crashed or hung; status $status)"; failed=$((failed + 1))
  elif [[ "$pattern" == bench_* ]]; then
    cat "$QUIRE_TEST_RESULT"
  elif [ -s "$QUIRE_TEST_RESULT" ]; then
    echo "FAIL $(basename "$test"):"; sed 's/^/  /' "$QUIRE_TEST_RESULT"; failed=$((failed + 1))
  else
    echo "ok   $(basename "$test")"
  fi
 done
done
# Vim in a real terminal, by keystrokes: no message asks for ENTER (needs tmux).
if [[ "$pattern" == "test_*.vim" ]] && command -v tmux >/dev/null; then
  status=0
  timeout 120 "$root/editors/test/vim_prompts.sh" "$quire" || status=$?
  if [ "$status" -eq 124 ]; then echo "FAIL vim_prompts.sh: still running after 120 s"; fi
  if [ "$status" -ne 0 ]; then failed=$((failed + 1)); fi
fi
[ -f "$QUIRE_TEST_LOG" ] && [ "$failed" -gt 0 ] && { echo "client log:"; cat "$QUIRE_TEST_LOG"; }
exit "$failed"
