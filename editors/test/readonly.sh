#!/usr/bin/env bash
# Issue 22 in real editors (tmux, keystrokes): read-only means read-only in the editor too.
# Vera runs `quire share` and asks her daemon for an invitation as a reader (project/invite
# role read); Rita and Emil each `quire join` with it, in homes of their own. Vera (Vim), Rita
# (Neovim) and Emil (Emacs) open notes/plan.txt by path. Rita's and Emil's buffers are
# read-only: what they type changes nothing (not in their buffer, not at Vera's), each is told
# why once however often they try, while Vera's typing reaches both and both follow her into
# another file. Then Vera gives Rita write (project/role): Rita's buffer becomes writable and
# what she types reaches Vera.
# Usage: editors/test/readonly.sh [path/to/quire]   (needs tmux, vim, emacs, nvim)
# QUIRE_KEEP=DIR keeps the logs, homes and dumps there.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
quire="${1:-$root/.build/debug/quire}"
quire="$(cd "$(dirname "$quire")" && pwd)/$(basename "$quire")"
name=readonly people=(vera rita emil) window=ro
fail_files=(share.out share.err rita-join.out emil-join.out vim.log nvim.log nvim.state emacs.state)
. "$here/project_harness.sh"
stamp() { echo "     $(printf '%3d' $((SECONDS - started))) s  $*"; }

p="$work/vera/proj"
mkdir -p "$p/notes" "$p/src"
printf 'plan for <A17> and f(x)\nvera: write "s"\nend\n' >"$p/notes/plan.txt"
printf 'int main(void) {\n    return f(x);\n}\n' >"$p/src/main.c"

(cd "$work/vera" && as vera "$quire" share "$p" --listen 127.0.0.1:0 >"$work/share.out" 2>"$work/share.err") & daemon_pids+=($!)
wait_for 30 grep -q 'quire join qj1-' "$work/share.out" || fail "quire share printed no join line"
wait_for 10 test -S "$(socket_of vera)" || fail "no editor socket in vera's runtime directory"
# QUIRE_READONLY_BY=role: join with the line `quire share` printed (writers), then Vera makes
# Rita and Emil readers (project/role), instead of inviting them as readers.
if [ "${QUIRE_READONLY_BY:-invite}" = role ]; then
  reader_line="$(grep -o 'qj1-[a-z2-7]*' "$work/share.out" | head -1)"
else
  reader_line="$(probe "$(socket_of vera)" invite read 2>&1)" || fail "project/invite as a reader failed: $reader_line"
  reader_line="$(grep -o 'qj1-[a-z2-7]*' <<<"$reader_line" | head -1)"
  [ -n "$reader_line" ] || fail "project/invite gave no join line"
fi
(cd "$work/rita" && as rita "$quire" join "$reader_line" "$work/rita/proj" >"$work/rita-join.out" 2>&1) & daemon_pids+=($!)
(cd "$work/emil" && as emil "$quire" join "$reader_line" "$work/emil/proj" >"$work/emil-join.out" 2>&1) & daemon_pids+=($!)
wait_for 30 trees_identical || fail "the joined trees never became the shared one: $(trees_identical 2>&1 | head -5)"
for who in rita emil; do wait_for 10 test -S "$(socket_of $who)" || fail "no editor socket in $who's runtime directory"; done
stamp "quire share, $([ "${QUIRE_READONLY_BY:-invite}" = role ] && echo "its line" || echo "a reader's invitation"), two quire joins with it: three identical trees"

# The editors, each on notes/plan.txt by path. Every 100 ms each writes what its notes/plan.txt
# buffer holds ($work/<editor>.txt), its current buffer (.cur), where its window is (.where), and
# (the readers) whether the buffer may change and how often the client said why (.state).
cat >"$work/vim-setup.vim" <<EOF
vim9script
runtime plugin/quire.vim
g:quire_command = ['$quire']
g:quire_log = '$work/vim.log'
g:quire_user = 'vera'
set noswapfile nomore hidden
edit $work/vera/proj/notes/plan.txt
var plan = bufnr()
timer_start(100, (_) => {
    writefile(getbufline(plan, 1, '\$'), '$work/vim.tmp')
    rename('$work/vim.tmp', '$work/vim.txt')
    writefile(getline(1, '\$'), '$work/vim.ctmp')
    rename('$work/vim.ctmp', '$work/vim.cur')
    writefile([expand('%:p') .. ' ' .. line('.')], '$work/vim.where')
  }, {repeat: -1})
EOF
cat >"$work/nvim-setup.lua" <<EOF
local quire = require('quire')
quire.config.command = { '$quire' }
quire.config.user = 'rita'
quire.config.log = '$work/nvim.log'
vim.o.hidden = true
vim.o.laststatus = 2
vim.o.statusline = "%f %{luaeval('require(\"quire\").statusline()')}"
vim.cmd('edit $work/rita/proj/notes/plan.txt')
local plan = vim.api.nvim_get_current_buf()
vim.fn.timer_start(100, function()
  vim.fn.writefile(vim.api.nvim_buf_get_lines(plan, 0, -1, false), '$work/nvim.tmp')
  vim.fn.rename('$work/nvim.tmp', '$work/nvim.txt')
  vim.fn.writefile(vim.api.nvim_buf_get_lines(0, 0, -1, false), '$work/nvim.ctmp')
  vim.fn.rename('$work/nvim.ctmp', '$work/nvim.cur')
  vim.fn.writefile({ vim.fn.expand('%:p') .. ' ' .. vim.fn.line('.') }, '$work/nvim.where')
  local told = 0
  for _, line in ipairs(vim.fn.filereadable('$work/nvim.log') == 1 and vim.fn.readfile('$work/nvim.log') or {}) do
    if line:find('said: quire: you can read', 1, true) then told = told + 1 end
  end
  vim.fn.writefile({ 'modifiable=' .. tostring(vim.bo[plan].modifiable) .. ' current=' .. tostring(vim.bo.modifiable) .. ' told=' .. told
                     .. ' sentinel=' .. tostring(vim.g.sentinel or 0) }, '$work/nvim.stmp')
  vim.fn.rename('$work/nvim.stmp', '$work/nvim.state')
end, { ['repeat'] = -1 })
EOF
cat >"$work/emacs-setup.el" <<EOF
(require 'quire)
(setq quire-command (list "$quire") quire-user-name "emil"
      make-backup-files nil create-lockfiles nil auto-save-default nil)
(find-file "$work/emil/proj/notes/plan.txt")
(defvar quire-test-plan (current-buffer))
(defvar quire-test-sentinel 0)
(run-with-timer 0.1 0.1 (lambda ()
  (let ((inhibit-message t) (coding-system-for-write 'utf-8-unix))
    (when (buffer-live-p quire-test-plan)
      (with-current-buffer quire-test-plan
        (write-region nil nil "$work/emacs.tmp" nil 'quiet)
        (rename-file "$work/emacs.tmp" "$work/emacs.txt" t)
        (write-region (format "read-only=%s told=%d sentinel=%d\n" buffer-read-only
                              (with-current-buffer (messages-buffer)
                                (how-many "^Quire: you can read" (point-min) (point-max)))
                              quire-test-sentinel)
                      nil "$work/emacs.stmp" nil 'quiet)
        (rename-file "$work/emacs.stmp" "$work/emacs.state" t)))
    (with-current-buffer (window-buffer (selected-window))
      (write-region (format "%s %d\n" buffer-file-name (line-number-at-pos (window-point))) nil "$work/emacs.where" nil 'quiet)))))
EOF
start_editors

who_in_plan() {
  local out
  out="$(probe "$(socket_of "$1")" who)" || return 1
  for name in vera rita emil; do grep -q "^$name .*notes/plan.txt" <<<"$out" || return 1; done
}
joined() {
  keys "$vim" Escape j k; keys "$nvim" Escape j k; keys "$emacs" C-n C-p
  who_in_plan vera && who_in_plan rita && who_in_plan emil
}
wait_for 40 joined || fail "opening notes/plan.txt did not join its document in all three editors"
if [ "${QUIRE_READONLY_BY:-invite}" = role ]; then
  for who in rita emil; do
    out="$(probe "$(socket_of vera)" role "$(probe "$(socket_of $who)" fingerprint)" read 2>&1)" || fail "project/role $who read failed: $out"
  done
  stamp "project/role made Rita and Emil readers while their editors had the file open"
fi
state() { grep -q -- "$2" "$work/$1.state" 2>/dev/null; }
wait_for 10 state nvim 'modifiable=false' || fail "Rita's Neovim buffer is not read-only: $(cat "$work/nvim.state" 2>&1)"
wait_for 10 state emacs 'read-only=t' || fail "Emil's Emacs buffer is not read-only: $(cat "$work/emacs.state" 2>&1)"
stamp "Vim, Neovim and Emacs joined notes/plan.txt; the readers' buffers are read-only"

# The readers type, several times: nothing changes, and each is told why once.
original="$(cat "$work/vim.txt")"
# The first key typed: the editor refuses it, then the client says why in its message area.
keys "$nvim" Escape 2G i; keys "$emacs" M-\< C-n x
wait_for 10 eval "screen '$nvim' | grep -q 'you can read proj but not change it (role read)'" || fail "Neovim's message area does not say why"
wait_for 10 eval "screen '$emacs' | grep -q 'Quire: you can read proj but not change it (role read)'" || fail "Emacs's echo area does not say why"
for attempt in 1 2 3; do
  keys "$nvim" Escape 2G i; keys "$nvim" -l "rita$attempt"; keys "$nvim" Escape
  keys "$nvim" d d
  keys "$emacs" M-\< C-n; keys "$emacs" -l "emil$attempt"; keys "$emacs" C-k
done
# A last command after the attempts: once it ran, every attempt before it was handled. (An
# editor drops keys typed ahead of an error it beeps for, so it is typed again until it ran.)
nvim_sentinel() { keys "$nvim" Escape; keys "$nvim" -l ":lua vim.g.sentinel = 1"; keys "$nvim" Enter; wait_for 3 state nvim 'sentinel=1'; }
emacs_sentinel() { keys "$emacs" M-:; keys "$emacs" -l "(setq quire-test-sentinel 1)"; keys "$emacs" Enter; wait_for 3 state emacs 'sentinel=1'; }
wait_for 30 nvim_sentinel || fail "Neovim never ran the last command: $(cat "$work/nvim.state")"
wait_for 30 emacs_sentinel || fail "Emacs never ran the last command: $(cat "$work/emacs.state")"
state nvim 'told=1 ' || fail "Neovim did not say why exactly once: $(cat "$work/nvim.state")"
state emacs 'told=1 ' || fail "Emacs did not say why exactly once: $(cat "$work/emacs.state")"
wait_for 10 eval "screen '$nvim' | grep -q 'quire: read-only'" || fail "Neovim's status line does not say read-only"
wait_for 10 eval "screen '$emacs' | grep -q 'Quire\[read-only\]'" || fail "Emacs's mode line does not say read-only"
for f in nvim emacs vim; do [ "$(cat "$work/$f.txt")" = "$original" ] || fail "$f's notes/plan.txt changed: $(tr '\n' '|' <"$work/$f.txt")"; done
grep -q 'rita\|emil' "$work/vera/proj/notes/plan.txt" && fail "a reader's typing reached Vera's file"
stamp "Neovim and Emacs refused the readers' typing (3 tries each): no change anywhere, one message each"

# Vera types: both readers see it. Then they follow her into src/main.c.
keys "$vim" Escape 2G A; keys "$vim" -l ' <V1> g("v2")'; keys "$vim" Escape
has_tokens() { grep -qF '<V1> g("v2")' "$work/$1.txt"; }
wait_for 20 has_tokens nvim || fail "Vera's typing did not reach Rita's read-only buffer: $(tr '\n' '|' <"$work/nvim.txt")"
wait_for 20 has_tokens emacs || fail "Vera's typing did not reach Emil's read-only buffer: $(tr '\n' '|' <"$work/emacs.txt")"
keys "$nvim" -l ":QuireFollow vera"; keys "$nvim" Enter
keys "$emacs" M-x; keys "$emacs" -l "quire-follow"; keys "$emacs" Enter
wait_for 10 eval "tmux -L '$tmux_socket' capture-pane -p -t '$emacs' | grep -q 'Follow:'" || fail "Emacs never asked whom to follow"
keys "$emacs" -l "vera"; keys "$emacs" Enter
at() { grep -q "^$work/$2/proj/$3 $4\$" "$work/$1.where"; }
keys "$vim" -l ":e $work/vera/proj/src/main.c"; keys "$vim" Enter 2G
wait_for 20 at nvim rita src/main.c 2 || fail "Neovim did not follow Vera to src/main.c line 2: $(cat "$work/nvim.where")"
wait_for 20 at emacs emil src/main.c 2 || fail "Emacs did not follow Vera to src/main.c line 2: $(cat "$work/emacs.where")"
wait_for 10 state nvim 'current=false' || fail "Rita's src/main.c is not read-only: $(cat "$work/nvim.state")"
stamp "Vera's typing reached both readers; :QuireFollow and quire-follow took them after her to src/main.c"

# Vera gives Rita write: her buffers become writable and what she types reaches Vera.
rita_key="$(probe "$(socket_of rita)" fingerprint)"
out="$(probe "$(socket_of vera)" role "$rita_key" write 2>&1)" || fail "project/role rita write failed: $out"
wait_for 10 state nvim 'current=true' || fail "Rita's buffer did not become writable: $(cat "$work/nvim.state")"
keys "$nvim" Escape; keys "$nvim" -l ":QuireUnfollow"; keys "$nvim" Enter
keys "$nvim" 2G A; keys "$nvim" -l ' <R3>'; keys "$nvim" Escape
wait_for 20 grep -qF '<R3>' "$work/vim.cur" || fail "what Rita typed as a writer did not reach Vera: $(tr '\n' '|' <"$work/vim.cur")"
wait_for 10 state emacs 'read-only=t' || fail "Emil is still a reader: $(cat "$work/emacs.state")"
stamp "project/role rita write: Rita's buffer became writable and her <R3> reached Vera; Emil still reads"
echo "ok   readonly: a reader's invitation, two read-only editors (Neovim, Emacs) refused typing with one message each, followed the writer, and a role change made one a writer"
echo "     $((SECONDS - started)) s in all"
