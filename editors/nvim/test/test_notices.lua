-- A port kept across restarts found taken: the daemon Neovim starts (on a data directory where a
-- project was shared before) listens on another port and says so (window/showMessage, the
-- `notices` of protocol/decisions/project-sharing.md, *The port across restarts*); Neovim shows it.
-- Run by editors/nvim/test/run.sh.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/helpers.lua')
local quire = require('quire')
local check, wait_for = H.check, H.wait_for

H.attach(quire, vim.env.QUIRE_TEST_SOCKET)   -- then pointed at a daemon of this test's own, below

local function stop(daemon)
  daemon.ask('shutdown')
  daemon.tell('exit', vim.empty_dict())
  wait_for(function() return vim.fn.jobwait({ daemon.job }, 0)[1] ~= -1 end, 'a daemon of the test to exit')
end

local function run()
  local base = vim.fn.resolve(vim.fn.fnamemodify(vim.fn.tempname(), ':p'))
  local dir, other = base .. '-project', base .. '-other'
  vim.fn.mkdir(dir, 'p')
  vim.fn.writefile({ 'notes' }, dir .. '/notes.md')
  vim.fn.mkdir(other, 'p')
  vim.fn.writefile({ 'other' }, other .. '/other.md')
  vim.env.XDG_DATA_HOME = base .. '-data'
  vim.fn.mkdir(vim.env.XDG_DATA_HOME, 'p')

  -- The folder is shared once on a port the system picks; the project keeps it.
  local first = H.editor(nil, 'hana', { vim.env.QUIRE_BINARY })
  local shared = first.ask('project/share', { root = dir, listen = { '127.0.0.1:0' } }) or {}
  local address
  for _, a in ipairs(shared.addresses or {}) do if a:find('^127%.0%.0%.1:') then address = a end end
  check(address ~= nil, 'project/share: ' .. vim.inspect(shared))
  stop(first)
  -- Another program takes that port meanwhile (a daemon of its own, sharing another folder there).
  local holder = H.editor(nil, 'otto', { vim.env.QUIRE_BINARY, '--data-dir', base .. '-holder-data' })
  local held = holder.ask('project/share', { root = other, listen = { address } })
  check(held and held.key, 'the port is held: ' .. vim.inspect(held))

  -- Neovim starts its daemon on the first data directory by sharing a buffer: it says what happened.
  quire.config.command = { vim.env.QUIRE_BINARY }
  vim.cmd('enew')
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'hello' })
  quire.share('scratch')
  -- Shown on one screen line (cut to fit), the whole of it in the client's log.
  wait_for(function() return H.told('quire: The port this project used before') end, 'the notice to be shown')
  local logged = table.concat(vim.fn.readfile(vim.env.QUIRE_TEST_LOG), '\n')
  check(logged:find('The port this project used before, ' .. address .. ', is taken', 1, true) ~= nil, 'the notice names the port: ' .. logged)
  check(logged:find('partners need the new line', 1, true) ~= nil, 'the notice says the line changed: ' .. logged)

  quire.stop()
  stop(holder)
end

local ok, failure = pcall(run)
check(ok, 'the test stopped: ' .. tostring(failure))
H.finish()
