-- Read-only documents (protocol/decisions/roles.md), against a stand-in daemon that opens every
-- document read-only (editors/test/readonly_daemon.py): the buffer is 'nomodifiable', typing
-- changes nothing and says why once, the daemon's edits still go in, document/readOnly makes it
-- writable and read-only again, and an edit the daemon refuses brings the shared text back with
-- one message. Run by editors/nvim/test/run.sh.
local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h')
local H = dofile(here .. '/helpers.lua')
local quire = require('quire')
local check, wait_for = H.check, H.wait_for

local dir = vim.fn.tempname()
vim.fn.mkdir(dir, 'p')
vim.env.QUIRE_FAKE_LOG = dir .. '/received'
vim.env.QUIRE_FAKE_CONTROL = dir .. '/control'
quire.config.command = { 'python3', here .. '/../../test/readonly_daemon.py' }
quire.config.user = 'nora'
quire.config.log = vim.env.QUIRE_TEST_LOG

-- What the stand-in daemon sends next.
local function send(message)
  message.jsonrpc = '2.0'
  vim.fn.writefile({ vim.fn.json_encode(message) }, vim.env.QUIRE_FAKE_CONTROL, 'a')
end

-- How many times the client said why: vim.notify is the client's message area.
local told = {}
local notify = vim.notify
vim.notify = function(message, level)
  table.insert(told, message)
  notify(message, level)
end
local function told_count(text)
  local n = 0
  for _, message in ipairs(told) do if message:find(text, 1, true) then n = n + 1 end end
  return n
end
local reason = 'you can read notes but not change it (role read)'

local function received(method)
  local n = 0
  if vim.fn.filereadable(vim.env.QUIRE_FAKE_LOG) == 1 then
    for _, line in ipairs(vim.fn.readfile(vim.env.QUIRE_FAKE_LOG)) do
      if vim.fn.json_decode(line).method == method then n = n + 1 end
    end
  end
  return n
end

local function lines() return vim.api.nvim_buf_get_lines(0, 0, -1, false) end

local function run()
  vim.o.hidden = true
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'hello world' })
  vim.cmd('QuireShare notes')
  local buf = vim.api.nvim_get_current_buf()
  wait_for(function() return quire._state(buf) and quire._state(buf).read_only end, 'the read-only open')
  check(not vim.bo.modifiable, "a read-only document's buffer is nomodifiable")
  check(quire.statusline() == '[quire: read-only]', 'the status line says read-only: ' .. quire.statusline())

  -- Typing: Neovim refuses (E21); the client says why, once, however often it is tried.
  for _ = 1, 3 do
    vim.v.errmsg = ''
    pcall(vim.cmd, 'normal! ityped')
    if vim.v.errmsg == '' then vim.v.errmsg = "E21: Cannot make changes, 'modifiable' is off" end   -- as an uncaught E21 leaves it
    quire._tried_to_type()   -- what the key watcher runs after the key
  end
  wait_for(function() return told_count(reason) >= 1 end, 'the reason told')
  vim.wait(100, function() return false end)   -- a second message would have come by now
  check(vim.deep_equal(lines(), { 'hello world' }), 'the buffer did not change: ' .. vim.inspect(lines()))
  check(told_count(reason) == 1, 'said once, not per keystroke: ' .. told_count(reason))
  check(received('document/edit') == 0, 'no edit was sent')

  -- The daemon's edits still go in (following a writer).
  send({ method = 'document/edit', params = { uri = 'notes', epoch = 1, revision = 0, changes = {
    { range = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 0 } }, text = 'W ' } } } })
  wait_for(function() return lines()[1] == 'W hello world' end, "the writer's edit")
  check(not vim.bo.modifiable, 'still nomodifiable after a daemon edit')

  -- The role changes to write: writable; back to read: read-only again.
  send({ method = 'document/readOnly', params = { uri = 'notes', readOnly = false, reason = 'you can change notes again (role write)', project = 'notes', role = 'write' } })
  wait_for(function() return vim.bo.modifiable and not quire._state(buf).read_only end, 'writable again')
  check(quire.statusline() == '[quire]', 'the status line no longer says read-only: ' .. quire.statusline())
  send({ method = 'document/readOnly', params = { uri = 'notes', readOnly = true, reason = reason, project = 'notes', role = 'read' } })
  wait_for(function() return not vim.bo.modifiable end, 'read-only again')

  -- Typed while the role still allowed it, refused by the daemon: one message, the shared text back.
  send({ method = 'document/readOnly', params = { uri = 'notes', readOnly = false, reason = 'you can change notes again (role write)', project = 'notes', role = 'write' } })
  wait_for(function() return vim.bo.modifiable end, 'writable for the race')
  local before = told_count(reason)
  vim.cmd('normal! Araced')
  wait_for(function() return received('document/edit') >= 1 end, 'the edit sent')
  vim.cmd('normal! Aagain')
  wait_for(function() return received('document/resync') >= 1 and lines()[1] == 'hello world' end, 'the shared text back after the refusal')
  wait_for(function() return not vim.bo.modifiable end, 'read-only after the refusal')
  vim.wait(100, function() return false end)
  check(told_count(reason) == before + 1, 'the refusal said once: ' .. (told_count(reason) - before))

  vim.cmd('QuireStop')
  check(vim.bo.modifiable, 'unshared, the buffer is modifiable again')
end

local ok, failure = pcall(run)
check(ok, 'error: ' .. tostring(failure))
quire.stop()
H.finish()
