-- A peer's document of the same name made apart from ours (run by editors/nvim/test/run.sh): the
-- daemon sends `document/forked` and Neovim words it with its own commands, naming the copy;
-- :QuireMerge then copies the copy's text into ours.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/helpers.lua')
local quire = require('quire')
local binary = vim.env.QUIRE_BINARY
local check, wait_for = H.check, H.wait_for

local work = vim.fn.fnamemodify(vim.env.QUIRE_TEST_RESULT, ':h') .. '/forked-nvim'
vim.fn.mkdir(work, 'p')
local secret = 'quire-nte2zzlcpiiqcach2z7c46dmmo7tj4yd6iugqs5oryajdrswjrghjlr6'
local function daemon(name, extra)
  local socket = work .. '/' .. name .. '.sock'
  local job = vim.fn.jobstart(vim.list_extend({ binary, '--no-stdio', '--socket', socket, '--data-dir', work .. '/' .. name .. '-data', '--user-name', name }, extra or {}),
    { env = { QUIRE_SECRET = secret } })
  wait_for(function() return vim.fn.getftype(socket) == 'socket' end, 'daemon ' .. name)
  return job, socket
end

local a, a_socket = daemon('ann', { '--listen', '127.0.0.1:0' })
local d, d_socket = daemon('dee')
H.attach(quire, a_socket)
vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'shared by nvim' })
vim.cmd('QuireShare plan.txt')
wait_for(function() return quire.shared_name() == 'plan.txt' end, 'the share')

local probe_a = H.editor(a_socket, 'otto')
local port = ((probe_a.ask('peer/status') or {}).listening or {})[1]
check(type(port) == 'number', 'daemon A listens on no port')
local dee = H.editor(d_socket, 'dee')
dee.ask('document/open', { uri = 'plan.txt', text = "dee's own plan\n" })   -- offline: another document
dee.ask('peer/connect', { port = port })

wait_for(function() return H.told('another document named "plan.txt"') end, 'the message about two documents of one name')
-- The screen shows one line of it; the client's log holds it whole.
local told = table.concat(vim.fn.readfile(vim.env.QUIRE_TEST_LOG), '\n')
local fork = told:match('theirs as "(plan%.txt#%x+)"')
check(fork ~= nil, 'the message names no copy: ' .. told:sub(-300))
check(told:find(':QuireMerge ' .. vim.pesc(fork or '?') .. ' merges its text into yours') ~= nil, 'the message names no :QuireMerge: ' .. told:sub(-300))

if fork then
  wait_for(function()
    for _, document in ipairs(probe_a.ask('document/list') or {}) do
      if document.uri == fork and document.characters > 0 then return true end
    end
    return false
  end, 'the copy to get its text')
  vim.cmd('QuireMerge ' .. fork)
  wait_for(function() return H.buffer_text() == "shared by nvim\ndee's own plan\n" end, 'the merged text')
end

quire.stop()
vim.fn.jobstop(probe_a.job)
vim.fn.jobstop(dee.job)
vim.fn.jobstop(d)
vim.fn.jobstop(a)
H.finish()
