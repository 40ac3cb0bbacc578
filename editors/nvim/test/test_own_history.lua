-- Headless test: Neovim's own undo commands in a shared buffer never take back what another
-- person typed (protocol/client-contract.md, section 4). U, g- and g+ (counts too) go to the
-- daemon's undo and redo of your own edits, as u and CTRL-R do; :undo, :undo N, :undo 0, :redo,
-- :earlier and :later (counts, seconds, file writes), a plugin's normal! u and an undo file read
-- when the file is opened reach only Neovim's own history, which holds nothing another typed:
-- only your edits since their last one. A daemon edit that comes in Insert mode leaves nothing
-- behind once the insert ends. After each command the buffer equals the daemon's text and every
-- token the other editor typed is there once. Run by editors/nvim/test/run.sh.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/helpers.lua')
local quire = require('quire')
local check, wait_for, buffer_text, keys = H.check, H.wait_for, H.buffer_text, H.keys
local socket = vim.env.QUIRE_TEST_SOCKET

H.attach(quire, socket)
local otto = H.editor(socket, 'otto')
vim.o.hidden = false
vim.o.swapfile = false

local dir = vim.fn.fnamemodify(vim.env.QUIRE_TEST_RESULT, ':h') .. '/nown-history'
vim.fn.mkdir(dir, 'p')
local rows = { 'row 01 <A17>', 'row 02 f(x)', 'row 03 "s"' }

local function daemon_text() return (otto.ask('document/text', { uri = quire.shared_name() }) or {}).text end
local function agree(what)
  return wait_for(function() return daemon_text() == buffer_text() end, what .. ' (daemon: ' .. vim.inspect(daemon_text()) .. ')')
end

-- The other editor types `text` at (line, character) of the text it opened (it applies nothing
-- of Neovim's, so its positions stay those of the rows), and Neovim shows it.
local function other_types(line, character, text)
  local position = { line = line, character = character }
  local reply = otto.request('document/edit', { uri = quire.shared_name(), epoch = 0, revision = 0,
    changes = { { range = { start = position, ['end'] = position }, text = text } } })
  check(reply.result ~= nil, 'the other\'s edit was refused: ' .. vim.inspect(reply))
  wait_for(function() return buffer_text():find(vim.trim(text), 1, true) ~= nil end, 'the other\'s ' .. vim.trim(text))
end

-- Keys typed (mappings apply), each command its own undo block; what they changed sent.
local function type(typed)
  keys(typed, 't')
  quire.send_cursor(vim.api.nvim_get_current_buf())
  agree('the daemon to have ' .. typed)
end

local function share(path)
  vim.cmd('edit! ' .. vim.fn.fnameescape(path))
  vim.cmd('QuireShare')
  otto.ask('document/open', { uri = quire.shared_name(), text = '' })
  agree('the share of ' .. path)
end

local cases = 0
-- Shares the rows from a file of their own; you append " mine1" to row 1, the other types <P1>
-- at its start, you append " mine2" to row 3, and, when `other_last`, the other types f(p) at
-- the start of row 3 (so Neovim's U, which puts back the last line changed, would take it). Then `command` runs, and the buffer must equal the daemon's text and be
-- `expected`, <P1> (and f(p)) there once.
local function case(name, command, expected, other_last)
  if other_last == nil then other_last = true end
  cases = cases + 1
  local path = dir .. '/nown-' .. cases .. '.txt'
  vim.fn.writefile(rows, path)
  share(path)
  type('ggA mine1<Esc>')
  other_types(0, 0, '<P1> ')
  type('GA mine2<Esc>')
  if other_last then other_types(2, 0, 'f(p) ') end
  local ok, failure = pcall(command)
  check(ok, name .. ': ' .. tostring(failure))
  quire.send_cursor(vim.api.nvim_get_current_buf())
  wait_for(function() return daemon_text() == buffer_text() and buffer_text() == expected end,
    name .. ': the buffer and the daemon to agree on ' .. vim.inspect(expected) .. ' (daemon: ' .. vim.inspect(daemon_text()) .. ')')
  local text = buffer_text()
  for _, token in ipairs(other_last and { '<P1>', 'f(p)' } or { '<P1>' }) do
    check(H.count(text, token) == 1, name .. ': ' .. token .. ' is there ' .. H.count(text, token) .. ' times: ' .. vim.inspect(text))
  end
  check(text == expected, name .. ': ' .. vim.inspect(text) .. ', not ' .. vim.inspect(expected))
  otto.ask('document/close', { uri = quire.shared_name() })
  vim.bo.modified = false
end

local mine2_undone = '<P1> row 01 <A17> mine1\nrow 02 f(x)\nf(p) row 03 "s"\n'
local nothing_undone = '<P1> row 01 <A17> mine1\nrow 02 f(x)\nf(p) row 03 "s" mine2\n'
local both_undone = '<P1> row 01 <A17>\nrow 02 f(x)\nf(p) row 03 "s"\n'
local mine2_gone = '<P1> row 01 <A17> mine1\nrow 02 f(x)\nrow 03 "s"\n'

local function run()
  -- The keys: the daemon's undo and redo of your own edits.
  case('U', function() keys('U') end, mine2_undone)
  case('g-', function() keys('g-') end, mine2_undone)
  case('2g-', function() keys('2g-') end, both_undone)
  case('g- g+', function()
    keys('g-')
    wait_for(function() return not buffer_text():find('mine2', 1, true) end, 'g- to take back mine2')
    keys('g+')
  end, nothing_undone)
  case(':normal u (a mapping applies)', function() vim.cmd('normal u') end, mine2_undone)
  for _, key in ipairs({ 'U', 'g-', 'g+' }) do
    check(vim.fn.maparg(key, 'n'):find('quire') ~= nil, key .. ' is not mapped in a shared buffer: ' .. vim.fn.maparg(key, 'n'))
  end

  -- Neovim's own history: the other typed last, so it holds nothing.
  case(':undo', function() vim.cmd('silent! undo') end, nothing_undone)
  case(':undo 0', function() vim.cmd('silent! undo 0') end, nothing_undone)
  case(':undo N (before the other\'s edits)', function() vim.cmd('silent! undo 1') end, nothing_undone)
  case(':earlier 10', function() vim.cmd('silent! earlier 10') end, nothing_undone)
  case(':earlier 1h', function() vim.cmd('silent! earlier 1h') end, nothing_undone)
  case('normal! u (a plugin)', function() vim.cmd('silent! normal! u') end, nothing_undone)
  case('normal! 3u', function() vim.cmd('silent! normal! 3u') end, nothing_undone)
  case(':undo 0 then :later 10 and :redo', function() vim.cmd('silent! undo 0 | silent! later 10 | silent! redo') end, nothing_undone)
  -- You typed last: your edits since the other's reach the daemon as your edits (not others').
  case(':undo 0 after your edit', function() vim.cmd('silent! undo 0') end, mine2_gone, false)
  case(':earlier 10s after your edit', function() vim.cmd('silent! earlier 10s') end, mine2_gone, false)
  case(':earlier 1f after a write', function()
    vim.cmd('silent write')
    other_types(2, 0, 'f(p) ')   -- the other types after the write
    vim.cmd('silent! earlier 1f')
  end, nothing_undone, false)

  -- An undo file read with the file: its history is from before the share.
  local undo_path = dir .. '/nown-undofile.txt'
  vim.fn.writefile(rows, undo_path)
  vim.o.undofile, vim.o.undodir = true, dir
  vim.cmd('edit! ' .. vim.fn.fnameescape(undo_path))
  keys('ggA old1<Esc>', 't')
  keys('ggA old2<Esc>', 't')
  vim.cmd('silent write')
  vim.cmd('bwipeout!')
  vim.cmd('edit! ' .. vim.fn.fnameescape(undo_path))
  check(vim.fn.undotree().seq_last >= 2, 'the undo file was not read: ' .. vim.inspect(vim.fn.undotree()))
  vim.cmd('QuireShare')
  otto.ask('document/open', { uri = quire.shared_name(), text = '' })
  other_types(0, 0, '<P1> ')
  vim.cmd('silent! undo 0')
  quire.send_cursor(vim.api.nvim_get_current_buf())
  agree(':undo 0 with an undo file')
  check(buffer_text():find('^<P1> row 01 <A17> old1 old2\n') ~= nil, ':undo 0 with an undo file: ' .. vim.inspect(buffer_text()))
  vim.o.undofile = false
  otto.ask('document/close', { uri = quire.shared_name() })

  -- A daemon edit in Insert mode (F2: the other types, and its edit comes in while Neovim is
  -- still inserting): once the insert ends, Neovim's history does not hold it.
  share(dir .. '/nown-insert.txt')
  local applied = false
  function _G.quire_test_other_types_mid_insert()
    otto.request('document/edit', { uri = quire.shared_name(), epoch = 0, revision = 0,
      changes = { { range = { start = { line = 1, character = 0 }, ['end'] = { line = 1, character = 0 } }, text = 'f(p) ' } } })
    wait_for(function() return buffer_text():find('f(p)', 1, true) ~= nil end, 'the other\'s f(p) in Insert mode')
    applied = vim.api.nvim_get_mode().mode == 'i'
  end
  vim.api.nvim_buf_set_keymap(0, 'i', '<F2>', '<Cmd>lua quire_test_other_types_mid_insert()<CR>', {})
  keys('ggA <I1><F2> <I2><Esc>')
  check(applied, 'Insert mode: the other\'s edit did not come in while inserting: ' .. vim.inspect(buffer_text()))
  quire.send_cursor(vim.api.nvim_get_current_buf())
  agree('Insert mode')
  vim.cmd('silent! undo 0')
  vim.cmd('silent! normal! u')
  quire.send_cursor(vim.api.nvim_get_current_buf())
  agree('Insert mode, then :undo 0')
  check(H.count(buffer_text(), 'f(p)') == 1, 'Insert mode, then :undo 0: f(p) is gone: ' .. vim.inspect(buffer_text()))
  -- The insert is still one step of the daemon's undo.
  keys('u')
  wait_for(function() return not buffer_text():find('<I', 1, true) end, 'u to take back the whole insert')
  wait_for(function() return daemon_text() == buffer_text() and H.count(buffer_text(), 'f(p)') == 1 end, 'u of the insert: f(p) kept')
  otto.ask('document/close', { uri = quire.shared_name() })
  vim.bo.modified = false

  -- The insert left by CTRL-O (its command runs with Neovim's history dropped) and by CTRL-C
  -- (which has no InsertLeave).
  for _, case in ipairs({ { 'CTRL-O', 'ggA <I1><F2><C-O>:silent! undo 0<CR> <I2><Esc>' }, { 'CTRL-C', 'ggA <I1><F2><C-C>' } }) do
    local how = case[1]
    local path = dir .. '/nown-' .. how .. '.txt'
    vim.fn.writefile(rows, path)
    share(path)
    vim.api.nvim_buf_set_keymap(0, 'i', '<F2>', '<Cmd>lua quire_test_other_types_mid_insert()<CR>', {})
    applied = false
    keys(case[2])
    check(applied, how .. ': the other\'s edit did not come in while inserting: ' .. vim.inspect(buffer_text()))
    vim.cmd('silent! undo 0')
    vim.cmd('silent! normal! u')
    quire.send_cursor(vim.api.nvim_get_current_buf())
    agree(how .. ', then :undo 0')
    check(H.count(buffer_text(), 'f(p)') == 1, how .. ', then :undo 0: f(p) is gone: ' .. vim.inspect(buffer_text()))
    check(H.count(buffer_text(), '<I1>') == 1, how .. ': <I1> is gone: ' .. vim.inspect(buffer_text()))
    otto.ask('document/close', { uri = quire.shared_name() })
    vim.bo.modified = false
  end

  quire.stop()
  for _, key in ipairs({ 'U', 'g-', 'g+' }) do
    check(vim.fn.maparg(key, 'n') == '', ':QuireStop left ' .. key .. ' mapped: ' .. vim.fn.maparg(key, 'n'))
  end
end

local ok, failure = pcall(run)
check(ok, 'error: ' .. tostring(failure))
vim.fn.jobstop(otto.job)
H.finish()
