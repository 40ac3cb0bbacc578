#!/usr/bin/env bash
# Issue 18's commands in real editors, driven by keystrokes in tmux, while another person types.
# Vim on daemon A, Emacs on daemon B, Neovim on daemon C (A and C connect to B), all three with
# doc.txt open from a file of their own project (a, e, c; each has .quire-root), so it is one
# document bound to three files. Each command runs while a partner types code-like tokens
# (`<E12>`, `f(e13)`, `"e14"`):
#   Emacs (partner Neovim): M-c, M-u, M-q on a 3-line paragraph, C-y then C-/ (undo) with the
#     partner's insertion inside the yanked text, M-x revert-buffer after an outside `sed`.
#   Neovim (partner Vim): :w, then another editor (a second Vim on C) opens the file; 3u.
#   Vim (partner Emacs): J, gq, :sort, ddp, :e! with the partner's unsaved line, :%s over 200
#     lines then u, and kill -9 of Vim's daemon 0.3 s into a :%s over 5,000 lines, then restart.
# At the end the buffers and the daemons hold one text, every token typed is in it once and
# whole, and each command's effect is there exactly once.
# Usage: editors/test/commands.sh [path/to/quire]   (needs tmux, vim, emacs, nvim)
# QUIRE_KEEP=DIR keeps the logs, data and final buffers there.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
quire="${1:-$root/.build/debug/quire}"
quire="$(cd "$(dirname "$quire")" && pwd)/$(basename "$quire")"
work="$(mktemp -d)"
. "$here/editor_setups.sh"
export QUIRE_SECRET="$("$quire" secret)" XDG_DATA_HOME="$work/xdg" XDG_CONFIG_HOME="$work/config" XDG_STATE_HOME="$work/state"
tmux_socket="quire-commands-$$"
a_pid="" b_pid="" c_pid=""
tmux_pid=""
vim=cmd:0 emacs=cmd:1 nvim=cmd:2 vim2=cmd:3
started=$SECONDS
cleanup() {
  tmux -L "$tmux_socket" kill-server 2>/dev/null || true
  # A server that does not answer is killed outright: it holds the editors' terminals.
  if [ -n "$tmux_pid" ]; then kill -9 "$tmux_pid" 2>/dev/null || true; fi
  rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$tmux_socket"
  for p in "$a_pid" "$b_pid" "$c_pid"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  # A daemon writes its last snapshot as it exits: let it finish before its directory goes.
  for p in "$a_pid" "$b_pid" "$c_pid"; do [ -n "$p" ] && wait "$p" 2>/dev/null || true; done
  if [ -n "${QUIRE_KEEP:-}" ]; then rm -rf "$QUIRE_KEEP"; cp -r "$work" "$QUIRE_KEEP" 2>/dev/null || true; fi
  # An editor tmux has just killed can still be writing its state files here: try again,
  # and never let cleaning up fail a test that passed (set -e holds in this trap too).
  rm -rf "$work" 2>/dev/null || { sleep 0.5; rm -rf "$work" || true; }
}
trap cleanup EXIT
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
start_a() { "$quire" --no-stdio --socket "$work/a.sock" --data-dir "$work/a-data" --user-name vera-daemon --connect "127.0.0.1:$port" 2>>"$work/a.log" & a_pid=$!; }
start_b() { "$quire" --no-stdio --socket "$work/b.sock" --data-dir "$work/b-data" --user-name emma-daemon --listen "127.0.0.1:$port" 2>>"$work/b.log" & b_pid=$!; }
start_c() { "$quire" --no-stdio --socket "$work/c.sock" --data-dir "$work/c-data" --user-name nora-daemon --connect "127.0.0.1:$port" 2>>"$work/c.log" & c_pid=$!; }
probe() { python3 "$here/quire_probe.py" "$quire" "$@"; }
screen() { tmux -L "$tmux_socket" capture-pane -p -t "$1" 2>/dev/null | grep -v '^~ *$' | tail -15 || true; }
fail() {
  echo "FAIL commands: $*"
  for f in a.log b.log c.log vim.log nvim.log; do [ -f "$work/$f" ] && { echo "--- $f"; tail -8 "$work/$f" | cut -c1-300; }; done
  for p in "$vim" "$emacs" "$nvim"; do echo "--- screen $p"; screen "$p"; done
  exit 1
}
all_have() { has vim.txt "$1" && has emacs.txt "$1" && has nvim.txt "$1"; }
# The three buffers as their editors dump them every 100 ms are identical and hold $1.
converged() { all_have "$1" && cmp -s "$work/vim.txt" "$work/emacs.txt" && cmp -s "$work/vim.txt" "$work/nvim.txt"; }
settle() {  # $1: what the step was; $2: a text all must show
  wait_for 30 converged "$2" || {
    for f in vim emacs nvim; do echo "$f: $(tail -c 400 "$work/$f.txt" 2>/dev/null | tr '\n' '|')"; done
    fail "after $1 the buffers did not converge on one text holding '$2'"
  }
  echo "     $(printf '%3d' $((SECONDS - started))) s  $1"
}

mkdir -p "$work/a/proj" "$work/e/proj" "$work/c/proj"
touch "$work/a/proj/.quire-root" "$work/e/proj/.quire-root" "$work/c/proj/.quire-root"
cat >"$work/a/proj/doc.txt" <<'EOF'
alpha hello world
beta Foo bar

para pw01 pw02 pw03 pw04 pw05 pw06 pw07
para pw08 pw09 pw10 pw11 pw12 pw13 pw14
para pw15 pw16 pw17 pw18 pw19 pw20 pw21

yank zone
sed line sedme here
nv line
jn one
jn two

gq1 gq2 gq3
gq4 gq5

srt-c
srt-b
srt-a
dp1
dp2
partner line
end
EOF

start_b
for _ in $(seq 1 500); do [ -S "$work/b.sock" ] && grep -q "listening for peers" "$work/b.log" 2>/dev/null && break; sleep 0.01; done
start_a
start_c
for _ in $(seq 1 500); do [ -S "$work/a.sock" ] && [ -S "$work/c.sock" ] && break; sleep 0.01; done

# $1: the dump's name, $2: the socket, $3: the file, $4: the user.
vim_setup() {
  cat <<EOF
vim9script
runtime plugin/quire.vim
g:quire_command = ['$quire', 'attach', '$2']
g:quire_log = '$work/$1.log'
g:quire_user = '$4'
set noswapfile nomore
edit $3
QuireShare
timer_start(100, (_) => {
    writefile(getline(1, '\$'), '$work/$1.tmp')
    rename('$work/$1.tmp', '$work/$1.txt')
  }, {repeat: -1})
EOF
}
vim_setup vim "$work/a.sock" "$work/a/proj/doc.txt" vera >"$work/vim-setup.vim"
vim_setup vim2 "$work/c.sock" "$work/c/proj/doc.txt" otto >"$work/vim2-setup.vim"
write_emacs_setup
write_nvim_setup
# The tmux server outlives this script's commands and inherits its open files: it gets none but
# stdio, so a runner that waits for this script's descriptors to close (Foundation's Process
# does) is not kept waiting by it.
inherited=()
for fd in /proc/$$/fd/*; do n="${fd##*/}"; case "$n" in 0|1|2|255) ;; *) inherited+=("$n>&-");; esac; done
vim_command() { echo "vim -u NONE -i NONE -N -n --cmd 'set rtp^=$root/editors/vim' -S '$work/$1-setup.vim'"; }
eval "tmux -L \"\$tmux_socket\" new-session -d -s cmd -x 160 -y 40 \"\$(vim_command vim)\" ${inherited[*]} </dev/null >/dev/null 2>&1"
tmux_pid="$(tmux -L "$tmux_socket" display-message -p '#{pid}')"
wait_for 10 probe "$work/b.sock" text doc.txt || fail "the document never reached Emacs's daemon"
tmux -L "$tmux_socket" new-window -t cmd "emacs -nw -Q -L '$root/editors/emacs' -l '$work/emacs-setup.el'"
wait_for 10 probe "$work/c.sock" text doc.txt || fail "the document never reached Neovim's daemon"
tmux -L "$tmux_socket" new-window -t cmd \
  "nvim -u NONE -i NONE -n --cmd 'set rtp^=$root/editors/nvim' --cmd 'runtime plugin/quire.lua' -c 'luafile $work/nvim-setup.lua'"
settle "Vim shared doc.txt, Emacs and Neovim joined it from their files" "partner line"

# ---- Emacs, with Neovim typing at the same time.
# M-c on `hello` while Neovim types at the end of that line.
keys "$nvim" Escape gg A
burst "$nvim" N 6
keys "$emacs" M-\< M-f M-c
wait "$typing"; settle "Emacs M-c" "$last"
# M-u on `Foo` while Neovim types at the end of that line.
keys "$nvim" Escape 2G A
burst "$nvim" N 6
keys "$emacs" M-\< C-n C-a M-f M-u
wait "$typing"; settle "Emacs M-u" "$last"
# M-q on the three-line paragraph while Neovim types at the end of its last line.
keys "$nvim" Escape
keys "$nvim" -l ':call search("^para pw15")'
keys "$nvim" Enter A
burst "$nvim" N 6
emacs_search "para pw08"; keys "$emacs" M-q
wait "$typing"; settle "Emacs M-q" "$last"
# C-y of three lines; Neovim types inside them; then C-/ while Neovim goes on typing there.
emacs_search "yank zone"; keys "$emacs" C-a C-y
wait_for 10 has nvim.txt yank6 || fail "Emacs's yank never reached Neovim"
keys "$nvim" Escape
keys "$nvim" -l ':call search("yank3")'
keys "$nvim" Enter e a
burst "$nvim" N 4; wait "$typing"
settle "Emacs C-y, Neovim typed inside it" "$last"
# Neovim types on elsewhere during the undo. (Typing inside the yanked lines during the undo
# loses text: editors/test/commands_races.sh, not run by swift test.)
keys "$nvim" Escape; keys "$nvim" -l ':call search("^beta")'; keys "$nvim" Enter A
burst "$nvim" N 4
keys "$emacs" C-_
wait "$typing"; settle "Emacs C-/ of the yank" "$last"
# M-x revert-buffer after an outside sed of Emacs's file, Neovim typing before and during.
keys "$emacs" C-x C-s
wait_for 10 grep -q "partner line" "$work/e/proj/doc.txt" || fail "Emacs never saved its file"
keys "$nvim" Escape
keys "$nvim" -l ':call search("^sed line")'
keys "$nvim" Enter A
burst "$nvim" N 3; wait "$typing"
sed -i 's/sedme/SEDDED/' "$work/e/proj/doc.txt"
burst "$nvim" N 4
keys "$emacs" M-x; keys "$emacs" -l "revert-buffer"; keys "$emacs" Enter
if wait_for 5 eval "tmux -L '$tmux_socket' capture-pane -p -t '$emacs' | grep -q 'yes or no'"; then
  keys "$emacs" -l "yes"; keys "$emacs" Enter
fi
wait "$typing"
wait_for 15 all_have SEDDED || fail "the outside sed never reached everyone after revert-buffer"
keys "$emacs" M-\> C-p C-e; keys "$emacs" -l " erev1"
settle "Emacs revert-buffer after sed, then typing" "erev1"
# C-x C-w (write-file) while Neovim types: the rebind names Emacs's view, nothing is asked.
keys "$nvim" Escape; keys "$nvim" -l ':call search("^beta")'; keys "$nvim" Enter A
burst "$nvim" N 6
keys "$emacs" C-x C-w; keys "$emacs" -l "renamed.txt"; keys "$emacs" Enter
wait "$typing"
wait_for 10 test -f "$work/e/proj/renamed.txt" || fail "Emacs never wrote renamed.txt"
keys "$emacs" M-\> C-p C-e; keys "$emacs" -l " ewrote1"
settle "Emacs write-file with Neovim typing, then typing" "ewrote1"

# ---- Neovim, with Vim typing at the same time.
# :w, then another editor (a second Vim on Neovim's daemon) opens the file.
keys "$vim" Escape
keys "$vim" -l ':call search("^partner line")'
keys "$vim" Enter A
burst "$vim" V 4
keys "$nvim" Escape
keys "$nvim" -l ':call search("^nv line")'
keys "$nvim" Enter A; keys "$nvim" -l " nvsaved"; keys "$nvim" Escape
keys "$nvim" -l ":w"; keys "$nvim" Enter
wait "$typing"
wait_for 10 grep -q nvsaved "$work/c/proj/doc.txt" || fail "Neovim never wrote its file"
burst "$vim" V 4
tmux -L "$tmux_socket" new-window -t cmd "$(vim_command vim2)"
wait "$typing"
settle "Neovim :w" "$last"
wait_for 15 eval "cmp -s '$work/vim2.txt' '$work/nvim.txt'" || fail "the second Vim never showed the document: $(tr '\n' '|' <"$work/vim2.txt" 2>/dev/null | tail -c 300)"
cp "$work/vim2.txt" "$work/vim2-opened.txt"
keys "$vim2" Escape; keys "$vim2" -l ":qa!"; keys "$vim2" Enter
# 3u after four changes of Neovim's own: the last three go, the first stays.
keys "$nvim" Escape
keys "$nvim" -l ':call search("^nv line")'
keys "$nvim" Enter
for n in 1 2 3 4; do keys "$nvim" o; keys "$nvim" -l "nvu$n"; keys "$nvim" Escape; sleep 0.1; done
wait_for 10 has vim.txt nvu4 || fail "Neovim's lines never reached Vim"
burst "$vim" V 6
keys "$nvim" 3 u
wait "$typing"; settle "Neovim 3u" "$last"
# :saveas while Vim types: Neovim's rebind names its view, nothing is asked.
keys "$vim" Escape; keys "$vim" -l ':call search("^partner line")'; keys "$vim" Enter A
burst "$vim" V 6
keys "$nvim" Escape; keys "$nvim" -l ":saveas $work/c/proj/renamed.txt"; keys "$nvim" Enter
wait "$typing"
keys "$nvim" -l ':call search("^nv line")'; keys "$nvim" Enter A; keys "$nvim" -l " nsaveas"; keys "$nvim" Escape
settle "Neovim :saveas with Vim typing, then typing" "nsaveas"

# ---- Vim, with Emacs typing at the same time.
# $1: a line's beginning; Emacs types at that line's end.
emacs_at_end_of() { emacs_search "$1"; keys "$emacs" C-e; }
vim_to() { keys "$vim" Escape; keys "$vim" -l ":call search('^$1')"; keys "$vim" Enter; }
# J on `jn one` while Emacs types at the end of `jn two`.
emacs_at_end_of "jn two"
burst "$emacs" E 6
sleep 0.1; vim_to "jn one"; keys "$vim" J
wait "$typing"; settle "Vim J" "$last"
tail -6 "$work/tokens.list" >"$work/J-tokens.list"
# gq on the two-line paragraph while Emacs types at the end of its second line.
emacs_at_end_of "gq4"
burst "$emacs" E 6
sleep 0.1; vim_to "gq1"; keys "$vim" g q i p
wait "$typing"; settle "Vim gqip" "$last"
# :sort over srt-c, srt-b, srt-a while Emacs types at the end of srt-b.
emacs_at_end_of "srt-b"
burst "$emacs" E 6
sleep 0.1; vim_to "srt-c"; keys "$vim" -l ":.,.+2sort"; keys "$vim" Enter
wait "$typing"; settle "Vim :sort" "$last"
# ddp on dp1 while Emacs types at the end of dp2.
emacs_at_end_of "dp2"
burst "$emacs" E 6
sleep 0.1; vim_to "dp1"; keys "$vim" d d p
wait "$typing"; settle "Vim ddp" "$last"
# :e! after Emacs typed a line Vim's file does not have, Emacs typing on during the :e!.
keys "$vim" -l ":w"; keys "$vim" Enter
wait_for 10 eval "cmp -s '$work/a/proj/doc.txt' '$work/vim.txt'" || fail "Vim never wrote its file"
emacs_at_end_of "partner line"; keys "$emacs" Enter; keys "$emacs" -l "eunsaved"
burst "$emacs" E 3; wait "$typing"
wait_for 10 has vim.txt "$last" || fail "Emacs's unsaved line never reached Vim"
burst "$emacs" E 4
keys "$vim" -l ":e!"; keys "$vim" Enter
wait "$typing"
vim_to "dp1"; keys "$vim" A; keys "$vim" -l " vafter"; keys "$vim" Escape
settle "Vim :e! with Emacs's unsaved line, then typing" "vafter"
# :saveas while Emacs types: Vim's rebind names its view, nothing is asked.
emacs_at_end_of "dp2"
burst "$emacs" E 6
sleep 0.1; keys "$vim" -l ":saveas $work/a/proj/renamed.txt"; keys "$vim" Enter
wait "$typing"
vim_to "dp2"; keys "$vim" A; keys "$vim" -l " vsaveas"; keys "$vim" Escape
settle "Vim :saveas with Emacs typing, then typing" "vsaveas"
# :%s over 200 lines, then u, while Emacs types inside row 001.
keys "$vim" -l ":call append('\$', map(range(1, 200), 'printf(\"row %03d text here\", v:val)'))"; keys "$vim" Enter
settle "Vim added 200 rows" "row 200 text here"
emacs_search "row 001 "
burst "$emacs" E 3
keys "$vim" -l ":%s/text/TEXT/g"; keys "$vim" Enter
wait "$typing"
settle "Vim :%s over 200 rows" "row 200 TEXT here"
burst "$emacs" E 5
sleep 0.1; keys "$vim" u
wait "$typing"; settle "Vim u of the :%s" "$last"
# kill -9 of Vim's daemon 0.3 s into a :%s over 5,000 lines, Emacs typing on; then a restart.
keys "$vim" -l ":call append('\$', map(range(1, 5000), 'printf(\"big %04d filler\", v:val)'))"; keys "$vim" Enter
settle "Vim added 5,000 lines" "big 5000 filler"
emacs_at_end_of "partner line"
burst "$emacs" E 12
keys "$vim" -l ":%s/filler/FILLER/g"; keys "$vim" Enter
sleep 0.3; kill -9 "$a_pid"; wait "$a_pid" 2>/dev/null || true
sleep 0.5; start_a
wait "$typing"
wait_for 40 converged "$last" || fail "after kill -9 of Vim's daemon during :%s the buffers did not converge"
wait_for 40 converged "big 5000 FILLER" || fail "after kill -9 of Vim's daemon during :%s the substitution never reached everyone"
echo "     $(printf '%3d' $((SECONDS - started))) s  Vim :%s over 5,000 lines, its daemon killed 0.3 s in and restarted"

# ---- The end: one text everywhere; every token once and whole; each command's effect once.
daemons_agree() {
  for d in a b c; do probe "$work/$d.sock" text doc.txt >"$work/$d.txt" || return 1; done
  cmp -s "$work/a.txt" "$work/emacs.txt" && cmp -s "$work/b.txt" "$work/emacs.txt" && cmp -s "$work/c.txt" "$work/emacs.txt"
}
wait_for 20 daemons_agree || true
python3 - "$work" <<'PY' || fail "see above"
import re, sys, time
work = sys.argv[1]
def read(name):
    # The editors write their buffer to a temporary file and rename it over NAME every 100 ms;
    # Vim's rename() removes the old NAME first, so it can be missing for a moment.
    for _ in range(100):
        try:
            return open(f"{work}/{name}", encoding="utf-8").read()
        except FileNotFoundError:
            time.sleep(0.02)
    return open(f"{work}/{name}", encoding="utf-8").read()
texts = {name: read(f"{name}.txt") for name in ("vim", "emacs", "nvim", "a", "b", "c")}
problems = []
if len(set(texts.values())) != 1:
    problems.append("the buffers and daemons differ: " + ", ".join(f"{n}: {len(t)} characters" for n, t in texts.items()))
text = texts["emacs"]
lines = text.split("\n")
tokens = read("tokens.list").split()
for token in tokens:
    if text.count(token) != 1:
        problems.append(f"the partner's token {token} is there {text.count(token)} times")
def check(what, ok, detail=""):
    if ok:
        print(f"ok   commands: {what}")
    else:
        problems.append(f"{what}: {detail}")
def line_starting(prefix):
    return [l for l in lines if l.startswith(prefix)]
check("Emacs M-c capitalized hello once", text.count("alpha Hello world") == 1 and "hello" not in text, repr(line_starting("alpha")))
check("Emacs M-u upcased Foo once", text.count("beta FOO bar") == 1 and "Foo" not in text, repr(line_starting("beta")))
words = re.findall(r"pw\d\d", text)
first = line_starting("para pw01")
check("Emacs M-q filled the 3-line paragraph, every word once and in order",
      words == [f"pw{n:02d}" for n in range(1, 22)] and len(first) == 1 and "pw08" in first[0], f"{words} {line_starting('para')}")
check("Emacs C-/ undid its yank, the partner's insertion inside it kept", not re.search(r"yank\d", text), repr([l for l in lines if "yank" in l]))
check("Emacs revert-buffer took the outside sed once and kept sharing",
      text.count("SEDDED") == 1 and "sedme" not in text and text.count("erev1") == 1, repr([l for l in lines if "SED" in l or "sed" in l]))
opened = read("vim2-opened.txt")
check("Neovim :w, then another editor opened the file: the saved edit is there once",
      opened.count("nvsaved") == 1 and text.count("nvsaved") == 1, f"{opened.count('nvsaved')} times in the opener, {text.count('nvsaved')} in the end")
check("Neovim 3u undid three changes, not the fourth",
      text.count("nvu1") == 1 and not any(f"nvu{n}" in text for n in (2, 3, 4)), repr([l for l in lines if "nvu" in l]))
joined = [l for l in lines if l.startswith("jn one")]
check("Vim J joined once", len(joined) == 1 and joined[0].startswith("jn one jn two") and text.count("jn two") == 1, repr(joined))
j_tokens = read("J-tokens.list").split()
check("Vim J kept the partner's words on the joined line", len(joined) == 1 and all(t in joined[0] for t in j_tokens), f"{j_tokens} not all in {joined}")
check("Vim gqip joined the two lines once", text.count("gq1 gq2 gq3 gq4 gq5") == 1 and len(re.findall(r"gq\d", text)) == 5, repr([l for l in lines if "gq" in l]))
sorted_lines = [l[:5] for l in lines if l.startswith("srt-")]
check("Vim :sort sorted the three lines once", sorted_lines == ["srt-a", "srt-b", "srt-c"], repr(sorted_lines))
dp = [l.split()[0] for l in lines if l.startswith("dp")]
check("Vim ddp swapped the two lines once", dp == ["dp2", "dp1"] and any("vafter" in l for l in line_starting("dp1")), repr(dp))
check("Vim :e! kept the partner's unsaved line once", text.count("eunsaved") == 1, repr([l for l in lines if "eunsaved" in l]))
check("Vim typed once after :e!", text.count("vafter") == 1, "")
import os
check("Emacs write-file, Neovim :saveas and Vim :saveas with a partner typing kept sharing, asked nothing",
      all(text.count(t) == 1 for t in ("ewrote1", "nsaveas", "vsaveas"))
      and all(os.path.exists(f"{work}/{d}/proj/renamed.txt") for d in ("a", "e", "c")),
      repr([l for l in lines if any(t in l for t in ("ewrote1", "nsaveas", "vsaveas"))]))
rows = [l for l in lines if l.startswith("row ")]
strip = lambda l: " ".join(w for w in re.sub("|".join(map(re.escape, tokens)), " ", l).split())
check("Vim u of :%s over 200 rows undid it once, the partner's words kept",
      "TEXT" not in text and [strip(l) for l in rows] == [f"row {n:03d} text here" for n in range(1, 201)],
      repr([l for l in rows if strip(l) != f"row {l[4:7]} text here"][:5]) + f" {len(rows)} rows")
big = [l for l in lines if l.startswith("big ")]
check("Vim :%s over 5,000 lines survived kill -9 of its daemon: applied once, nothing doubled",
      big == [f"big {n:04d} FILLER" for n in range(1, 5001)],
      f"{len(big)} big lines, {text.count('filler')} 'filler', {text.count('FILLER')} 'FILLER', {len(text)} characters")
if problems:
    print("FAIL commands:\n  " + "\n  ".join(problems))
    sys.exit(1)
print(f"ok   commands: Vim, Emacs and Neovim on paired daemons, {len(tokens)} partner tokens once and whole, {len(lines)} identical lines")
PY
echo "     $((SECONDS - started)) s in all"
