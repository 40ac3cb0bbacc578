#!/usr/bin/env bash
# Issue 21 end to end in real editors (tmux, keystrokes), three people in three homes:
# Vera runs `quire share` on a small project (files in folders, code-like text) and opens
# notes/plan.txt by path in Vim; Nora and Emma each run `quire join <line>`, then open the same
# file by path in Neovim and Emacs: no Quire command, opening the file joins its document. All
# three type at once into it (distinct code-like tokens `<V3>`, `f(n4)`, `"e5"`), each saves
# (:w, C-x C-s). Then Nora :QuireJump's to Vera's cursor in another file, and Nora
# (:QuireFollow) and Emma (quire-follow) follow her into a third, where Vera types and saves.
# At the end every typed token is in every buffer and every copy on disk exactly once, and the
# three project trees are byte-identical.
# Usage: editors/test/project.sh [path/to/quire]   (needs tmux, vim, emacs, nvim)
# QUIRE_KEEP=DIR keeps the logs, homes and dumps there.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
quire="${1:-$root/.build/debug/quire}"
quire="$(cd "$(dirname "$quire")" && pwd)/$(basename "$quire")"
name=project people=(vera nora emma) window=proj
fail_files=(share.out nora-join.out emma-join.out share.err vim.log nvim.log)
. "$here/project_harness.sh"

# The project: a few files in folders, code-like text.
p="$work/vera/proj"
mkdir -p "$p/src/lib" "$p/notes" "$p/docs"
cat >"$p/src/main.c" <<'EOF'
#include "lib/util.h"
int main(void) {
    return f(x) + <A17>;
}
EOF
cat >"$p/src/lib/util.h" <<'EOF'
int f(int x);   /* "s" */
EOF
cat >"$p/docs/guide.md" <<'EOF'
# Guide
Call `f(x)` with "s".
The end.
EOF
cat >"$p/notes/plan.txt" <<'EOF'
plan for <A17> and f(x)
vera: write "s"
-
nora: check g(y)
-
emma: ship <B2>
-
end
EOF

# Vera shares it: the daemon runs in the foreground of `quire share`, which prints the line.
(cd "$work/vera" && as vera "$quire" share "$p" --listen 127.0.0.1:0 >"$work/share.out" 2>"$work/share.err") & daemon_pids+=($!)
wait_for 30 grep -q 'quire join qj1-' "$work/share.out" || fail "quire share printed no join line"
line="$(grep -o 'qj1-[a-z2-7]*' "$work/share.out" | head -1)"
# Nora and Emma join it: each runs `quire join <line> DIR` in a home of their own.
(cd "$work/nora" && as nora "$quire" join "$line" "$work/nora/proj" >"$work/nora-join.out" 2>&1) & daemon_pids+=($!)
(cd "$work/emma" && as emma "$quire" join "$line" "$work/emma/proj" >"$work/emma-join.out" 2>&1) & daemon_pids+=($!)
wait_for 30 trees_identical || fail "the joined trees never became the shared one: $(trees_identical 2>&1 | head -5)"
for who in vera nora emma; do wait_for 10 test -S "$(socket_of $who)" || fail "no editor socket in $who's runtime directory"; done
echo "     $(printf '%3d' $((SECONDS - started))) s  quire share, two quire joins: three identical trees"

# The editors, each in its person's home, each started on the file by path; each writes what
# its notes/plan.txt buffer holds to $work/<editor>.txt, and where its window is (file, line)
# to $work/<editor>.where, every 100 ms.
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
    writefile([expand('%:p') .. ' ' .. line('.')], '$work/vim.where')
  }, {repeat: -1})
EOF
cat >"$work/nvim-setup.lua" <<EOF
local quire = require('quire')
quire.config.command = { '$quire' }
quire.config.user = 'nora'
quire.config.log = '$work/nvim.log'
vim.o.hidden = true
vim.cmd('edit $work/nora/proj/notes/plan.txt')
local plan = vim.api.nvim_get_current_buf()
vim.fn.timer_start(100, function()
  vim.fn.writefile(vim.api.nvim_buf_get_lines(plan, 0, -1, false), '$work/nvim.tmp')
  vim.fn.rename('$work/nvim.tmp', '$work/nvim.txt')
  vim.fn.writefile({ vim.fn.expand('%:p') .. ' ' .. vim.fn.line('.') }, '$work/nvim.where')
end, { ['repeat'] = -1 })
EOF
cat >"$work/emacs-setup.el" <<EOF
(require 'quire)
(setq quire-command (list "$quire") quire-user-name "emma"
      make-backup-files nil create-lockfiles nil auto-save-default nil)
(find-file "$work/emma/proj/notes/plan.txt")
(defvar quire-test-plan (current-buffer))
(run-with-timer 0.1 0.1 (lambda ()
  (let ((inhibit-message t) (coding-system-for-write 'utf-8-unix))
    (when (buffer-live-p quire-test-plan)
      (with-current-buffer quire-test-plan
        (write-region nil nil "$work/emacs.tmp" nil 'quiet)
        (rename-file "$work/emacs.tmp" "$work/emacs.txt" t)))
    (with-current-buffer (window-buffer (selected-window))
      (write-region (format "%s %d\n" buffer-file-name (line-number-at-pos (window-point))) nil "$work/emacs.where" nil 'quiet)))))
EOF
start_editors

# Opening the file joined its document: each daemon knows all three cursors in it (a cursor is
# sent once the buffer is shared; a move sends it again).
who_in_plan() {  # $1: whose daemon; succeeds when it knows vera, nora and emma in notes/plan.txt
  local out
  out="$(probe "$(socket_of "$1")" who)" || return 1
  for name in vera nora emma; do grep -q "^$name .*notes/plan.txt" <<<"$out" || return 1; done
}
joined() {
  keys "$vim" Escape j k; keys "$nvim" Escape j k; keys "$emacs" C-n C-p
  who_in_plan vera && who_in_plan nora && who_in_plan emma
}
wait_for 40 joined || fail "opening notes/plan.txt did not join its document in all three editors; the daemons know: $(for w in vera nora emma; do echo "$w's: $(probe "$(socket_of $w)" who 2>&1 | tr '\n' ';')"; done)"
echo "     $(printf '%3d' $((SECONDS - started))) s  Vim, Neovim and Emacs opened notes/plan.txt by path and joined its document"

# All three type at once, each at the end of a line of their own.
keys "$vim" Escape 2G A
keys "$nvim" Escape 4G A
keys "$emacs" M-\< C-n C-n C-n C-n C-n C-e
burst "$vim" V 8; vim_typing=$typing
burst "$nvim" N 8; nvim_typing=$typing
burst "$emacs" E 8; emacs_typing=$typing
wait "$vim_typing" "$nvim_typing" "$emacs_typing"
keys "$vim" Escape; keys "$nvim" Escape
all_tokens() {  # each file named holds every token typed so far
  for f in "$@"; do
    [ -f "$f" ] || return 1
    while read -r token; do grep -qF -- "$token" "$f" || return 1; done <"$work/tokens.list"
  done
}
converged() { all_tokens "$work/vim.txt" && cmp -s "$work/vim.txt" "$work/nvim.txt" && cmp -s "$work/vim.txt" "$work/emacs.txt"; }
wait_for 30 converged || {
  for f in vim nvim emacs; do echo "$f: $(tr '\n' '|' <"$work/$f.txt" 2>/dev/null)"; done
  fail "the three buffers did not converge on one text holding every token"
}
echo "     $(printf '%3d' $((SECONDS - started))) s  three people typed into notes/plan.txt at once: $(wc -l <"$work/tokens.list") tokens in every buffer"

# Each saves.
keys "$vim" -l ":w"; keys "$vim" Enter
keys "$nvim" -l ":w"; keys "$nvim" Enter
keys "$emacs" C-x C-s
plans=("$work/vera/proj/notes/plan.txt" "$work/nora/proj/notes/plan.txt" "$work/emma/proj/notes/plan.txt")
saved() { all_tokens "${plans[@]}" && cmp -s "${plans[0]}" "${plans[1]}" && cmp -s "${plans[0]}" "${plans[2]}"; }
wait_for 20 saved || fail "after :w, :w and C-x C-s the three notes/plan.txt differ or lack a token"
echo "     $(printf '%3d' $((SECONDS - started))) s  :w, :w, C-x C-s: the three files on disk are one text"

# Vera goes to another file, by path; Nora jumps to her there.
at() { grep -q "^$work/$2/proj/$3 $4\$" "$work/$1.where"; }   # $1 editor, $2 home, $3 file, $4 line
keys "$vim" -l ":e $work/vera/proj/src/main.c"; keys "$vim" Enter 3G
wait_for 10 at vim vera src/main.c 3 || fail "Vim did not open src/main.c: $(cat "$work/vim.where")"
jumped() {
  keys "$nvim" Escape; keys "$nvim" -l ":QuireJump vera"; keys "$nvim" Enter
  wait_for 3 at nvim nora src/main.c 3
}
# Vera's cursor reaches Nora's daemon a moment after Vim moved it; the jump goes where it is.
wait_for 20 jumped || fail "Neovim's :QuireJump vera did not reach src/main.c line 3: $(cat "$work/nvim.where")"
echo "     $(printf '%3d' $((SECONDS - started))) s  Neovim :QuireJump vera opened src/main.c at her line"

# Nora and Emma follow her; she opens a third file and types there.
keys "$nvim" -l ":QuireFollow vera"; keys "$nvim" Enter
keys "$emacs" M-x; keys "$emacs" -l "quire-follow"; keys "$emacs" Enter
wait_for 10 eval "tmux -L '$tmux_socket' capture-pane -p -t '$emacs' | grep -q 'Follow:'" || fail "Emacs never asked whom to follow"
keys "$emacs" -l "vera"; keys "$emacs" Enter
wait_for 10 at emacs emma src/main.c 3 || fail "Emacs's quire-follow vera did not go to src/main.c line 3: $(cat "$work/emacs.where")"
keys "$vim" -l ":e $work/vera/proj/docs/guide.md"; keys "$vim" Enter 2G
wait_for 20 at nvim nora docs/guide.md 2 || fail "Neovim did not follow Vera to docs/guide.md line 2: $(cat "$work/nvim.where")"
wait_for 20 at emacs emma docs/guide.md 2 || fail "Emacs did not follow Vera to docs/guide.md line 2: $(cat "$work/emacs.where")"
echo "     $(printf '%3d' $((SECONDS - started))) s  Neovim :QuireFollow and Emacs quire-follow took both to docs/guide.md after Vera"
keys "$vim" A; keys "$vim" -l ' <V99> g("v100")'; keys "$vim" Escape
printf '%s\n' '<V99>' 'g("v100")' >"$work/guide.list"
keys "$vim" -l ":w"; keys "$vim" Enter
# Vera's words reach Nora's and Emma's buffers a moment after she typed them, and a save before
# that writes the file without them (the daemon never writes under an open buffer). So, as a
# person would, they save (again) until the three trees agree. (Emacs: C-x C-s on the followed
# buffer; `C-x s !` would type the `!` into it when nothing needed saving yet.)
saved_until_identical() {
  trees_identical && return 0
  keys "$nvim" -l ":wa"; keys "$nvim" Enter
  keys "$emacs" C-x C-s
  sleep 0.5
  return 1
}

# The end: every token once in every buffer and every copy on disk; three identical trees.
wait_for 30 saved_until_identical || fail "the three project trees differ: $(trees_identical 2>&1 | head -8)"
python3 - "$work" <<'PY' || fail "see above"
import sys
work = sys.argv[1]
plan = open(f"{work}/tokens.list", encoding="utf-8").read().split()
guide = open(f"{work}/guide.list", encoding="utf-8").read().split()
tokens = plan + guide
copies = {f"the {editor} buffer of notes/plan.txt": ([f"{work}/{editor}.txt"], plan) for editor in ("vim", "nvim", "emacs")}
for who in ("vera", "nora", "emma"):
    copies[f"{who}'s notes/plan.txt and docs/guide.md on disk"] = ([f"{work}/{who}/proj/notes/plan.txt", f"{work}/{who}/proj/docs/guide.md"], tokens)
problems = []
for what, (paths, expected) in copies.items():
    text = "".join(open(p, encoding="utf-8").read() for p in paths)
    for token in expected:
        if text.count(token) != 1:
            problems.append(f"{token} is {text.count(token)} times in {what}")
if problems:
    print("FAIL project:\n  " + "\n  ".join(problems))
    sys.exit(1)
print(f"ok   project: quire share, two quire joins, Vim, Neovim and Emacs joined by opening, {len(tokens)} tokens once in every buffer and copy, jump and follow, three identical trees")
PY
echo "     $((SECONDS - started)) s in all"
