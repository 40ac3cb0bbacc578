-- Joining by opening a file: once a project is shared on the daemon running for this user
-- (project/share, as `quire share` asks it), opening one of its files in Neovim (:edit, by path)
-- starts Neovim's `quire`, which attaches to that daemon, and joins its document with no command;
-- a file created in it too; a file outside it stays unshared. Run by editors/nvim/test/run.sh.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/helpers.lua')
local quire = require('quire')
local check, wait_for = H.check, H.wait_for

H.attach(quire, vim.env.QUIRE_TEST_SOCKET)   -- then pointed at this test's own daemon, below

local function run()
  local dir = vim.fn.resolve(vim.fn.fnamemodify(vim.fn.tempname(), ':p')) .. '-project'
  vim.fn.mkdir(dir .. '/src', 'p')
  vim.fn.writefile({ 'def greet():', '    return "hi"' }, dir .. '/src/greet.py')
  local outside = vim.fn.resolve(vim.fn.fnamemodify(vim.fn.tempname(), ':p')) .. '-outside.txt'
  vim.fn.writefile({ 'not shared' }, outside)

  -- A daemon of this test's own, started as an editor starts one (plain `quire`, its stdio the
  -- host editor's), in a data directory of its own: it listens for more editors at the data
  -- directory's editor socket, and Neovim, which has started nothing, finds it there and attaches.
  vim.env.XDG_DATA_HOME = vim.fn.resolve(vim.fn.fnamemodify(vim.fn.tempname(), ':p')) .. '-data'
  vim.fn.mkdir(vim.env.XDG_DATA_HOME, 'p')
  quire.config.command = { vim.env.QUIRE_BINARY }
  -- The host: the daemon's first editor shares the folder and opens greet.py as a client would.
  local host = H.editor(nil, 'hana', { vim.env.QUIRE_BINARY })
  local shared = host.ask('project/share', { root = dir, listen = { '127.0.0.1:0' } })
  check(shared and shared.key, 'project/share: ' .. vim.inspect(shared))
  local opened = host.ask('document/open', { file = dir .. '/src/greet.py', ifShared = true, text = 'def greet():\n    return "hi"\n' })
  local uri = opened and opened.uri or ''
  check(uri:sub(1, 1) == '@', "the host's open of greet.py: " .. vim.inspect(opened))

  -- Neovim, with no daemon of its own yet, opens the file by path: it finds the running daemon's
  -- editor socket, starts `quire` (which attaches to it) and joins the file's document.
  wait_for(function()
    return vim.fn.glob(vim.env.XDG_DATA_HOME .. '/quire/editors.sock') .. vim.fn.glob((vim.env.XDG_RUNTIME_DIR or '/nonexistent') .. '/quire/editors-*.sock') ~= ''
  end, "the daemon's editor socket")
  vim.cmd('edit ' .. vim.fn.fnameescape(dir .. '/src/greet.py'))
  check(quire.shared_name() == uri, 'greet.py joined as ' .. tostring(quire.shared_name()) .. ', the host has ' .. uri)
  host.ask('document/edit', { uri = uri, epoch = 0, revision = 0, changes = {
    { range = { start = { line = 1, character = 11 }, ['end'] = { line = 1, character = 15 } }, text = '"hello"' } } })
  wait_for(function() return vim.api.nvim_buf_get_lines(0, 1, 2, false)[1] == '    return "hello"' end,
    "the host's edit to reach the joined buffer")

  -- A file created in the project: a new file of it, joined too.
  vim.cmd('edit ' .. vim.fn.fnameescape(dir .. '/src/new.py'))
  check((quire.shared_name() or ''):sub(1, 1) == '@', 'a new file of the project joined as ' .. tostring(quire.shared_name()))

  -- A file outside the project: left alone.
  vim.cmd('edit ' .. vim.fn.fnameescape(outside))
  check(quire.shared_name() == nil, 'a file outside the project was shared as ' .. tostring(quire.shared_name()))
  for _, d in ipairs(host.ask('document/list', vim.empty_dict()) or {}) do
    check(not d.uri:find('outside', 1, true), 'the daemon holds a document of the outside file: ' .. d.uri)
  end
  host.ask('project/stop', { key = shared.key })
  quire.stop()
  host.ask('shutdown')
  host.tell('exit', vim.empty_dict())
  wait_for(function() return vim.fn.jobwait({ host.job }, 0)[1] ~= -1 end, "the test's daemon to exit")
end

local ok, failure = pcall(run)
check(ok, 'the test stopped: ' .. tostring(failure))
H.finish()
