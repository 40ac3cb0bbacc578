-- Headless test of the Neovim client's self-healing (run by editors/nvim/test/run.sh): a daemon
-- edit whose hash the buffer does not have (the buffer changed where nothing was recorded) leads,
-- once edits pause, to document/resync; the buffer then shows the daemon's text in a new epoch,
-- and typing goes on. A daemon edit whose hash matches leads to no resync.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/helpers.lua')
local quire = require('quire')
local check, wait_for, buffer_text = H.check, H.wait_for, H.buffer_text
local socket = vim.env.QUIRE_TEST_SOCKET

H.attach(quire, socket)

local function run()
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'alpha <A1>', 'beta f(x)' })
  vim.cmd('QuireShare hash.txt')
  local buf = vim.api.nvim_get_current_buf()
  local otto = H.editor(socket, 'otto')
  otto.ask('document/open', { uri = 'hash.txt', text = '' })
  local function daemon_text() return (otto.ask('document/text', { uri = 'hash.txt' }) or {}).text end
  local function agree(what) return wait_for(function() return daemon_text() == buffer_text(buf) end, what) end
  local function otto_inserts(line, character, text)
    otto.ask('document/edit', { uri = 'hash.txt', revision = otto.edits['hash.txt'] or 0, changes = {
      { range = { start = { line = line, character = character }, ['end'] = { line = line, character = character } }, text = text } } })
  end
  agree('the share')

  -- A daemon edit the buffer applies as the daemon made it: its hash matches, nothing is resynced.
  otto_inserts(0, 0, '"s" ')
  wait_for(function() return vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] == '"s" alpha <A1>' end, "otto's first word")
  agree("otto's first word")

  -- The buffer diverges: its first line changes while the client records nothing (as a change
  -- lost on the way would). The next daemon edit's hash is not the buffer's.
  local state = quire._state(buf)
  state.away = true
  vim.api.nvim_buf_set_lines(buf, 0, 1, false, { 'corrupt <X9>' })
  state.away = false
  otto_inserts(1, 9, ' <O2>')
  wait_for(function() return quire._epoch(buf) == 1 end, 'the resync after the hash mismatch')
  agree('the resync')
  check(vim.api.nvim_buf_get_lines(buf, 0, -1, false)[1] == '"s" alpha <A1>' and
    vim.api.nvim_buf_get_lines(buf, 0, -1, false)[2] == 'beta f(x) <O2>',
    'the buffer does not show the daemon text: ' .. vim.inspect(vim.api.nvim_buf_get_lines(buf, 0, -1, false)))
  check(quire._epoch(buf) == 1, 'more than one resync: epoch ' .. tostring(quire._epoch(buf)))

  -- Sharing goes on in the new epoch, both ways.
  H.keys('GA <T3><Esc>', 't')
  agree('typing after the resync')
  otto_inserts(0, 0, '<O4> ')
  wait_for(function() return vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] == '<O4> "s" alpha <A1>' end, "otto's word after the resync")
  agree("otto's word after the resync")
  check(quire._epoch(buf) == 1, 'a resync after matching edits: epoch ' .. tostring(quire._epoch(buf)))
  vim.fn.jobstop(otto.job)
end

local ok, failure = pcall(run)
check(ok, 'error: ' .. tostring(failure))
quire.stop()
H.finish()
