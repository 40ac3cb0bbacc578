-- Headless test of :QuireSave of files whose format is not the text (run by
-- editors/nvim/test/run.sh): a CRLF file and a file with a BOM. The daemon writes the shared text
-- in the file's format; the buffer, which shows that text, is then not modified, Neovim takes the
-- file as read, and a later :e! takes the file as unchanged (a resync that keeps the view, not a
-- reopen that would drop it and the daemon's undo history).
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/helpers.lua')
local quire = require('quire')
local check, wait_for, buffer_text = H.check, H.wait_for, H.buffer_text
local socket = vim.env.QUIRE_TEST_SOCKET

H.attach(quire, socket)

local function bytes(path)
  local file = io.open(path, 'rb')
  local content = file:read('*a')
  file:close()
  return content
end

local function write(path, content)
  local file = io.open(path, 'wb')
  file:write(content)
  file:close()
end

local function reopens(uri)
  local n = 0
  for _, line in ipairs(vim.fn.readfile(vim.env.QUIRE_TEST_LOG)) do
    if line:find('reopened ' .. uri, 1, true) then n = n + 1 end
  end
  return n
end

local dir = vim.fn.tempname()
vim.fn.mkdir(dir, 'p')
local otto = H.editor(socket, 'otto')

-- One file: `content` on disk (`format`: what Neovim should read it as), shared, typed in,
-- saved by the daemon, then read again.
local function round(name, content, format, bomb, expected)
  local path = dir .. '/' .. name
  write(path, content)
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  local buf = vim.api.nvim_get_current_buf()
  check(vim.bo[buf].fileformat == format and vim.bo[buf].bomb == bomb,
    name .. ': read as ' .. vim.bo[buf].fileformat .. (vim.bo[buf].bomb and ' with a BOM' or ''))
  vim.cmd('QuireShare ' .. name)
  otto.ask('document/open', { uri = name, text = '' })
  local function daemon_text() return (otto.ask('document/text', { uri = name }) or {}).text end
  local function agree(what) return wait_for(function() return daemon_text() == buffer_text(buf) end, name .. ': ' .. what) end
  H.keys('Go"typed" <T1><Esc>', 't')
  agree('typing')
  check(vim.bo[buf].modified, name .. ': the buffer should be modified before :QuireSave')
  local view = quire._state(buf).view
  vim.cmd('QuireSave')
  check(bytes(path) == expected, name .. ': :QuireSave wrote ' .. vim.inspect(bytes(path)))
  wait_for(function() return not vim.bo[buf].modified end, name .. ': the buffer to be unmodified after :QuireSave')
  check(quire._state(buf).fileHash == vim.fn.sha256(bytes(path)),
    name .. ': the hash kept of the file is not the hash of its bytes')
  -- Read again: the file holds what Quire wrote, so the view stays.
  vim.cmd('edit!')
  wait_for(function() return not quire._state(buf).away end, name .. ': the buffer to be shared again after :e!')
  agree(':e!')
  check(quire._state(buf).view == view, name .. ': :e! after :QuireSave reopened the document (a new view)')
  check(reopens(name) == 0, name .. ': :e! after :QuireSave took the file as changed outside')
  check(vim.bo[buf].fileformat == format and vim.bo[buf].bomb == bomb and not vim.bo[buf].modified,
    name .. ': after :e! ' .. vim.bo[buf].fileformat .. (vim.bo[buf].bomb and ' bomb' or '') .. (vim.bo[buf].modified and ' modified' or ''))
  -- Sharing goes on.
  H.keys('ggA f(x)<Esc>', 't')
  agree('typing after :e!')
end

local function run()
  vim.o.hidden = true
  round('crlf.txt', 'alpha <A1>\r\nbeta f(x)\r\n', 'dos', false, 'alpha <A1>\r\nbeta f(x)\r\n"typed" <T1>\r\n')
  round('bom.txt', '\239\187\191alpha <B1>\nbeta "s"\n', 'unix', true, '\239\187\191alpha <B1>\nbeta "s"\n"typed" <T1>\n')
end

local ok, failure = pcall(run)
check(ok, 'error: ' .. tostring(failure))
vim.fn.jobstop(otto.job)
quire.stop()
H.finish()
