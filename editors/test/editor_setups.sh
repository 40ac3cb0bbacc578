# Shared by commands.sh and commands_races.sh (sourced; $quire and $work set): the set-up
# files of the Emacs and the Neovim that share the project's doc.txt, each writing what its
# buffer shows to $work/<editor>.txt every 100 ms for the checks.

# Emacs as emma, attached to the daemon on b.sock, with a three-line yank in its kill ring.
write_emacs_setup() {
  cat >"$work/emacs-setup.el" <<EOF
(require 'quire)
(setq quire-command (list "$quire" "attach" "$work/b.sock") quire-user-name "emma"
      make-backup-files nil create-lockfiles nil auto-save-default nil)
(find-file "$work/e/proj/doc.txt")
(quire-share (quire-document-name buffer-file-name))
(kill-new "yank1 yank2\nyank3 yank4\nyank5 yank6\n")
(run-with-timer 0.1 0.1 (lambda ()
  (when-let ((buffer (get-file-buffer "$work/e/proj/doc.txt")))
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
