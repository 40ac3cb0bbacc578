#!/usr/bin/env bash
# Byte-compiles quire.el (warnings are errors) and runs its ERT tests headless against the
# built quire binary. Usage: editors/emacs/test/run.sh [--bench] [path/to/quire]
# With --bench, prints the client's figures instead.
set -euo pipefail
if [ "${1:-}" = "--bench" ]; then
  exec emacs -Q --batch -L "$(cd "$(dirname "$0")/.." && pwd)" -l "$(cd "$(dirname "$0")" && pwd)/bench.el"
fi
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
quire="${1:-$root/.build/debug/quire}"
quire="$(cd "$(dirname "$quire")" && pwd)/$(basename "$quire")"   # absolute: the editors run elsewhere
work="$(mktemp -d)"
# Waits up to 5 s for a signalled child to exit (it writes its last snapshot) and reaps it; then
# kills it.
stop_within_5s() {
  local state
  for _ in $(seq 1 50); do
    state="$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null || true)"
    if [ -z "$state" ] || [ "$state" = Z ]; then wait "$1" 2>/dev/null || true; return 0; fi
    sleep 0.1
  done
  kill -9 "$1" 2>/dev/null || true
}
cleanup() {
  if [ -n "${daemon:-}" ]; then kill "$daemon" 2>/dev/null || true; stop_within_5s "$daemon"; fi
  # The daemon writes its last snapshot as it exits; never let cleaning up fail a run.
  rm -rf "$work" 2>/dev/null || { sleep 0.5; rm -rf "$work" 2>/dev/null || true; }
}
trap cleanup EXIT
cp "$here/../quire.el" "$work/"
emacs -Q --batch --eval '(setq byte-compile-error-on-warn t)' -f batch-byte-compile "$work/quire.el"
export QUIRE_BINARY="$quire" QUIRE_TEST_SOCKET="$work/quire.sock"
export XDG_DATA_HOME="$work/data"   # never the user's documents
"$quire" --no-stdio --socket "$QUIRE_TEST_SOCKET" 2>"$work/daemon.log" &
daemon=$!
for _ in $(seq 1 500); do [ -S "$QUIRE_TEST_SOCKET" ] && break; sleep 0.01; done
# Batch Emacs could die of SIGPIPE writing to a process that just exited.
trap '' PIPE
timeout 120 emacs -Q --batch -L "$work" -l "$here/quire-test.el" -f ert-run-tests-batch-and-exit
