#!/usr/bin/env bash
# End to end: two editors, each on its own daemon, the daemons paired over loopback TCP or over
# a pipe (quire peer --stdio); both type at once (inserts, deletes, Enter in the middle of a
# line, joining lines, pasting, non-ASCII and emoji, and in Emacs an undo); both buffers must end
# identical.
# Pairs: Vim-Emacs over TCP and over a pipe, Vim-Vim, Emacs-Emacs.
# Usage: editors/test/e2e.sh [path/to/quire]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
quire="${1:-$root/.build/debug/quire}"
quire="$(cd "$(dirname "$quire")" && pwd)/$(basename "$quire")"   # absolute: the editors run elsewhere
export QUIRE_BINARY="$quire" QUIRE_SECRET="$("$quire" secret)"
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; pids=(); }
trap cleanup EXIT
failed=0
trap "" PIPE   # batch Emacs could die of SIGPIPE writing to a process that just exited

start_daemons() {  # $1: tcp or pipe
  export QUIRE_WORK="$(mktemp -d)"
  a="$QUIRE_WORK/a.sock" b="$QUIRE_WORK/b.sock"
  if [ "$1" = tcp ]; then
    "$quire" --no-stdio --socket "$a" --data-dir "$QUIRE_WORK/a-data" --listen 127.0.0.1:0 2>"$QUIRE_WORK/a.log" & pids+=($!)
    for _ in $(seq 1 500); do grep -q "listening for peers" "$QUIRE_WORK/a.log" 2>/dev/null && break; sleep 0.01; done
    local port
    port="$(grep -o 'listening for peers on 127.0.0.1:[0-9]*' "$QUIRE_WORK/a.log" | head -1 | sed 's/.*://')"
    "$quire" --no-stdio --socket "$b" --data-dir "$QUIRE_WORK/b-data" --connect "127.0.0.1:$port" 2>"$QUIRE_WORK/b.log" & pids+=($!)
  else
    # The far end reads the secret from its own file: a --connect-command inherits no QUIRE_SECRET.
    (umask 077; printf '%s\n' "$QUIRE_SECRET" >"$QUIRE_WORK/secret")
    "$quire" --no-stdio --socket "$a" --data-dir "$QUIRE_WORK/a-data" --connect-command "'$quire' peer --stdio --socket '$b' --data-dir '$QUIRE_WORK/b-data' --secret-file '$QUIRE_WORK/secret'" 2>"$QUIRE_WORK/a.log" & pids+=($!)
  fi
  for _ in $(seq 1 1000); do [ -S "$a" ] && [ -S "$b" ] && break; sleep 0.01; done
}

editor() {  # $1: vim or emacs, $2: role, $3: socket, $4: mark
  if [ "$1" = vim ]; then
    QUIRE_ROLE="$2" QUIRE_SOCKET="$3" QUIRE_MARK="$4" timeout 120 \
      vim -u NONE -i NONE -N --not-a-term -n --cmd "set rtp^=$root/editors/vim" -S "$here/e2e_vim.vim" </dev/null >/dev/null 2>&1
  else
    QUIRE_ROLE="$2" QUIRE_SOCKET="$3" QUIRE_MARK="$4" timeout 120 \
      emacs -Q --batch -L "$root/editors/emacs" -l "$here/e2e_emacs.el" >"$QUIRE_WORK/$2.out" 2>&1
  fi
}

run_pair() {  # $1: first editor, $2: second editor, $3: tcp or pipe
  start_daemons "$3"
  editor "$1" first "$a" v & local first=$!
  editor "$2" second "$b" w || true
  wait "$first" || true
  cleanup
  if python3 - "$QUIRE_WORK" "$1" "$2" "$3" <<'PY'
import os, sys
work, first, second, how = sys.argv[1:]
def text(role, kind):
    path = os.path.join(work, f"{role}.{kind}.result")
    if not os.path.exists(path):
        return None
    data = open(path, encoding="utf-8").read()
    if kind == "emacs":
        return data
    lines = data.split("\n")[:-1]
    eol = lines.pop() == "EOL"
    return "\n".join(lines) + ("\n" if eol else "")
one, two = text("first", first), text("second", second)
name = f"{first}-{second} over {how}"
if one is not None and one == two and all(s in one for s in ("v19", "w19", "lazy dog", "ünï😀")) and "UNDONE" not in one:
    print(f"ok   e2e {name}: {one.count(chr(10)) + 1} lines, {len(one)} characters, identical")
    sys.exit(0)
print(f"FAIL e2e {name}:\n  first:  {one!r}\n  second: {two!r}")
sys.exit(1)
PY
  then :; else failed=$((failed + 1)); fi
}

run_pair vim emacs tcp
run_pair vim emacs pipe
run_pair vim vim tcp
run_pair emacs emacs tcp
exit "$failed"
