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
. "$root/editors/test/runner_cleanup.sh"
trap runner_cleanup EXIT
cp "$here/../quire.el" "$work/"
emacs -Q --batch --eval '(setq byte-compile-error-on-warn t)' -f batch-byte-compile "$work/quire.el"
export QUIRE_BINARY="$quire" QUIRE_TEST_SOCKET="$work/quire.sock"
export XDG_DATA_HOME="$work/data"   # never the user's documents
"$quire" --no-stdio --socket "$QUIRE_TEST_SOCKET" 2>"$work/daemon.log" &
daemon=$!
for _ in $(seq 1 500); do [ -S "$QUIRE_TEST_SOCKET" ] && break; sleep 0.01; done
# Batch Emacs could die of SIGPIPE writing to a process that just exited.
trap '' PIPE
timeout 120 emacs -Q --batch -L "$work" -l "$here/quire-test.el" -l "$here/quire-workflow-test.el" -f ert-run-tests-batch-and-exit
