-- Headless test of :QuireStop followed by :QuireShare in the same Neovim (run by
-- editors/nvim/test/run.sh): the stopped daemon job ending afterwards does not take the new
-- connection down (which left its job running and reconnected through another): the buffer
-- shared again stays shared on the same connection, typing reaches the daemon and another
-- editor's edit is applied.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/helpers.lua')
local quire = require('quire')
local check, wait_for, buffer_text = H.check, H.wait_for, H.buffer_text
local socket = vim.env.QUIRE_TEST_SOCKET

H.attach(quire, socket)

local function jobs()
  local found = {}
  for _, chan in ipairs(vim.api.nvim_list_chans()) do
    if chan.stream == 'job' then found[chan.id] = true end
  end
  return found
end

-- The client log is the whole run's: only what this test logged counts.
local logged_before = vim.fn.filereadable(vim.env.QUIRE_TEST_LOG) == 1 and #vim.fn.readfile(vim.env.QUIRE_TEST_LOG) or 0
local function log_has(text)
  for _, line in ipairs(vim.list_slice(vim.fn.readfile(vim.env.QUIRE_TEST_LOG), logged_before + 1)) do
    if line:find(text, 1, true) then return true end
  end
  return false
end

local function run()
  vim.o.hidden = true
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'first <A1>' })
  vim.cmd('QuireShare stop-first.txt')
  check(quire.statusline() == '[quire]', 'the first share: ' .. quire.statusline())
  local stopped = vim.tbl_keys(jobs())
  check(#stopped == 1, 'expected one daemon job: ' .. vim.inspect(stopped))
  vim.cmd('QuireStop')

  vim.cmd('enew')
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'again <B2> f(x)' })
  vim.cmd('QuireShare stop-again.txt')
  local buf = vim.api.nvim_get_current_buf()
  local current = jobs()
  -- jobwait returns once the job ended and its on_exit ran.
  wait_for(function() return vim.fn.jobwait(stopped, 0)[1] ~= -1 end, 'the stopped daemon job to end')
  check(quire.statusline() == '[quire]', 'status line once the stopped job ended: ' .. quire.statusline())
  local otto = H.editor(socket, 'otto')
  otto.ask('document/open', { uri = 'stop-again.txt', text = '' })
  local function daemon_text() return (otto.ask('document/text', { uri = 'stop-again.txt' }) or {}).text end
  H.keys('A typed <C3><Esc>', 't')
  wait_for(function() return daemon_text() == 'again <B2> f(x) typed <C3>\n' end, 'typing after sharing again to reach the daemon')
  otto.ask('document/edit', { uri = 'stop-again.txt', revision = otto.edits['stop-again.txt'] or 0, changes = {
    { range = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 0 } }, text = '<O4> ' } } })
  wait_for(function() return buffer_text(buf) == '<O4> again <B2> f(x) typed <C3>\n' end, "otto's edit after sharing again")
  check(quire.statusline() == '[quire]', 'status line after sharing again: ' .. quire.statusline())
  check(not log_has('after a daemon restart'), 'sharing again went through a reconnection')
  for id in pairs(current) do
    check(vim.fn.jobwait({ id }, 0)[1] == -1, 'the daemon job of the second share ended: ' .. id)
  end
  vim.fn.jobstop(otto.job)
end

local ok, failure = pcall(run)
check(ok, 'error: ' .. tostring(failure))
quire.stop()
H.finish()
