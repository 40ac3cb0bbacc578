# Sourced by the project tests in real editors (project.sh, readonly.sh): three people in three
# homes, a tmux server, the daemons they start, and what a failure shows.
# Before sourcing, the script sets: `name` (its name in messages and in the tmux socket),
# `people` (the three homes' names, the sharer first), `window` (the tmux session name),
# `fail_files` (the files under $work a failure shows); and `here`, `quire`.
# It sets: `work`, `tmux_socket`, `vim`/`nvim`/`emacs` (the three panes), `started`,
# `daemon_pids` (append the pid of each `quire share` / `quire join` started), and the
# functions `as`, `start_editors`, `socket_of`, `probe`, `screen`, `fail`, `trees_identical`.
work="$(mktemp -d)"
work="$(cd "$work" && pwd -P)"
. "$here/editor_setups.sh"
unset QUIRE_SECRET
tmux_socket="quire-$name-$$"
tmux_pid=""
daemon_pids=()
vim=$window:0 nvim=$window:1 emacs=$window:2
started=$SECONDS
cleanup() {
  tmux -L "$tmux_socket" kill-server 2>/dev/null || true
  if [ -n "$tmux_pid" ]; then kill -9 "$tmux_pid" 2>/dev/null || true; fi
  rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$tmux_socket"
  # Ctrl-C stops sharing and following; the daemons write their last snapshots as they exit.
  # (A job started with & has SIGINT ignored, which it inherits: TERM once they are slow.)
  local pids=() deadline=$((SECONDS + 10))
  for p in "${daemon_pids[@]}"; do [ -n "$p" ] && pids+=("$p"); done
  for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done
  alive() { local q; for q in "${pids[@]}"; do kill -0 "$q" 2>/dev/null && return 0; done; return 1; }
  while [ $SECONDS -lt $deadline ] && alive; do sleep 0.1; done
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ -n "${QUIRE_KEEP:-}" ]; then rm -rf "$QUIRE_KEEP"; cp -r "$work" "$QUIRE_KEEP" 2>/dev/null || true; fi
  # An editor tmux has just killed can still be writing its state files here: try again,
  # and never let cleaning up fail a test that passed (set -e holds in this trap too).
  rm -rf "$work" 2>/dev/null || { sleep 0.5; rm -rf "$work" || true; }
}
trap cleanup EXIT

# Each person has a home of their own: data directory, runtime directory (where the daemon's
# editor socket is found), configuration.
for who in "${people[@]}"; do mkdir -p "$work/$who/run" "$work/$who/.local/share"; chmod 700 "$work/$who/run"; done
# The env prefix of a tmux command run in $1's home.
in_home() {
  local h="$work/$1"
  echo "env HOME='$h' XDG_DATA_HOME='$h/.local/share' XDG_RUNTIME_DIR='$h/run' XDG_CONFIG_HOME='$h/.config' XDG_STATE_HOME='$h/.local/state' XDG_CACHE_HOME='$h/.cache'"
}

# Starts the tmux session `window`: Vim, Neovim and Emacs, as people[0], [1] and [2] in their
# homes, each with its set-up file from $work (vim-setup.vim, nvim-setup.lua, emacs-setup.el).
# The tmux server inherits none of this script's descriptors but the standard ones.
start_editors() {
  local inherited=() fd n vim_command
  for fd in /proc/$$/fd/*; do n="${fd##*/}"; case "$n" in 0|1|2|255) ;; *) inherited+=("$n>&-");; esac; done
  vim_command="$(in_home "${people[0]}") vim -u NONE -i NONE -N -n --cmd 'set rtp^=$root/editors/vim' -S '$work/vim-setup.vim'"
  eval "tmux -L \"\$tmux_socket\" new-session -d -s \"\$window\" -x 160 -y 40 \"\$vim_command\" ${inherited[*]} </dev/null >/dev/null 2>&1"
  tmux_pid="$(tmux -L "$tmux_socket" display-message -p '#{pid}')"
  tmux -L "$tmux_socket" new-window -t "$window" \
    "$(in_home "${people[1]}") nvim -u NONE -i NONE -n --cmd 'set rtp^=$root/editors/nvim' --cmd 'runtime plugin/quire.lua' -c 'luafile $work/nvim-setup.lua'"
  tmux -L "$tmux_socket" new-window -t "$window" "$(in_home "${people[2]}") emacs -nw -Q -L '$root/editors/emacs' -l '$work/emacs-setup.el'"
}

as() {  # $1: whose home; the rest: the command, which replaces the (sub)shell
  local h="$work/$1"; shift
  exec env HOME="$h" XDG_DATA_HOME="$h/.local/share" XDG_RUNTIME_DIR="$h/run" XDG_CONFIG_HOME="$h/.config" \
    XDG_STATE_HOME="$h/.local/state" XDG_CACHE_HOME="$h/.cache" "$@"
}
socket_of() { ls "$work/$1/run/quire/"editors-*.sock 2>/dev/null | head -1; }
probe() { python3 "$here/quire_probe.py" "$quire" "$@"; }
screen() { tmux -L "$tmux_socket" capture-pane -p -t "$1" 2>/dev/null | grep -v '^~ *$' | tail -12 || true; }
fail() {
  echo "FAIL $name: $*"
  for f in "${fail_files[@]}"; do
    [ -f "$work/$f" ] && { echo "--- $f"; tail -12 "$work/$f" | cut -c1-300; }
  done
  for p in "$vim" "$nvim" "$emacs"; do echo "--- screen $p"; screen "$p"; done
  exit 1
}
trees_identical() {
  diff -r "$work/${people[0]}/proj" "$work/${people[1]}/proj" && diff -r "$work/${people[0]}/proj" "$work/${people[2]}/proj"
}
