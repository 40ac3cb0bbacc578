-- Headless test of the Neovim client's undo groups with two shared buffers (run by
-- editors/nvim/test/run.sh): an edit is sent with the changenr() of the buffer it belongs to,
-- not of the current buffer. Two commands run in the other buffer while this one is current are
-- two undo steps there, so u in it undoes only the last; with this buffer's changenr() (the
-- same for both) the daemon would take them for one step and u would undo both.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/helpers.lua')
local quire = require('quire')
local check, wait_for, buffer_text = H.check, H.wait_for, H.buffer_text
local socket = vim.env.QUIRE_TEST_SOCKET

H.attach(quire, socket)

-- The undoGroup of every edit sent for `uri`, from the client's log.
local function undo_groups(uri)
  local groups = {}
  for _, line in ipairs(vim.fn.readfile(vim.env.QUIRE_TEST_LOG)) do
    local encoded = line:match('^%S+ sent edit %d+: (.*)$')
    local ok, params = pcall(vim.fn.json_decode, encoded or '')
    if ok and type(params) == 'table' and params.uri == uri then table.insert(groups, params.undoGroup) end
  end
  return groups
end

local function run()
  vim.o.hidden = true
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'other <B1>' })
  vim.cmd('QuireShare group-b.txt')
  local b = vim.api.nvim_get_current_buf()
  vim.cmd('enew')
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'current <A1>' })
  vim.cmd('QuireShare group-a.txt')
  local a = vim.api.nvim_get_current_buf()
  -- Changes of this buffer's own, so that its changenr() is not B's.
  H.keys('A f(x)<Esc>', 't')
  H.keys('A "s"<Esc>', 't')
  H.keys('A g(y)<Esc>', 't')
  local otto = H.editor(socket, 'otto')
  otto.ask('document/open', { uri = 'group-b.txt', text = '' })
  local function daemon_text() return (otto.ask('document/text', { uri = 'group-b.txt' }) or {}).text end
  local function agree(what) return wait_for(function() return daemon_text() == buffer_text(b) end, what) end
  agree('the share of the other buffer')

  -- Two commands in B, each its own undo block there, sent while A is current.
  local function in_b(command)
    vim.api.nvim_buf_call(b, function()
      vim.cmd('let &undolevels = &undolevels')   -- a new undo block, as a command typed would start
      vim.cmd(command)
    end)
    check(vim.api.nvim_get_current_buf() == a, 'A is not current')
  end
  in_b('normal! A one <C2>')
  agree('the first command in B')
  in_b('normal! A two <D3>')
  agree('the second command in B')
  local groups = undo_groups('group-b.txt')
  local b_changenr = vim.api.nvim_buf_call(b, vim.fn.changenr)
  check(#groups == 2 and groups[1] == b_changenr - 1 and groups[2] == b_changenr,
    'undo groups sent for B: ' .. vim.inspect(groups) .. ', B is at changenr ' .. b_changenr ..
    ', A at ' .. vim.api.nvim_buf_call(a, vim.fn.changenr))

  -- u in B undoes the second command only.
  vim.cmd('buffer ' .. b)
  H.keys('u')
  wait_for(function() return vim.api.nvim_buf_get_lines(b, 0, -1, false)[1] == 'other <B1> one <C2>' end, 'u to undo the second command only')
  agree('the undo')
  vim.fn.jobstop(otto.job)
end

local ok, failure = pcall(run)
check(ok, 'error: ' .. tostring(failure))
quire.stop()
H.finish()
