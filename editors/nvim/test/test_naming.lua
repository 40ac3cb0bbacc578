-- The daemon names a shared file (run by editors/nvim/test/run.sh): Neovim sends `document/open`
-- with `file` and no `uri`, and the document is named by the file's path from its project root
-- (the nearest directory above holding .git or .quire-root); another editor opening the same
-- file the same way joins the same document; a buffer with no file is still "buffer<n>".
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
