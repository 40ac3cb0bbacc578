#!/usr/bin/env bash
# Runs the Neovim client's headless tests against the built quire binary.
# Usage: editors/nvim/test/run.sh [path/to/quire]   (default: .build/debug/quire; needs nvim >= 0.7)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
quire="${1:-$root/.build/debug/quire}"
quire="$(cd "$(dirname "$quire")" && pwd)/$(basename "$quire")"   # absolute: the editor runs elsewhere
work="$(mktemp -d)"
. "$root/editors/test/runner_cleanup.sh"
trap runner_cleanup EXIT
export QUIRE_BINARY="$quire" QUIRE_TEST_SOCKET="$work/quire.sock" QUIRE_TEST_LOG="$work/client.log"
export XDG_DATA_HOME="$work/data" XDG_CONFIG_HOME="$work/config" XDG_STATE_HOME="$work/state"   # never the user's
"$quire" --no-stdio --socket "$QUIRE_TEST_SOCKET" 2>"$work/daemon.log" &
daemon=$!
for _ in $(seq 1 500); do [ -S "$QUIRE_TEST_SOCKET" ] && break; sleep 0.01; done
failed=0
for test in "$here"/${QUIRE_TEST_PATTERN:-test_*.lua}; do   # QUIRE_TEST_PATTERN=test_x.lua runs one
  export QUIRE_TEST_RESULT="$work/$(basename "$test").result"
  rm -f "$QUIRE_TEST_RESULT"
  # harness.lua runs the test and quits with its result whatever happens (an error, its
  # deadline): "no result" means Neovim itself crashed or hung inside one call past 120 s.
  QUIRE_TEST_SCRIPT="$test" timeout -k 5 120 nvim --headless -u NONE -i NONE -n --cmd "set rtp^=$here/.." --cmd 'runtime plugin/quire.lua' \
    -c "luafile $here/harness.lua" </dev/null >"$work/nvim.out" 2>&1 || true
  if [ ! -f "$QUIRE_TEST_RESULT" ]; then
    echo "FAIL $(basename "$test"): no result (nvim crashed or hung)"; sed 's/^/  /' "$work/nvim.out" | tail -20; failed=$((failed + 1))
  elif [ -s "$QUIRE_TEST_RESULT" ]; then
    echo "FAIL $(basename "$test"):"; sed 's/^/  /' "$QUIRE_TEST_RESULT"; echo; failed=$((failed + 1))
  else
    echo "ok   $(basename "$test")"
  fi
done
[ -f "$QUIRE_TEST_LOG" ] && [ "$failed" -gt 0 ] && { echo "client log:"; tail -40 "$QUIRE_TEST_LOG"; }
exit "$failed"
