-- Headless test of a day's programming in Neovim against a real daemon, another editor typing
-- code-like tokens it has not seen at the same moment: 'eol' set by hand (:set noeol nofixeol,
-- :set eol), a plugin's nvim_buf_set_lines with strict_indexing false and indices past the end,
-- :undojoin, gJ over an indent, 4J, :retab!, :e! and :saveas with the other's edit in flight.
-- After each the buffer equals the daemon's text, every token is there once, and nothing was
-- resynced. Run by editors/nvim/test/run.sh.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/helpers.lua')
local quire = require('quire')
local check, wait_for, buffer_text, keys = H.check, H.wait_for, H.buffer_text, H.keys
local socket = vim.env.QUIRE_TEST_SOCKET

H.attach(quire, socket)
local otto = H.editor(socket, 'otto')
vim.o.hidden = false
vim.o.swapfile = false

local dir = vim.fn.fnamemodify(vim.env.QUIRE_TEST_RESULT, ':h') .. '/nworkflows'
vim.fn.mkdir(dir, 'p')
local rows = { 'row 01 <A17>', 'row 02 f(x)', '    row 03 "s"', 'row 04 <B2>', 'row 05 g(y, z)', 'b "t"', 'a <C3>', 'c' }
local row_tokens = { '<A17>', 'f(x)', '"s"', '<B2>', 'g(y, z)', '"t"', '<C3>' }

local function log_lines()
  return vim.fn.filereadable(vim.env.QUIRE_TEST_LOG) == 1 and vim.fn.readfile(vim.env.QUIRE_TEST_LOG) or {}
end

local cases = 0
-- Shares `lines` from a file of its own, runs `command` while otto types each {line, character,
-- text} of `typed` in the text it opened (in flight when `in_flight`, else after the command);
-- then the buffer and the daemon agree, each token is there once (or `counts[token]` times),
-- each of `expected` (Lua patterns) matches, and the client's log tells of no resync.
local function case(name, lines, command, typed, expected, counts, in_flight)
  counts = counts or {}
  cases = cases + 1
  local path = dir .. '/case-' .. cases .. '.txt'
  vim.fn.writefile(lines, path)
  vim.cmd('edit! ' .. vim.fn.fnameescape(path))
  vim.cmd('QuireShare')
  local uri = quire.shared_name()
  otto.ask('document/open', { uri = uri, text = '' })
  local function daemon_text() return (otto.ask('document/text', { uri = uri }) or {}).text end
  wait_for(function() return daemon_text() == buffer_text() end, name .. ': shared')
  local log_start = #log_lines()
  local function other_types()
    for _, t in ipairs(typed) do
      local position = { line = t[1], character = t[2] }
      local params = { uri = uri, epoch = 0, revision = 0, changes = { { range = { start = position, ['end'] = position }, text = t[3] } } }
      if in_flight then
        otto.tell('document/edit', params)
      else
        local reply = otto.request('document/edit', params)
        check(reply.result ~= nil, name .. ': otto\'s edit was refused: ' .. vim.inspect(reply))
      end
    end
  end
  if in_flight then other_types() end
  command()
  if not in_flight then other_types() end
  local last = vim.trim(typed[#typed][3])
  wait_for(function() return daemon_text() == buffer_text() and buffer_text():find(last, 1, true) ~= nil end,
    name .. ': the buffer and the daemon to agree (daemon: ' .. vim.inspect(daemon_text()) .. ')')
  local text = buffer_text()
  H.expect_tokens(name, text, row_tokens, lines, typed, counts, expected)
  for _, line in ipairs(vim.list_slice(log_lines(), log_start + 1)) do
    check(not line:find('resync'), name .. ': ' .. line)
  end
  otto.ask('document/close', { uri = uri })
  vim.bo.modified = false
  return path
end

-- 'eol' set by hand: the final newline goes, then comes back, and the file is written so.
local path = case(':set noeol nofixeol', { 'one <A17>', 'two f(x)' }, function()
  vim.cmd('setlocal noeol nofixeol')
  vim.cmd('write')
end, { { 0, 9, ' <P1>' } }, { '^one <A17> <P1>\ntwo f%(x%)$' })
check(vim.fn.readfile(path, 'b')[2] == 'two f(x)', ':set noeol nofixeol: the file ends in a break: ' .. vim.inspect(vim.fn.readfile(path, 'b')))
case(':set eol', { 'one <A17>', 'two f(x)' }, function()
  vim.cmd('setlocal noeol nofixeol')
  vim.cmd('write')
  vim.cmd('setlocal eol')
end, { { 1, 0, '<P1> ' } }, { '^one <A17>\n<P1> two f%(x%)\n$' })
-- A plugin's set_lines with strict_indexing false and indices past the end: appended.
case('set_lines past the end', rows, function()
  vim.api.nvim_buf_set_lines(0, 20, 30, false, { 'added <N1>', 'more "n"' })
end, { { 7, 1, ' <P1>' } }, { '\nc <P1>\nadded <N1>\nmore "n"\n$' }, { ['<N1>'] = 1 })
case('set_lines from past the end to -1', rows, function()
  vim.api.nvim_buf_set_lines(0, 6, 40, false, { 'tail <N2>' })
end, { { 4, 14, ' <P1>' } }, { '\nrow 05 g%(y, z%) <P1>\nb "t"\ntail <N2>\n$' }, { ['<C3>'] = 0, ['<N2>'] = 1 })
-- :undojoin: two changes one undo step; undone together, the other's word stays.
case(':undojoin', rows, function()
  keys('ggA one<Esc>', 't')
  vim.cmd('undojoin | call setline(2, getline(2) .. " two")')
  wait_for(function() return buffer_text():find('f%(x%) two') ~= nil end, 'the joined change')
  quire.send_cursor(0)   -- sends the change first, as a cursor move would
  otto.request('document/edit', { uri = quire.shared_name(), epoch = 0, revision = 0,
    changes = { { range = { start = { line = 3, character = 0 }, ['end'] = { line = 3, character = 0 } }, text = '<P2> ' } } })
  wait_for(function() return buffer_text():find('<P2>', 1, true) ~= nil end, 'otto\'s <P2>')
  keys('u')
  wait_for(function() return not buffer_text():find(' two', 1, true) end, 'the undo of both')
end, { { 0, 12, ' <P1>' } }, { '^row 01 <A17> <P1>\nrow 02 f%(x%)\n', '\n<P2> row 04' }, { [' one'] = 0, [' two'] = 0 })
case('gJ over an indent', rows, function() keys('2G3gJ') end, { { 2, 4, '<P1>' } }, { '\nrow 02 f%(x%)    <P1>row 03 "s"row 04 <B2>\n' })
case('4J', rows, function() keys('gg4J') end, { { 3, 11, ' <P1>' } }, { '^row 01 <A17> row 02 f%(x%) row 03 "s" row 04 <B2> <P1>\n' })
case(':retab!', { '\tif x {', '        y <A17>;', '\t}' }, function() vim.cmd('setlocal noet ts=4 sw=4 | retab! 4') end,
  { { 1, 8, '<P1>' } }, { '^\tif x {\n\t\t<P1>y <A17>;\n\t}\n$' })
case(':e! in flight', rows, function()
  keys('Gotyped <T1><Esc>')
  vim.cmd('edit!')
end, { { 1, 4, '<P1> ' }, { 0, 0, '<P2> ' } }, { '^<P2> row 01 <A17>\nrow <P1> 02 f%(x%)\n', '\nc\ntyped <T1>\n$' }, {}, true)
case(':saveas in flight', rows, function() vim.cmd('saveas! ' .. vim.fn.fnameescape(dir .. '/saved-as.txt')) end,
  { { 0, 0, '<P1> ' } }, { '^<P1> row 01' }, {}, true)

quire.stop()
H.finish()
