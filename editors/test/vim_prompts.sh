#!/usr/bin/env bash
# Vim in a real terminal (tmux), driven by keystrokes: nothing the Quire client says makes Vim
# wait for ENTER and eat what is typed next. After :QuireDisconnect with two people linked (and
# their "left" messages arriving while typing), after an edit the daemon refuses (and the
# resync that follows), after the daemon cannot be reached (initialize failed), and after the
# menu that asks what to do with a document of the same name holding other text, the keys typed
# next all land in the buffer and no "Press ENTER" is on the screen.
# Usage: editors/test/vim_prompts.sh [path/to/quire]   (needs tmux, vim)
set -euo pipefail
# A command that fails outside `fail` (set -e) says which, rather than ending the run silently.
trap 'echo "FAIL vim_prompts: line $LINENO: \"$BASH_COMMAND\" exited with status $?"' ERR
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
quire="${1:-$root/.build/debug/quire}"
quire="$(cd "$(dirname "$quire")" && pwd)/$(basename "$quire")"
work="$(mktemp -d)"
export QUIRE_SECRET="$("$quire" secret)" XDG_DATA_HOME="$work/xdg"
tmux_socket="quire-prompts-$$"
pids=()
tmux_pid=""
cleanup() {
  tmux -L "$tmux_socket" kill-server 2>/dev/null || true
  # A server that does not answer is killed outright: it holds the editors' terminals.
  if [ -n "$tmux_pid" ]; then kill -9 "$tmux_pid" 2>/dev/null || true; fi
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  # An editor tmux has just killed can still be writing its state files here: try again,
  # and never let cleaning up fail a test that passed (set -e holds in this trap too).
  rm -rf "$work" 2>/dev/null || { sleep 0.5; rm -rf "$work" || true; }
}
trap cleanup EXIT
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$quire" --no-stdio --socket "$work/a.sock" --data-dir "$work/a" --listen "127.0.0.1:$port" >/dev/null 2>>"$work/a.log" & pids+=($!)
for _ in $(seq 1 500); do [ -S "$work/a.sock" ] && break; sleep 0.01; done
for who in bea carl; do
  "$quire" --no-stdio --socket "$work/$who.sock" --data-dir "$work/$who" --user-name "$who" --connect "127.0.0.1:$port" >/dev/null 2>>"$work/$who.log" & pids+=($!)
done
fail() {
  echo "FAIL vim_prompts: $*"; echo "--- screen"; tmux -L "$tmux_socket" capture-pane -p -t "$pane" 2>/dev/null | grep -v '^~ *$' || true
  echo "--- client log"; tail -n 30 "$work/vim.log" 2>/dev/null || true
  exit 1
}
wait_for() {  # $1: seconds, $2...: a command that succeeds when the condition holds
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do [ $SECONDS -lt $deadline ] || return 1; sleep 0.1; done
}
keys() { tmux -L "$tmux_socket" send-keys -t "$pane" "$@"; }
buffer_has() { [ -f "$work/vim.txt" ] && grep -qx -- "$1" "$work/vim.txt"; }
screen_has() { tmux -L "$tmux_socket" capture-pane -p -t "$pane" | grep -q -- "$1"; }
no_prompt() { ! tmux -L "$tmux_socket" capture-pane -p -t "$pane" | grep -q 'Press ENTER'; }

# $1: the socket the client attaches to. The buffer is written out for the checks.
start_vim() {
  cat >"$work/vim-setup.vim" <<EOF
vim9script
runtime plugin/quire.vim
g:quire_command = ['$quire', 'attach', '$1']
g:quire_log = '$work/vim.log'
set noswapfile
enew
setline(1, ['start'])
timer_start(100, (_) => writefile(getline(1, '\$'), '$work/vim.txt'), {repeat: -1})
EOF
  rm -f "$work/vim.txt"
  session=$((${session:-0} + 1))   # a session each, the new one first: the server ends with its last
  # The tmux server outlives this script's commands: it gets no descriptor but stdio, so a
  # runner waiting for this script's output to close (Foundation's Process) is not kept waiting.
  local inherited=()
  for fd in /proc/$$/fd/*; do n="${fd##*/}"; case "$n" in 0|1|2|255) ;; *) inherited+=("$n>&-");; esac; done
  eval "tmux -L \"\$tmux_socket\" new-session -d -s \"s\$session\" -x 100 -y 30 \
    \"vim -u NONE -i NONE -N -n --cmd 'set rtp^=\$root/editors/vim' -S '\$work/vim-setup.vim'\" ${inherited[*]} </dev/null >/dev/null 2>&1"
  tmux_pid="$(tmux -L "$tmux_socket" display-message -p '#{pid}')"
  if [ -n "${pane:-}" ]; then keys -l ':qall!'; keys Enter; fi
  pane="s$session:0"
  wait_for 10 buffer_has start || fail "Vim did not start"
}

# 1. Two people linked, :QuireDisconnect, and typing at once while they are said to have left.
# Both links up first, so that the share says so (on a loaded machine they can take a while).
links_up() { [ "$(python3 "$here/quire_probe.py" "$quire" "$work/a.sock" links)" = "$1" ]; }
wait_for 20 links_up 2 || fail "bea and carl never linked to the daemon"
pane=""
start_vim "$work/a.sock"
keys -l ':QuireShare plan.txt'; keys Enter
wait_for 15 screen_has 'with 2 peer links' || fail "bea and carl never linked"
keys -l ':QuireDisconnect'; keys Enter
wait_for 10 grep -q 'peer carl left' "$work/vim.log" || fail "no message that carl left"
wait_for 10 grep -q 'peer bea left' "$work/vim.log" || fail "no message that bea left"
no_prompt || fail "a Press ENTER prompt after :QuireDisconnect"
keys -l 'otyped after disconnect'; keys Escape
wait_for 10 buffer_has 'typed after disconnect' || fail "keys typed after :QuireDisconnect were lost: $(cat "$work/vim.txt")"
grep -q 'disconnected from bea, carl\|disconnected from carl, bea' "$work/vim.log" || fail "the disconnect message does not name the people"

# 2. An edit the daemon refuses (a client bug, simulated): said, resynced, typing goes on.
keys -l ':call quire#BreakRevisionForTest(bufnr())'; keys Enter
keys -l 'orefused line'; keys Escape
wait_for 10 grep -q 'resynced' "$work/vim.log" || fail "no resync after the refusal"
no_prompt || fail "a Press ENTER prompt after a refused edit"
keys -l 'oafter the refusal'; keys Escape
wait_for 10 buffer_has 'after the refusal' || fail "keys typed after the refusal were lost: $(cat "$work/vim.txt")"
no_prompt || fail "a Press ENTER prompt after a refused edit"

# 3. No daemon to attach to: initialize fails, said once, typing goes on.
start_vim "$work/nobody.sock"
keys -l ':QuireShare lonely.txt'; keys Enter
wait_for 15 screen_has 'initialize failed' || fail "no message that the daemon could not be reached"
no_prompt || fail "a Press ENTER prompt after initialize failed"
keys -l 'otyped after the failure'; keys Escape
wait_for 15 buffer_has 'typed after the failure' || fail "keys typed after initialize failed were lost: $(cat "$work/vim.txt")"
no_prompt || fail "a Press ENTER prompt after initialize failed"

# 4. A document of that name with other text (-32017): a menu asks, the buffer says it is not
# shared meanwhile, one key answers (a: keep mine apart), and typing goes on.
printf '%s\n' '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}' \
  '{"jsonrpc":"2.0","id":1,"method":"document/open","params":{"uri":"differs.txt","text":"the shared text\n"}}' \
  '{"jsonrpc":"2.0","id":2,"method":"shutdown"}' '{"jsonrpc":"2.0","method":"exit"}' \
  | "$quire" attach "$work/a.sock" 2>/dev/null | cat >/dev/null
start_vim "$work/a.sock"
keys -l ':set laststatus=2 statusline=%{quire#StatusLine()}'; keys Enter
keys -l ':QuireShare differs.txt'; keys Enter
wait_for 15 screen_has 'Take the shared text' || fail "no menu asking what to do with differs.txt"
screen_has 'Keep mine apart' || fail "the menu does not offer to keep the text apart"
screen_has 'NOT shared, choose' || fail "the status line does not say the buffer is not shared"
keys a
wait_for 10 grep -q 'shared apart as "differs.txt~' "$work/vim.log" || fail "the text was not shared apart"
screen_has 'Take the shared text' && fail "the menu is still up"
keys -l 'otyped after the choice'; keys Escape
wait_for 10 buffer_has 'typed after the choice' || fail "keys typed after the choice were lost: $(cat "$work/vim.txt")"
no_prompt || fail "a Press ENTER prompt after the choice"
[ "$(python3 "$here/quire_probe.py" "$quire" "$work/a.sock" text differs.txt)" = "the shared text" ] \
  || fail "differs.txt changed: $(python3 "$here/quire_probe.py" "$quire" "$work/a.sock" text differs.txt)"
echo "ok   vim_prompts.sh"
