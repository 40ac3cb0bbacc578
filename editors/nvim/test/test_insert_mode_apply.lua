-- Headless test: daemon edits that delete across a line break while Neovim is in insert mode
-- with the cursor in the middle of a line (an Emacs undo of a yank while Neovim types inside
-- it; see editors/test/commands_races.sh). In Neovim 0.7.2 nvim_buf_set_text deleting from after
-- the insert-mode cursor across a line break filled the cursor line with bytes nobody typed.
-- Each step: Neovim types, the other editor deletes, Neovim types again, Esc; the buffer must
-- equal the daemon's text and hold every typed token whole.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/helpers.lua')
local quire = require('quire')
local check, wait_for, editor, buffer_text = H.check, H.wait_for, H.editor, H.buffer_text

quire.config.command = { vim.env.QUIRE_BINARY, 'attach', vim.env.QUIRE_TEST_SOCKET }
quire.config.user = 'nora'
quire.config.log = vim.env.QUIRE_TEST_LOG

local esc = vim.api.nvim_replace_termcodes('<Esc>', true, true, true)
local emma
local function daemon_text() return (emma.ask('document/text', { uri = 'insert.txt' }) or {}).text end

-- The test runs as a coroutine that sleeps on timers, so that Neovim's main loop takes the
-- typed keys (vim.wait does not) and stays in insert mode between them.
local test = coroutine.running
local function sleep(ms)
  local co = test()
  vim.defer_fn(function() coroutine.resume(co) end, ms)
  coroutine.yield()
end

-- In insert mode at (line, column), types `before`; then the other editor sends `change` (as
-- a daemon message arrives while one types) and Neovim types `after`, and leaves insert mode.
local function race(line, column, before, change, after, what, before_deleted)
  vim.api.nvim_win_set_cursor(0, { line + 1, column })
  vim.api.nvim_feedkeys('i' .. before:sub(1, -2), 'n', false)
  sleep(100)
  check(vim.api.nvim_get_mode().mode == 'i', what .. ': not in insert mode')
  wait_for(function() return daemon_text() == buffer_text() end, what .. ': the typing before to reach the daemon')
  -- The last character is typed with nothing reading other lines after it (as when typing
  -- goes on): the cursor line is still being edited when the daemon edit arrives.
  vim.api.nvim_feedkeys(before:sub(-1), 'n', false)
  sleep(100)
  local revision = quire._state(0).daemon
  emma.tell('document/edit', { uri = 'insert.txt', revision = emma.edits['insert.txt'] or 0, changes = { change } })
  sleep(100)
  check(quire._state(0).daemon > revision, what .. ': the daemon edit was not applied')
  vim.api.nvim_feedkeys(after .. esc, 'n', false)
  sleep(100)
  wait_for(function() return daemon_text() == buffer_text() end, what .. ': the buffer to equal the daemon text')
  local text = buffer_text()
  for _, token in ipairs(before_deleted and { after } or { before, after }) do
    check(H.count(text, token) == 1, what .. ': ' .. token .. ' is not there once, whole: ' .. vim.inspect(text))
  end
  check(vim.fn.strchars(text) == #text, what .. ': bytes nobody typed: ' .. vim.inspect(text))
  return text
end

local function main()
vim.cmd('enew')
vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'top line', 'aaaa bbbb cccc yank4', 'yank5 yank6', 'yank zone', 'end' })
vim.cmd('QuireShare insert.txt')
emma = editor(vim.env.QUIRE_TEST_SOCKET, 'emma')
emma.ask('document/open', { uri = 'insert.txt', text = '' })
wait_for(function() return daemon_text() == buffer_text() end, 'the shared text')

-- Typing after "aaaa"; the other editor deletes " yank4\nyank5 yank6\n"-like text after the
-- cursor: from after "cccc" on the cursor line to "yank6 " of the next line. The delete range
-- is in the daemon's text, which already holds " <A17>" (typed before the edit).
local text = race(1, 4, ' <A17>', { range = { start = { line = 1, character = 20 }, ['end'] = { line = 2, character = 5 } }, text = '' },
  ' f(x)', 'a deletion from after the cursor across a line break')
check(text == 'top line\naaaa <A17> f(x) bbbb cccc yank6\nyank zone\nend\n', 'after the first deletion: ' .. vim.inspect(text))

-- A deletion of a multi-line region holding the cursor line (from the line above into the
-- line below), while typing in the middle of it: what was typed before goes with the region.
vim.api.nvim_buf_set_lines(0, 1, 2, false, { 'aaaa bbbb cccc yank4', 'yank5 yank6 yank7' })
wait_for(function() return daemon_text() == buffer_text() end, 'the new lines to reach the daemon')
text = race(2, 5, '<B18>', { range = { start = { line = 1, character = 4 }, ['end'] = { line = 3, character = 4 } }, text = '' },
  ' g(y)', 'a deletion of a region holding the cursor line', true)
check(text == 'top line\naaaa g(y) zone\nend\n', 'after the second deletion: ' .. vim.inspect(text))

-- A replacement across a line break that inserts lines after the cursor.
text = race(0, 3, '"q9"', { range = { start = { line = 0, character = 10 }, ['end'] = { line = 1, character = 2 } }, text = 'X\nY\nZ' },
  ' h(z)', 'a multi-line replacement after the cursor')

-- An invalid byte never raises: the cursor message is skipped, the edit is not sent.
local ok, failure = pcall(function()
  vim.api.nvim_buf_set_lines(0, -2, -1, false, { 'bad \200 byte' })
  quire.send_cursor(vim.api.nvim_get_current_buf())
end)
check(ok, 'a line that is not UTF-8 raised: ' .. tostring(failure))
vim.api.nvim_buf_set_lines(0, -2, -1, false, { 'fine again' })
quire.send_cursor(vim.api.nvim_get_current_buf())
wait_for(function() return daemon_text() == buffer_text() end, 'the repaired line to reach the daemon')

vim.fn.jobstop(emma.job)
quire.stop()
H.finish()
end

local co = coroutine.create(function()
  local ok, failure = pcall(main)
  if not ok then H.check(false, 'error: ' .. tostring(failure)); H.finish() end
end)
vim.defer_fn(function() coroutine.resume(co) end, 0)
