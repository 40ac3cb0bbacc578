#!/usr/bin/env bash
# Issue 22, a file shared by itself, in real editors (tmux, keystrokes). Vera runs `quire share
# notes/plan.txt` (its folder holds another file, never shared) and `quire invite --role read
# --once notes/plan.txt`; Rita runs `quire join` with that line and gets plan.txt/plan.txt alone.
# Vera's Vim and Rita's Neovim open the file by path: both join its document; Rita's buffer is
# read-only, what she types changes nothing anywhere, and Vera's typing reaches her; so for Emil,
# a second reader (his own once line), in Emacs. Then, in
# Vim, `:!quire share --detach %:S` shares another file by itself and `:e` joins it.
# Usage: editors/test/onefile.sh [path/to/quire]   (needs tmux, vim, nvim, emacs)
# QUIRE_KEEP=DIR keeps the logs, homes and dumps there.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
quire="${1:-$root/.build/debug/quire}"
quire="$(cd "$(dirname "$quire")" && pwd)/$(basename "$quire")"
name=onefile people=(vera rita emil) window=one
fail_files=(share.out share.err invite.err rita-join.out emil-join.out vim.log nvim.log nvim.state emacs.state)
. "$here/project_harness.sh"
stamp() { echo "     $(printf '%3d' $((SECONDS - started))) s  $*"; }

p="$work/vera/notes"
mkdir -p "$p"
printf 'plan for <A17>\nvera: write "s"\nend\n' >"$p/plan.txt"
printf 'my diary\n' >"$p/diary.txt"
todo='to do;touch INJECTED;(v2).txt'   # what a shell splits and runs, unless Vim quotes it (%:S)
printf 'todo: <T1>\nand <T2>\n' >"$p/$todo"

(cd "$work/vera" && as vera "$quire" share "$p/plan.txt" --listen 127.0.0.1:0 >"$work/share.out" 2>"$work/share.err") & daemon_pids+=($!)
wait_for 30 grep -q 'quire join qj1-' "$work/share.out" || fail "quire share printed no join line"
grep -q "Sharing the file $p/plan.txt by itself" "$work/share.out" || fail "quire share does not say it shares the file by itself"
wait_for 10 test -S "$(socket_of vera)" || fail "no editor socket in vera's runtime directory"
reader_line="$(cd "$work/vera" && as vera "$quire" invite --role read --once "$p/plan.txt" 2>"$work/invite.err")" || fail "quire invite failed"
grep -q 'as a reader' "$work/invite.err" || fail "quire invite does not say it makes a reader"
(cd "$work/rita" && as rita "$quire" join "$reader_line" >"$work/rita-join.out" 2>&1) & daemon_pids+=($!)
wait_for 30 cmp -s "$p/plan.txt" "$work/rita/plan.txt/plan.txt" || fail "the file never reached Rita's plan.txt folder"
[ "$(ls -A "$work/rita/plan.txt")" = plan.txt ] || fail "Rita's folder holds more than the file: $(ls -A "$work/rita/plan.txt")"
wait_for 10 test -S "$(socket_of rita)" || fail "no editor socket in rita's runtime directory"
emil_line="$(cd "$work/vera" && as vera "$quire" invite --role read --once "$p/plan.txt" 2>>"$work/invite.err")" || fail "quire invite for Emil failed"
(cd "$work/emil" && as emil "$quire" join "$emil_line" >"$work/emil-join.out" 2>&1) & daemon_pids+=($!)
wait_for 30 cmp -s "$p/plan.txt" "$work/emil/plan.txt/plan.txt" || fail "the file never reached Emil's plan.txt folder"
wait_for 10 test -S "$(socket_of emil)" || fail "no editor socket in emil's runtime directory"
stamp "quire share FILE, quire invite --role read --once FILE, quire join: Rita and Emil have plan.txt/plan.txt alone"

cat >"$work/vim-setup.vim" <<EOF
vim9script
runtime plugin/quire.vim
g:quire_command = ['$quire']
g:quire_log = '$work/vim.log'
g:quire_user = 'vera'
set noswapfile nomore hidden
edit $p/plan.txt
var plan = bufnr()
timer_start(100, (_) => {
    writefile(getbufline(plan, 1, '\$'), '$work/vim.tmp')
    rename('$work/vim.tmp', '$work/vim.txt')
  }, {repeat: -1})
EOF
cat >"$work/nvim-setup.lua" <<EOF
local quire = require('quire')
quire.config.command = { '$quire' }
quire.config.user = 'rita'
quire.config.log = '$work/nvim.log'
vim.o.hidden = true
vim.cmd('edit $work/rita/plan.txt/plan.txt')
local plan = vim.api.nvim_get_current_buf()
vim.fn.timer_start(100, function()
  vim.fn.writefile(vim.api.nvim_buf_get_lines(plan, 0, -1, false), '$work/nvim.tmp')
  vim.fn.rename('$work/nvim.tmp', '$work/nvim.txt')
  vim.fn.writefile({ 'modifiable=' .. tostring(vim.bo[plan].modifiable) .. ' sentinel=' .. tostring(vim.g.sentinel or 0) }, '$work/nvim.stmp')
  vim.fn.rename('$work/nvim.stmp', '$work/nvim.state')
end, { ['repeat'] = -1 })
EOF
cat >"$work/emacs-setup.el" <<EOF
(require 'quire)
(setq quire-command (list "$quire") quire-user-name "emil"
      make-backup-files nil create-lockfiles nil auto-save-default nil)
(find-file "$work/emil/plan.txt/plan.txt")
(defvar quire-test-plan (current-buffer))
(defvar quire-test-sentinel 0)
(run-with-timer 0.1 0.1 (lambda ()
  (let ((inhibit-message t) (coding-system-for-write 'utf-8-unix))
    (when (buffer-live-p quire-test-plan)
      (with-current-buffer quire-test-plan
        (write-region nil nil "$work/emacs.tmp" nil 'quiet)
        (rename-file "$work/emacs.tmp" "$work/emacs.txt" t)
        (write-region (format "read-only=%s sentinel=%d\n" buffer-read-only quire-test-sentinel) nil "$work/emacs.stmp" nil 'quiet)
        (rename-file "$work/emacs.stmp" "$work/emacs.state" t))))))
EOF
start_editors

who_in_plan() {
  local out
  out="$(probe "$(socket_of "$1")" who)" || return 1
  for person in vera rita emil; do grep -q "^$person .*plan.txt" <<<"$out" || return 1; done
}
joined() {
  keys "$vim" Escape j k; keys "$nvim" Escape j k; keys "$emacs" C-n C-p
  who_in_plan vera && who_in_plan rita && who_in_plan emil
}
wait_for 40 joined || fail "opening plan.txt did not join its document in the three editors"
state() { grep -q -- "$2" "$work/$1.state" 2>/dev/null; }
wait_for 10 state nvim 'modifiable=false' || fail "Rita's Neovim buffer is not read-only: $(cat "$work/nvim.state" 2>&1)"
wait_for 10 state emacs 'read-only=t' || fail "Emil's Emacs buffer is not read-only: $(cat "$work/emacs.state" 2>&1)"
stamp "Vim, Neovim and Emacs opened the file by path and joined its document; Rita's and Emil's buffers are read-only"

original="$(cat "$work/vim.txt")"
for attempt in 1 2 3; do
  keys "$nvim" Escape 2G i; keys "$nvim" -l "rita$attempt"; keys "$nvim" Escape
  keys "$nvim" d d
  keys "$emacs" M-\< C-n; keys "$emacs" -l "emil$attempt"; keys "$emacs" C-k
done
nvim_sentinel() { keys "$nvim" Escape; keys "$nvim" -l ":lua vim.g.sentinel = 1"; keys "$nvim" Enter; wait_for 3 state nvim 'sentinel=1'; }
emacs_sentinel() { keys "$emacs" M-:; keys "$emacs" -l "(setq quire-test-sentinel 1)"; keys "$emacs" Enter; wait_for 3 state emacs 'sentinel=1'; }
wait_for 30 nvim_sentinel || fail "Neovim never ran the last command: $(cat "$work/nvim.state")"
wait_for 30 emacs_sentinel || fail "Emacs never ran the last command: $(cat "$work/emacs.state")"
for f in nvim emacs vim; do [ "$(cat "$work/$f.txt")" = "$original" ] || fail "$f's plan.txt changed: $(tr '\n' '|' <"$work/$f.txt")"; done
grep -q 'rita\|emil' "$p/plan.txt" && fail "a reader's typing reached Vera's file"
stamp "Neovim and Emacs refused the readers' typing (3 tries each): no change anywhere"

keys "$vim" Escape 2G A; keys "$vim" -l ' <V1> g("v2")'; keys "$vim" Escape
wait_for 20 grep -qF '<V1> g("v2")' "$work/nvim.txt" || fail "Vera's typing did not reach Rita's read-only buffer: $(tr '\n' '|' <"$work/nvim.txt")"
wait_for 20 grep -qF '<V1> g("v2")' "$work/emacs.txt" || fail "Vera's typing did not reach Emil's read-only buffer: $(tr '\n' '|' <"$work/emacs.txt")"
[ "$(ls -A "$work/rita/plan.txt")" = plan.txt ] || fail "Rita's folder holds more than the file: $(ls -A "$work/rita/plan.txt")"
[ "$(ls -A "$work/emil/plan.txt")" = plan.txt ] || fail "Emil's folder holds more than the file: $(ls -A "$work/emil/plan.txt")"
stamp "Vera's typing reached Rita's and Emil's read-only buffers; Vera's diary.txt never left her folder"

# From inside Vim, as the READMEs say: `:!quire share --detach %:S` shares the file being edited
# by itself (the daemon Vim uses does it), prints its line and returns; `:e` joins it.
keys "$vim" Escape; keys "$vim" -l ":e ${p// /\\ }/${todo// /\\ }"; keys "$vim" Enter
keys "$vim" -l ":silent !$quire share --detach %:S >$work/detach.out 2>&1"; keys "$vim" Enter
wait_for 20 grep -q 'quire join qj1-' "$work/detach.out" || fail "quire share --detach printed no line: $(cat "$work/detach.out" 2>&1)"
[ -e "$p/INJECTED" ] && fail "the file's name ran as a shell command"
grep -qF "Sharing the file $p/$todo by itself" "$work/detach.out" || fail "quire share --detach does not name the file: $(cat "$work/detach.out")"
keys "$vim" C-l; keys "$vim" -l ":e"; keys "$vim" Enter
in_todo() { keys "$vim" j k; probe "$(socket_of vera)" who | grep -qF "(v2).txt"; }
wait_for 20 in_todo || fail "after :e, Vim did not join todo.txt's document: $(probe "$(socket_of vera)" who 2>&1)"
members="$(cd / && as vera "$quire" members "$p/$todo" 2>&1)" || fail "quire members todo.txt failed: $members"
grep -q 'vera .*owner' <<<"$members" || fail "todo.txt's project does not list Vera as its owner: $members"
stamp ":!quire share --detach %:S in Vim shared todo.txt by itself; :e joined it; quire members todo.txt lists its owner"
echo "ok   onefile: quire share FILE, a reader's once line, quire join, Vim, Neovim and Emacs on the file by path, the readers read-only, :!quire share --detach %:S in Vim"
echo "     $((SECONDS - started)) s in all"
