#!/usr/bin/env bash
# Two people, as they really work: a Vim and an Emacs running in tmux, each attached to its own
# daemon, the daemons paired over loopback TCP, driven by keystrokes (tmux send-keys) as a
# person types. They type into the same line at once; one types `them ` before `then` while the
# other deletes `then`; Vim pastes several lines in insert mode; and the Emacs side's daemon is
# killed with SIGKILL while both keep typing, then started again; then the Vim side's daemon,
# while both type into one line; and each undoes a line of their own.
# At the end the two buffers and the two daemons hold one text, and every token each person
# typed is in it exactly once, whole, in the order they typed it.
# Usage: editors/test/keystrokes.sh [path/to/quire]   (needs tmux, vim, emacs)
# QUIRE_KEEP=DIR keeps the logs, data and final buffers there.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
quire="${1:-$root/.build/debug/quire}"
quire="$(cd "$(dirname "$quire")" && pwd)/$(basename "$quire")"
work="$(mktemp -d)"
export QUIRE_SECRET="$("$quire" secret)" XDG_DATA_HOME="$work/xdg"
tmux_socket="quire-keys-$$"
a_pid="" b_pid=""
tmux_pid=""
cleanup() {
  tmux -L "$tmux_socket" kill-server 2>/dev/null || true
  # A server that does not answer is killed outright: it holds the editors' terminals.
  if [ -n "$tmux_pid" ]; then kill -9 "$tmux_pid" 2>/dev/null || true; fi
  rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$tmux_socket"
  for p in "$a_pid" "$b_pid"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  # A daemon writes its last snapshot as it exits: let it finish before its directory goes.
  for p in "$a_pid" "$b_pid"; do [ -n "$p" ] && wait "$p" 2>/dev/null || true; done
  if [ -n "${QUIRE_KEEP:-}" ]; then rm -rf "$QUIRE_KEEP"; cp -r "$work" "$QUIRE_KEEP" 2>/dev/null || true; fi
  # An editor tmux has just killed can still be writing its state files here: try again,
  # and never let cleaning up fail a test that passed (set -e holds in this trap too).
  rm -rf "$work" 2>/dev/null || { sleep 0.5; rm -rf "$work" || true; }
}
trap cleanup EXIT
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
start_a() { "$quire" --no-stdio --socket "$work/a.sock" --data-dir "$work/a-data" --listen "127.0.0.1:$port" 2>>"$work/a.log" & a_pid=$!; }
start_b() { "$quire" --no-stdio --socket "$work/b.sock" --data-dir "$work/b-data" --connect "127.0.0.1:$port" 2>>"$work/b.log" & b_pid=$!; }
probe() { python3 "$here/quire_probe.py" "$quire" "$@"; }
fail() { echo "FAIL keystrokes: $*"; for f in a.log b.log vim.log; do [ -f "$work/$f" ] && { echo "--- $f"; tail -20 "$work/$f"; }; done; exit 1; }
wait_for() {  # $1: seconds, $2...: a command that succeeds when the condition holds
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do [ $SECONDS -lt $deadline ] || return 1; sleep 0.1; done
}
keys() { tmux -L "$tmux_socket" send-keys -t "$1" "${@:2}"; }
# Types each token of $2... into pane $1, one keystroke burst per token, as a quick typist.
type_tokens() { local pane=$1; shift; for token in "$@"; do keys "$pane" -l "$token"; sleep 0.04; done; }

start_a
for _ in $(seq 1 500); do [ -S "$work/a.sock" ] && grep -q "listening for peers" "$work/a.log" 2>/dev/null && break; sleep 0.01; done
start_b
for _ in $(seq 1 500); do [ -S "$work/b.sock" ] && break; sleep 0.01; done

cat >"$work/vim-setup.vim" <<EOF
vim9script
runtime plugin/quire.vim
g:quire_command = ['$quire', 'attach', '$work/a.sock']
g:quire_log = '$work/vim.log'
set noswapfile
enew
setline(1, ['start end', 'see the then', 'last'])
QuireShare pair.txt
# What the buffer shows, written out for the checks (lines, then whether it ends in a newline).
timer_start(100, (_) => writefile(getline(1, '\$') + [&eol ? 'EOL' : 'NOEOL'], '$work/vim.txt'), {repeat: -1})
timer_start(100, (_) => writefile([quire#StatusLine()], '$work/vim-status.txt'), {repeat: -1})
EOF
cat >"$work/emacs-setup.el" <<EOF
(require 'quire)
(setq quire-command (list "$quire" "attach" "$work/b.sock"))
(quire-open "pair.txt")
(run-with-timer 0.1 0.1 (lambda ()
  (when-let ((buffer (get-buffer "pair.txt")))
    (with-current-buffer buffer
      (let ((inhibit-message t)) (write-region (point-min) (point-max) "$work/emacs.txt" nil 'quiet))))))
EOF
# The tmux server outlives this script's commands and inherits its open files: it gets none but
# stdio, so a runner that waits for this script's descriptors to close (Foundation's Process
# does) is not kept waiting by it.
inherited=()
for fd in /proc/$$/fd/*; do n="${fd##*/}"; case "$n" in 0|1|2|255) ;; *) inherited+=("$n>&-");; esac; done
eval "tmux -L \"\$tmux_socket\" new-session -d -s pair -x 160 -y 40 \
  \"vim -u NONE -i NONE -N -n --cmd 'set rtp^=\$root/editors/vim' -S '\$work/vim-setup.vim'\" ${inherited[*]} </dev/null >/dev/null 2>&1"
tmux_pid="$(tmux -L "$tmux_socket" display-message -p '#{pid}')"
wait_for 10 probe "$work/b.sock" text pair.txt || fail "the document never reached the second daemon"
tmux -L "$tmux_socket" new-window -t pair \
  "emacs -nw -Q -L '$root/editors/emacs' -l '$work/emacs-setup.el'"
vim=pair:0 emacs=pair:1
buffer_is() { [ -f "$work/$1" ] && grep -q -- "$2" "$work/$1"; }
wait_for 15 buffer_is emacs.txt "see the then" || fail "Emacs never showed the document"
wait_for 10 buffer_is vim.txt "see the then" || fail "Vim never showed the document"

# 1. Both type into line 1 at once: Vim after "start ", Emacs at the end of the line.
keys "$vim" Escape gg0w i
keys "$emacs" M-\< C-e
v1=(v01\  v02\  v03\  v04\  v05\  v06\  v07\  v08\  v09\  v10\ )
e1=(\ e01 \ e02 \ e03 \ e04 \ e05 \ e06 \ e07 \ e08 \ e09 \ e10)
type_tokens "$vim" "${v1[@]}" & typing=$!
type_tokens "$emacs" "${e1[@]}"
wait "$typing"

# 2. The issue's race by keystrokes: Vim types "them " before "then" while Emacs deletes "then".
keys "$vim" Escape 2G \$ b
keys "$emacs" M-\< C-n C-e
keys "$vim" i
keys "$vim" -l "them " & typing=$!
keys "$emacs" M-BSpace
wait "$typing"

# 3. An insert-mode paste of three lines at the end, while Emacs types on line 1.
keys "$vim" Escape
keys "$vim" -l ':let @p = " p1\np2\np3"'
keys "$vim" Enter G \$ a C-r p
keys "$vim" -l " tail"
keys "$emacs" M-\< C-e
type_tokens "$emacs" \ e11 \ e12 \ e13

# 4. The Emacs side's daemon dies (SIGKILL) while both type, and comes back.
keys "$vim" Escape G o
v2=(v11\  v12\  v13\  v14\  v15\  v16\  v17\  v18\  v19\  v20\ )
e2=(\ e14 \ e15 \ e16 \ e17 \ e18 \ e19 \ e20 \ e21 \ e22 \ e23)
type_tokens "$vim" "${v2[@]}" & typing=$!
type_tokens "$emacs" "${e2[@]:0:3}"
kill -9 "$b_pid"; wait "$b_pid" 2>/dev/null || true
type_tokens "$emacs" "${e2[@]:3:4}"
sleep 1
start_b
type_tokens "$emacs" "${e2[@]:7}"
wait "$typing"
keys "$vim" Escape

# 5. Both type into that last line at once (Vim at its end, Emacs at its start) while Vim's
#    daemon dies (SIGKILL) and comes back; Vim keeps typing while it is away.
keys "$vim" G \$ a
keys "$emacs" M-\> C-p C-a
v3=(v21\  v22\  v23\  v24\  v25\  v26\  v27\  v28\  v29\  v30\ )
e3=(e24\  e25\  e26\  e27\  e28\  e29\  e30\ )
type_tokens "$emacs" "${e3[@]}" & typing=$!
type_tokens "$vim" "${v3[@]:0:3}"
kill -9 "$a_pid"; wait "$a_pid" 2>/dev/null || true
type_tokens "$vim" "${v3[@]:3:4}"
sleep 1
start_a
type_tokens "$vim" "${v3[@]:7}"
wait "$typing"
keys "$vim" Escape

# 6. Each undoes a line of their own while the other's text is around it.
wait_for 20 buffer_is vim-status.txt "peer" || fail "Vim never reconnected to its daemon"
keys "$vim" o
keys "$vim" -l "oops1 oops2"
keys "$vim" Escape
wait_for 10 buffer_is emacs.txt "oops2" || fail "Vim's line never reached Emacs"
keys "$vim" u
keys "$emacs" M-\< C-e
keys "$emacs" -l " zap1 zap2"
wait_for 10 buffer_is vim.txt "zap2" || fail "Emacs's words never reached Vim"
keys "$emacs" C-_

# The end: the same text everywhere, and every token once, whole, in order.
same_everywhere() {
  python3 - "$work" "$(probe "$work/a.sock" text pair.txt)" "$(probe "$work/b.sock" text pair.txt; echo -n .)" <<'PY'
import sys
work, a, b = sys.argv[1], sys.argv[2], sys.argv[3][:-1]
lines = open(f"{work}/vim.txt", encoding="utf-8").read().split("\n")[:-1]
vim = "\n".join(lines[:-1]) + ("\n" if lines[-1] == "EOL" else "")
emacs = open(f"{work}/emacs.txt", encoding="utf-8").read()
# $(...) drops the daemon A's final newline; compare without trailing newlines there.
ok = vim == emacs == b and vim.rstrip("\n") == a.rstrip("\n")
open(f"{work}/final.txt", "w", encoding="utf-8").write(vim)
sys.exit(0 if ok else 1)
PY
}
wait_for 30 same_everywhere || {
  echo "vim:   $(cat "$work/vim.txt" | tr '\n' '|')"; echo "emacs: $(tr '\n' '|' <"$work/emacs.txt")"
  fail "the buffers and daemons did not converge"
}
python3 - "$work/final.txt" <<'PY' || fail "a typed token is missing, garbled, doubled or out of order"
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
words = re.findall(r"\S+", text)
problems = []
for author, count in (("v", 30), ("e", 30)):
    positions = []
    for n in range(1, count + 1):
        token = f"{author}{n:02d}"
        found = [i for i, w in enumerate(words) if w == token]
        if len(found) != 1:
            problems.append(f"{token} appears {len(found)} times as a word")
        else:
            positions.append(found[0])
    if positions != sorted(positions):
        problems.append(f"{author}'s tokens are out of order")
lines = text.split("\n")
if lines[1] != "see the them ":
    problems.append(f"line 2 is {lines[1]!r}, not 'see the them '")
for gone in ("oops", "zap"):
    if gone in text:
        problems.append(f"the undone {gone!r} is still there")
for piece in ("p1", "p2", "p3 tail"):
    if text.count(piece) != 1:
        problems.append(f"the pasted {piece!r} appears {text.count(piece)} times")
leftover = [w for w in words if re.fullmatch(r"[ve]\d+", w) is None and w not in ("start", "end", "see", "the", "them", "last", "p1", "p2", "p3", "tail")]
if leftover:
    problems.append(f"garbled words: {leftover}")
if problems:
    print("\n".join(problems))
    print(repr(text))
    sys.exit(1)
print(f"ok   keystrokes: Vim and Emacs on paired daemons, {len(words)} words, every token once, whole and in order")
PY
