-- The daemon names a shared file (run by editors/nvim/test/run.sh): Neovim sends `document/open`
-- with `file` and no `uri`, and the document is named by the file's path from its project root
-- (the nearest directory above holding .git or .quire-root); another editor opening the same
-- file the same way joins the same document (a raw session, and a real batch Emacs with the Emacs
-- client where emacs is installed); a buffer with no file is still "buffer<n>".
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/helpers.lua')
local quire = require('quire')
local binary, socket = vim.env.QUIRE_BINARY, vim.env.QUIRE_TEST_SOCKET
local check, wait_for, editor, buffer_text = H.check, H.wait_for, H.editor, H.buffer_text

quire.config.command = { binary, 'attach', socket }
quire.config.user = 'nora'
quire.config.log = vim.env.QUIRE_TEST_LOG
vim.o.hidden = true

local work = vim.fn.fnamemodify(vim.env.QUIRE_TEST_RESULT, ':h') .. '/naming-nvim'
vim.fn.mkdir(work .. '/gitproject/.git', 'p')
vim.fn.mkdir(work .. '/gitproject/src', 'p')
vim.fn.writefile({ 'def a():', '    return 1' }, work .. '/gitproject/src/a.py')
vim.fn.mkdir(work .. '/rootproject/docs', 'p')
vim.fn.writefile({}, work .. '/rootproject/.quire-root')
vim.fn.writefile({ 'plan' }, work .. '/rootproject/docs/plan.txt')

local otto = editor(socket, 'otto')
local function daemon_text(uri) return (otto.ask('document/text', { uri = uri }) or {}).text end

-- Neovim shares the file: the document is named by its path from the root.
vim.cmd('edit ' .. vim.fn.fnameescape(work .. '/gitproject/src/a.py'))
vim.cmd('QuireShare')
check(quire.shared_name() == 'src/a.py', 'file in a .git project shared as ' .. vim.inspect(quire.shared_name()))

-- The other editor opens the same file by its path: it joins Neovim's document.
local opened = otto.ask('document/open', { file = work .. '/gitproject/src/a.py', text = 'def a():\n    return 1\n' }) or {}
check(opened.uri == 'src/a.py', 'the other editor\'s open: ' .. vim.inspect(opened))
check(opened.created == false, 'the other editor created a new document: ' .. vim.inspect(opened))
check(daemon_text('src/a.py') == 'def a():\n    return 1\n', 'the joined document holds ' .. vim.inspect(daemon_text('src/a.py')))
otto.ask('document/edit', { uri = 'src/a.py', epoch = opened.epoch, revision = 0, changes = {
  { range = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 0 } }, text = '# otto\n' } } })
wait_for(function() return vim.api.nvim_buf_get_lines(0, 0, 1, false)[1] == '# otto' end, 'the other editor\'s line in Neovim')
vim.api.nvim_buf_set_lines(0, -1, -1, false, { '# nvim' })
wait_for(function() return daemon_text('src/a.py') == '# otto\ndef a():\n    return 1\n# nvim\n' end, 'Neovim\'s line in the daemon')
check(buffer_text() == daemon_text('src/a.py'), 'buffer and daemon differ: ' .. vim.inspect(buffer_text()))

-- A real Emacs (the Emacs client, batch) opens another file of the project while Neovim shares
-- it: both name it src/d.py and see each other's lines. Skipped where emacs is not installed.
if vim.fn.executable('emacs') == 1 then
  local d = work .. '/gitproject/src/d.py'
  vim.fn.writefile({ 'd = 4' }, d)
  vim.cmd('edit ' .. vim.fn.fnameescape(d))
  vim.cmd('QuireShare')
  check(quire.shared_name() == 'src/d.py', 'src/d.py shared as ' .. vim.inspect(quire.shared_name()))
  local name_file, text_file, script = work .. '/emacs-name.txt', work .. '/emacs-text.txt', work .. '/emacs-join.el'
  local function lisp(text) return vim.fn.json_encode(text) end   -- a JSON string reads as an Emacs string here
  vim.fn.writefile({
    "(require 'quire)",
    '(setq quire-command (list ' .. lisp(binary) .. ' "attach" ' .. lisp(socket) .. ') quire-user-name "emma")',
    '(find-file ' .. lisp(d) .. ')',
    '(quire-share)',
    '(let ((name (plist-get quire--state :uri))) (with-temp-file ' .. lisp(name_file) .. ' (insert name)))',
    '(goto-char (point-min))',
    '(insert "# emacs\\n")',
    '(let ((deadline (+ (float-time) 15)))',
    '  (while (and (not (string-suffix-p "# nvim\\n" (buffer-string))) (< (float-time) deadline))',
    '    (accept-process-output nil 0.01)))',
    '(write-region (point-min) (point-max) ' .. lisp(text_file) .. ')',
    '(kill-emacs 0)' }, script)
  local emacs_dir = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h:h') .. '/emacs'
  local job = vim.fn.jobstart({ 'emacs', '-Q', '--batch', '-L', emacs_dir, '-l', script })
  wait_for(function() return vim.fn.filereadable(name_file) == 1 end, 'Emacs to share src/d.py', 20000)
  check(vim.fn.filereadable(name_file) == 1 and vim.fn.readfile(name_file)[1] == 'src/d.py',
    'Emacs shared the file as ' .. vim.inspect(vim.fn.filereadable(name_file) == 1 and vim.fn.readfile(name_file) or nil))
  wait_for(function() return buffer_text() == '# emacs\nd = 4\n' end, 'Emacs\'s line in Neovim')
  vim.api.nvim_buf_set_lines(0, -1, -1, false, { '# nvim' })
  -- Its whole text: the file can be there before Emacs has written into it.
  local function emacs_text() return vim.fn.filereadable(text_file) == 1 and table.concat(vim.fn.readfile(text_file), '\n') or nil end
  wait_for(function() return emacs_text() == '# emacs\nd = 4\n# nvim' end, 'Emacs to see Neovim\'s line', 20000)
  check(vim.fn.filereadable(text_file) == 1 and table.concat(vim.fn.readfile(text_file), '\n') == '# emacs\nd = 4\n# nvim',
    'Emacs ends with ' .. vim.inspect(vim.fn.filereadable(text_file) == 1 and vim.fn.readfile(text_file) or nil))
  check(buffer_text() == '# emacs\nd = 4\n# nvim\n', 'Neovim ends with ' .. vim.inspect(buffer_text()))
  vim.fn.jobstop(job)
end

-- A .quire-root marks a root too.
vim.cmd('edit ' .. vim.fn.fnameescape(work .. '/rootproject/docs/plan.txt'))
vim.cmd('QuireShare')
check(quire.shared_name() == 'docs/plan.txt', 'file in a .quire-root project shared as ' .. vim.inspect(quire.shared_name()))

-- No file: "buffer<n>"; a name given is used as it is.
vim.cmd('enew')
vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'no file' })
vim.cmd('QuireShare')
check(quire.shared_name() == 'buffer' .. vim.api.nvim_get_current_buf(), 'a buffer with no file shared as ' .. vim.inspect(quire.shared_name()))
vim.cmd('enew')
vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'named' })
vim.cmd('QuireShare chosen.txt')
check(quire.shared_name() == 'chosen.txt', 'a named share shared as ' .. vim.inspect(quire.shared_name()))

vim.fn.jobstop(otto.job)
quire.stop()
H.finish()
