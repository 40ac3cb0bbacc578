#!/usr/bin/env bash
# Runs the Vim client's headless tests against the built quire binary.
# Usage: editors/vim/test/run.sh [--bench] [path/to/quire]   (default: .build/debug/quire)
# With --bench, runs bench_*.vim instead and prints their figures.
set -euo pipefail
pattern="test_*.vim"
if [ "${1:-}" = "--bench" ]; then pattern="bench_*.vim"; shift; fi
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
quire="${1:-$root/.build/debug/quire}"
work="$(mktemp -d)"
trap 'if [ -n "${daemon:-}" ]; then kill "$daemon" 2>/dev/null || true; fi; rm -rf "$work"' EXIT
export QUIRE_BINARY="$quire" QUIRE_TEST_SOCKET="$work/quire.sock" QUIRE_TEST_LOG="$work/client.log"
"$quire" --no-stdio --socket "$QUIRE_TEST_SOCKET" 2>"$work/daemon.log" &
daemon=$!
for _ in $(seq 1 500); do [ -S "$QUIRE_TEST_SOCKET" ] && break; sleep 0.01; done
failed=0
for test in "$here"/$pattern; do
  export QUIRE_TEST_RESULT="$work/$(basename "$test").result"
  rm -f "$QUIRE_TEST_RESULT"
  timeout 60 vim -u NONE -i NONE -N --not-a-term -n --cmd "set rtp^=$here/.." --cmd 'filetype off' -S "$test" </dev/null >/dev/null 2>&1 || true
  if [ ! -f "$QUIRE_TEST_RESULT" ]; then
    echo "FAIL $(basename "$test"): no result (vim crashed or hung)"; failed=$((failed + 1))
  elif [[ "$pattern" == bench_* ]]; then
    cat "$QUIRE_TEST_RESULT"
  elif [ -s "$QUIRE_TEST_RESULT" ]; then
    echo "FAIL $(basename "$test"):"; sed 's/^/  /' "$QUIRE_TEST_RESULT"; failed=$((failed + 1))
  else
    echo "ok   $(basename "$test")"
  fi
done
[ -f "$QUIRE_TEST_LOG" ] && [ "$failed" -gt 0 ] && { echo "client log:"; cat "$QUIRE_TEST_LOG"; }
exit "$failed"
