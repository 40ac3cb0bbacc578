# Shared by commands.sh and commands_races.sh (sourced; $quire and $work set, $tmux_socket and
# the pane variables before the functions run): typing in tmux panes, and the set-up files of
# the Emacs and the Neovim that share the project's doc.txt, each writing what its buffer shows
# to $work/<editor>.txt every 100 ms for the checks.

wait_for() {  # $1: seconds, $2...: a command that succeeds when the condition holds
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do [ $SECONDS -lt $deadline ] || return 1; sleep 0.1; done
}
keys() { tmux -L "$tmux_socket" send-keys -t "$1" "${@:2}"; }
# Types each of $2... into pane $1, one keystroke burst each, as a quick typist.
type_tokens() { local pane=$1; shift; for token in "$@"; do keys "$pane" -l "$token"; sleep 0.05; done; }
# The partner: $1 pane, $2 letter, $3 how many tokens; types them (each after a space) in the
# background (pid in $typing) and records them for the final check ($last is the last one).
next=0
burst() {
  local pane=$1 upper=$2 lower list=() token
  lower="$(tr 'A-Z' 'a-z' <<<"$2")"
  for _ in $(seq 1 "$3"); do
    next=$((next + 1))
    case $((next % 3)) in 0) token="<$upper$next>" ;; 1) token="f($lower$next)" ;; *) token="\"$lower$next\"" ;; esac
    list+=(" $token"); echo "$token" >>"$work/tokens.list"; last="$token"
  done
  type_tokens "$pane" "${list[@]}" & typing=$!
}
# Emacs: point after the first match of $1 (isearch from the top).
emacs_search() { keys "$emacs" M-\< C-s; keys "$emacs" -l "$1"; keys "$emacs" Enter; }
has() { [ -f "$work/$1" ] && grep -qF -- "$2" "$work/$1"; }

# Emacs as emma, attached to the daemon on b.sock, with a three-line yank in its kill ring.
write_emacs_setup() {
  cat >"$work/emacs-setup.el" <<EOF
(require 'quire)
(setq quire-command (list "$quire" "attach" "$work/b.sock") quire-user-name "emma"
      make-backup-files nil create-lockfiles nil auto-save-default nil)
(find-file "$work/e/proj/doc.txt")
(quire-share)   ; the daemon names the file from its project root
(kill-new "yank1 yank2\nyank3 yank4\nyank5 yank6\n")
;; The buffer itself, not the one visiting doc.txt: write-file gives it another file.
(defvar quire-test-dumped (current-buffer))
(run-with-timer 0.1 0.1 (lambda ()
  (when-let ((buffer (and (buffer-live-p quire-test-dumped) quire-test-dumped)))
    (with-current-buffer buffer
      (let ((inhibit-message t) (coding-system-for-write 'utf-8-unix))
        (write-region nil nil "$work/emacs.tmp" nil 'quiet)
        (rename-file "$work/emacs.tmp" "$work/emacs.txt" t))))))
EOF
}

# Neovim as nora, attached to the daemon on c.sock.
write_nvim_setup() {
  cat >"$work/nvim-setup.lua" <<EOF
local quire = require('quire')
quire.config.command = { '$quire', 'attach', '$work/c.sock' }
quire.config.user = 'nora'
quire.config.log = '$work/nvim.log'
vim.cmd('edit $work/c/proj/doc.txt')
vim.cmd('QuireShare')
local buf = vim.api.nvim_get_current_buf()
vim.fn.timer_start(100, function()
  vim.fn.writefile(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '$work/nvim.tmp')
  vim.fn.rename('$work/nvim.tmp', '$work/nvim.txt')
end, { ['repeat'] = -1 })
EOF
}
