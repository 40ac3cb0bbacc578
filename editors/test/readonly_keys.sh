#!/usr/bin/env bash
# Read-only buffers in real editors, by keystrokes (tmux): Vim, Neovim and Emacs each share a
# buffer with a stand-in daemon that says it is read-only (editors/test/readonly_daemon.py, as a
# daemon whose role in the project is `read`). Typing into it, several ways and several times,
# changes nothing and sends nothing; each editor says why exactly once, in its message area, and
# its status or mode line says read-only; the daemon's edits (a writer's) still appear. Then the
# daemon says the buffer may change (document/readOnly) and typing works.
# (editors/test/readonly.sh does the same with real daemons and roles end to end.)
# Usage: editors/test/readonly_keys.sh   (needs tmux, vim, nvim, emacs, python3)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$(mktemp -d)"
work="$(cd "$work" && pwd -P)"
. "$here/editor_setups.sh"
tmux_socket="quire-readonly-keys-$$"
tmux_pid=""
vim=keys:0 nvim=keys:1 emacs=keys:2
cleanup() {
  tmux -L "$tmux_socket" kill-server 2>/dev/null || true
  if [ -n "$tmux_pid" ]; then kill -9 "$tmux_pid" 2>/dev/null || true; fi
  rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$tmux_socket"
  # An editor tmux has just killed can still be writing its state files here: try again,
  # and never let cleaning up fail a test that passed (set -e holds in this trap too).
  rm -rf "$work" 2>/dev/null || { sleep 0.5; rm -rf "$work" || true; }
}
trap cleanup EXIT
screen() { tmux -L "$tmux_socket" capture-pane -p -t "$1" 2>/dev/null | grep -v '^~ *$' | tail -8 || true; }
fail() {
  echo "FAIL readonly_keys: $*"
  for e in vim nvim emacs; do echo "--- $e: $(cat "$work/$e.state" 2>/dev/null)"; done
  for p in "$vim" "$nvim" "$emacs"; do echo "--- screen $p"; screen "$p"; done
  exit 1
}
fake="python3 $here/readonly_daemon.py"
for e in vim nvim emacs; do printf 'plan for <A17> and f(x)\nvera: write "s"\nend\n' >"$work/$e.txt"; done

# Each editor writes, every 100 ms: its buffer's text (.buf), and a state line (.state): whether
# the buffer may change, its status or mode line, how often the client said why, and the last
# command it ran (a sentinel the test types after the attempts).
cat >"$work/vim-setup.vim" <<EOF
vim9script
runtime plugin/quire.vim
g:quire_command = ['python3', '$here/readonly_daemon.py']
g:quire_user = 'rita'
g:sentinel = 0
set noswapfile nomore hidden laststatus=2
set statusline=%f\ %{quire#StatusLine()}
edit $work/vim.txt
QuireShare notes
var plan = bufnr()
timer_start(100, (_) => {
    writefile(getbufline(plan, 1, '\$'), '$work/vim.btmp')
    rename('$work/vim.btmp', '$work/vim.buf')
    var told = len(filter(split(execute('messages'), "\n"), (_, l) => l =~# 'you can read notes but not change it'))
    writefile(['modifiable=' .. (getbufvar(plan, '&modifiable') ? 1 : 0) .. ' status=' .. quire#StatusLine() .. ' told=' .. told .. ' sentinel=' .. g:sentinel], '$work/vim.stmp')
    rename('$work/vim.stmp', '$work/vim.state')
  }, {repeat: -1})
EOF
cat >"$work/nvim-setup.lua" <<EOF
local quire = require('quire')
quire.config.command = { 'python3', '$here/readonly_daemon.py' }
quire.config.user = 'rita'
quire.config.log = '$work/nvim.log'
vim.g.sentinel = 0
vim.o.laststatus = 2
vim.cmd('edit $work/nvim.txt')
vim.cmd('QuireShare notes')
local plan = vim.api.nvim_get_current_buf()
vim.fn.timer_start(100, function()
  vim.fn.writefile(vim.api.nvim_buf_get_lines(plan, 0, -1, false), '$work/nvim.btmp')
  vim.fn.rename('$work/nvim.btmp', '$work/nvim.buf')
  local told = 0
  for _, line in ipairs(vim.fn.filereadable('$work/nvim.log') == 1 and vim.fn.readfile('$work/nvim.log') or {}) do
    if line:find('said: quire: you can read notes but not change it', 1, true) then told = told + 1 end
  end
  vim.fn.writefile({ 'modifiable=' .. (vim.bo[plan].modifiable and 1 or 0) .. ' status=' .. quire.statusline() .. ' told=' .. told
                     .. ' sentinel=' .. vim.g.sentinel }, '$work/nvim.stmp')
  vim.fn.rename('$work/nvim.stmp', '$work/nvim.state')
end, { ['repeat'] = -1 })
EOF
cat >"$work/emacs-setup.el" <<EOF
(require 'quire)
(setq quire-command (list "python3" "$here/readonly_daemon.py") quire-user-name "rita"
      make-backup-files nil create-lockfiles nil auto-save-default nil)
(defvar quire-test-sentinel 0)
(find-file "$work/emacs.txt")
(quire-share "notes")
(defvar quire-test-plan (current-buffer))
(run-with-timer 0.1 0.1 (lambda ()
  (let ((inhibit-message t) (coding-system-for-write 'utf-8-unix))
    (when (buffer-live-p quire-test-plan)
      (with-current-buffer quire-test-plan
        (write-region nil nil "$work/emacs.btmp" nil 'quiet)
        (rename-file "$work/emacs.btmp" "$work/emacs.buf" t)
        (write-region (format "modifiable=%d status=%s told=%d sentinel=%d\n" (if buffer-read-only 0 1) (quire--lighter)
                              (with-current-buffer (messages-buffer)
                                (how-many "^Quire: you can read notes but not change it" (point-min) (point-max)))
                              quire-test-sentinel)
                      nil "$work/emacs.stmp" nil 'quiet)
        (rename-file "$work/emacs.stmp" "$work/emacs.state" t))))))
EOF
inherited=()
for fd in /proc/$$/fd/*; do n="${fd##*/}"; case "$n" in 0|1|2|255) ;; *) inherited+=("$n>&-");; esac; done
export QUIRE_FAKE_CONTROL
vim_command="env QUIRE_FAKE_CONTROL='$work/vim.control' vim -u NONE -i NONE -N -n --cmd 'set rtp^=$root/editors/vim' -S '$work/vim-setup.vim'"
eval "tmux -L \"\$tmux_socket\" new-session -d -s keys -x 160 -y 30 \"\$vim_command\" ${inherited[*]} </dev/null >/dev/null 2>&1"
tmux_pid="$(tmux -L "$tmux_socket" display-message -p '#{pid}')"
tmux -L "$tmux_socket" new-window -t keys \
  "env QUIRE_FAKE_CONTROL='$work/nvim.control' nvim -u NONE -i NONE -n --cmd 'set rtp^=$root/editors/nvim' --cmd 'runtime plugin/quire.lua' -c 'luafile $work/nvim-setup.lua'"
tmux -L "$tmux_socket" new-window -t keys "env QUIRE_FAKE_CONTROL='$work/emacs.control' emacs -nw -Q -L '$root/editors/emacs' -l '$work/emacs-setup.el'"

state() { grep -q -- "$2" "$work/$1.state" 2>/dev/null; }
for e in vim nvim emacs; do wait_for 20 state $e 'modifiable=0' || fail "$e's shared buffer is not read-only"; done
original="$(cat "$work/vim.txt")"

# Typing, three times and three ways each: insert, change, delete. After the first, each says
# why in its message area.
attempt() {
  keys "$vim" Escape 2G i; keys "$vim" -l "vim$1"; keys "$vim" Escape x d d
  keys "$nvim" Escape 2G A; keys "$nvim" -l "nvim$1"; keys "$nvim" Escape c w; keys "$nvim" Escape
  keys "$emacs" M-\< C-n; keys "$emacs" -l "emacs$1"; keys "$emacs" C-k C-d
}
# The first key typed: the editor refuses it, then the client says why.
keys "$vim" Escape 2G i; keys "$nvim" Escape 2G i; keys "$emacs" M-\< C-n x
wait_for 10 eval "screen '$vim' | grep -q 'quire: you can read notes but not change it (role read)'" || fail "Vim's message area does not say why"
wait_for 10 eval "screen '$nvim' | grep -q 'quire: you can read notes but not change it (role read)'" || fail "Neovim's message area does not say why"
wait_for 10 eval "screen '$emacs' | grep -q 'Quire: you can read notes but not change it (role read)'" || fail "Emacs's echo area does not say why"
attempt 1
attempt 2
attempt 3
# Then a command of the test's own: once it ran, every attempt before it was handled. (An editor
# drops keys typed ahead of an error it beeps for, so it is typed again until it ran.)
vim_sentinel() { keys "$vim" Escape; keys "$vim" -l ":let g:sentinel = 1"; keys "$vim" Enter; wait_for 3 state vim 'sentinel=1'; }
nvim_sentinel() { keys "$nvim" Escape; keys "$nvim" -l ":let g:sentinel = 1"; keys "$nvim" Enter; wait_for 3 state nvim 'sentinel=1'; }
emacs_sentinel() { keys "$emacs" M-:; keys "$emacs" -l "(setq quire-test-sentinel 1)"; keys "$emacs" Enter; wait_for 3 state emacs 'sentinel=1'; }
for e in vim nvim emacs; do
  wait_for 30 ${e}_sentinel || fail "$e never ran the test's command"
  state $e 'told=1 ' || fail "$e did not say why exactly once"
  state $e 'read-only' || fail "$e's status or mode line does not say read-only"
  [ "$(cat "$work/$e.buf")" = "$original" ] || fail "$e's buffer changed: $(tr '\n' '|' <"$work/$e.buf")"
done
echo "     typing three ways, three times, in Vim, Neovim and Emacs: no change, one message each, read-only on the status line"

# A writer's edit (from the daemon) still appears; then the role allows writing and typing works.
for e in vim nvim emacs; do
  printf '%s\n' '{"jsonrpc": "2.0", "method": "document/edit", "params": {"uri": "notes", "epoch": 1, "revision": 0, "changes": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "<W1> "}]}}' >>"$work/$e.control"
done
for e in vim nvim emacs; do wait_for 10 grep -qF '<W1> plan' "$work/$e.buf" || fail "the writer's edit did not reach $e's read-only buffer"; done
for e in vim nvim emacs; do
  printf '%s\n' '{"fake": "writable", "uri": "notes"}' >>"$work/$e.control"
  printf '%s\n' '{"jsonrpc": "2.0", "method": "document/readOnly", "params": {"uri": "notes", "readOnly": false, "reason": "you can change notes again (role write)", "project": "notes", "role": "write"}}' >>"$work/$e.control"
done
for e in vim nvim emacs; do wait_for 10 state $e 'modifiable=1' || fail "$e's buffer did not become writable"; done
keys "$vim" Escape 3G A; keys "$vim" -l " <V2>"; keys "$vim" Escape
keys "$nvim" Escape 3G A; keys "$nvim" -l " <N2>"; keys "$nvim" Escape
keys "$emacs" M-\< C-n C-n C-e; keys "$emacs" -l " <E2>"
for pair in vim:V nvim:N emacs:E; do
  e="${pair%%:*}"; wait_for 10 grep -qF "<${pair##*:}2>" "$work/$e.buf" || fail "typing did not work in $e once writable"
done
echo "ok   readonly_keys: Vim, Neovim and Emacs keep a read-only buffer unchanged by keystrokes, say why once, show a writer's edit, and edit again once writable"
