-- Who is here, jump and follow (quire/who), against a partner editor on the same daemon (otto):
-- :QuireWho lists him with his file and line, :QuireJump goes to his cursor (opening his file by
-- path), :QuireFollow moves this window as his cursor moves, to another line and to another file,
-- and stops when this Neovim moves. Run by editors/nvim/test/run.sh.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/helpers.lua')
local quire = require('quire')
local check, wait_for = H.check, H.wait_for
local socket = vim.env.QUIRE_TEST_SOCKET

H.attach(quire, socket)

local function at()
  local pos = vim.api.nvim_win_get_cursor(0)
  return vim.fn.fnamemodify(vim.api.nvim_buf_get_name(0), ':t') .. ':' .. pos[1] .. ':' .. pos[2]
end

local function run()
  local dir = vim.fn.resolve(vim.fn.fnamemodify(vim.fn.tempname(), ':p')) .. '-who'
  vim.fn.mkdir(dir .. '/.git', 'p')   -- the project root: files are named from here
  vim.fn.writefile({ 'a one', 'a two', 'a three', 'a four' }, dir .. '/a.txt')
  vim.fn.writefile({ 'b one', 'b two', 'b three' }, dir .. '/b.txt')
  vim.fn.writefile({ 'c one', 'c two', 'c three', 'c four', 'c five' }, dir .. '/c.txt')
  vim.cmd('cd ' .. vim.fn.fnameescape(dir))
  vim.o.hidden = true
  vim.cmd('edit a.txt')
  vim.cmd('QuireShare')
  check(quire.shared_name() == 'a.txt', 'a.txt shared as ' .. tostring(quire.shared_name()))
  vim.api.nvim_win_set_cursor(0, { 2, 2 })
  quire.send_cursor(vim.api.nvim_get_current_buf())

  local otto = H.editor(socket, 'otto')
  otto.ask('document/open', { uri = 'a.txt', text = '' })
  for _, f in ipairs({ 'b.txt', 'c.txt' }) do
    local opened = otto.ask('document/open', { file = dir .. '/' .. f, text = table.concat(vim.fn.readfile(dir .. '/' .. f), '\n') .. '\n' })
    check(opened and opened.uri == f, 'otto opened ' .. f .. ': ' .. vim.inspect(opened))
  end
  local function otto_at(uri, line, character)
    local position = { line = line, character = character }
    otto.tell('cursor/update', { uri = uri, epoch = 0, revision = 0, selections = { { start = position, ['end'] = position } } })
  end

  -- Who: otto on line 4 of a.txt, nora (you) on line 2.
  otto_at('a.txt', 3, 2)
  wait_for(function() return vim.deep_equal(quire.remote_cursors(0).otto, { 3, 2 }) end, "otto's cursor in a.txt")
  local said = quire.who()
  check(said == 'here: nora (you) a.txt:2, otto a.txt:4', ':QuireWho said ' .. said)

  -- Jump: to his cursor in a.txt, then, once he is in b.txt, which this Neovim has not open, to b.txt.
  vim.cmd('QuireJump otto')
  check(at() == 'a.txt:4:2', 'jump in a.txt: at ' .. at())
  otto_at('b.txt', 2, 4)
  wait_for(function() return quire.who():find('otto b.txt:3', 1, true) ~= nil end, 'otto in b.txt')
  vim.cmd('QuireJump otto')
  check(at() == 'b.txt:3:4', 'jump to b.txt: at ' .. at())
  check(quire.shared_name() == 'b.txt', 'b.txt joined on jump: ' .. tostring(quire.shared_name()))
  check(vim.deep_equal(vim.api.nvim_buf_get_lines(0, 0, -1, true), { 'b one', 'b two', 'b three' }), 'b.txt text')

  -- Follow: from a.txt, this window goes to him in b.txt, follows him to another line, back to
  -- a.txt (by his cursor notification), and into c.txt, which this Neovim has not open.
  vim.cmd('buffer a.txt')
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  vim.cmd('QuireFollow otto')
  check(quire.following() == 'otto', 'following: ' .. tostring(quire.following()))
  check(at() == 'b.txt:3:4', 'follow starts at his cursor: ' .. at())
  otto_at('b.txt', 0, 1)
  wait_for(function() return at() == 'b.txt:1:1' end, 'following him to line 1 of b.txt (at ' .. at() .. ')')
  otto_at('a.txt', 2, 0)
  wait_for(function() return at() == 'a.txt:3:0' end, 'following him to a.txt')
  otto_at('c.txt', 4, 3)
  wait_for(function() return at() == 'c.txt:5:3' end, 'following him into c.txt')
  check(quire.shared_name() == 'c.txt', 'c.txt joined when followed into: ' .. tostring(quire.shared_name()))
  check(quire.following() == 'otto', 'still following after three moves')

  -- Nora moves: the follow ends and says so; otto's next move leaves her where she is.
  H.keys('gg')
  wait_for(function() return quire.following() == nil end, 'the follow to end when nora moved')
  wait_for(function() return H.told('stopped following otto %(you moved%)') end, 'being told the follow ended')
  otto_at('c.txt', 2, 0)
  wait_for(function() return vim.deep_equal(quire.remote_cursors(0).otto, { 2, 0 }) end, "otto's cursor in c.txt")
  check(at():match('^c%.txt:1:') ~= nil, 'no longer following, yet at ' .. at())

  -- Roles: otto shares a project folder (as `quire share` does) and moves into one of its files:
  -- :QuireWho shows his role there (this daemon shares it: owner); nora, in a document shared by
  -- name (no project), has none.
  local proj = dir .. '/proj'
  vim.fn.mkdir(proj, 'p')
  vim.fn.writefile({ 'd one', 'd two' }, proj .. '/d.txt')
  local shared = otto.ask('project/share', { root = proj, listen = { '127.0.0.1:0' } })
  check(shared and shared.key, 'project/share: ' .. vim.inspect(shared))
  local opened = otto.ask('document/open', { file = proj .. '/d.txt', ifShared = true, text = 'd one\nd two\n' })
  local uri = opened and opened.uri or ''
  check(uri:sub(1, 1) == '@', 'otto opened d.txt of the project: ' .. vim.inspect(opened))
  otto_at(uri, 1, 0)
  wait_for(function() return quire.who():find('otto (owner) proj/d.txt:2', 1, true) ~= nil end, 'otto in the project with his role')
  said = quire.who()
  check(said:find('otto (owner) proj/d.txt:2 (+3 files)', 1, true) ~= nil and said:find('nora (you) ', 1, true) ~= nil,
    ':QuireWho with roles said ' .. said)
  otto.ask('project/stop', { key = shared and shared.key or '' })
  vim.fn.jobstop(otto.job)
  quire.stop()
end

local ok, failure = pcall(run)
check(ok, 'the test stopped: ' .. tostring(failure))
H.finish()
