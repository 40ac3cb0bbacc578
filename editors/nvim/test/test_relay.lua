-- Headless test of :QuireConnectRelay (run by editors/nvim/test/run.sh): Neovim's daemon dials a
-- `quire relay` that another daemon (which never listens either) dials too; the relay pairs
-- them and Neovim says who joined.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/helpers.lua')
local quire = require('quire')
local check, wait_for = H.check, H.wait_for
local work = vim.fn.fnamemodify(vim.env.QUIRE_TEST_RESULT, ':h') .. '/relay-nvim'
vim.fn.mkdir(work, 'p')
local secret = 'quire-nte2zzlcpiiqcach2z7c46dmmo7tj4yd6iugqs5oryajdrswjrghjlr6'
local socket = work .. '/a.sock'
local jobs = {}

local function start(arguments, stderr)
  local options = { env = { QUIRE_SECRET = secret } }
  if stderr then
    options.on_stderr = function(_, data) for _, line in ipairs(data) do table.insert(stderr, line) end end
  end
  local job = vim.fn.jobstart(vim.list_extend({ vim.env.QUIRE_BINARY }, arguments), options)
  table.insert(jobs, job)
  return job
end

local function run()
  local relay_log = {}
  start({ 'relay', '--listen', '127.0.0.1:0' }, relay_log)
  local port
  wait_for(function()
    port = tonumber(table.concat(relay_log, ' '):match('quire relay: listening on 127%.0%.0%.1:(%d+)'))
    return port ~= nil
  end, 'the relay to listen')
  start({ '--no-stdio', '--socket', socket, '--data-dir', work .. '/a-data' })
  wait_for(function() return vim.fn.getftype(socket) == 'socket' end, 'daemon A')
  H.attach(quire, socket)
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'through the relay' })
  vim.cmd('QuireShare relayed.txt')
  vim.cmd('QuireConnectRelay 127.0.0.1:' .. port)
  wait_for(function() return H.told('dialing the relay 127%.0%.0%.1:' .. port .. ' to be paired') end,
    'the message on :QuireConnectRelay: ' .. vim.inspect(H.said))
  start({ '--no-stdio', '--socket', work .. '/b.sock', '--data-dir', work .. '/b-data', '--relay', '127.0.0.1:' .. port, '--user-name', 'bea' })
  wait_for(function() return H.told('bea joined') end, 'bea to join through the relay: ' .. vim.inspect(H.said))
  wait_for(function() return quire.statusline() == '[quire 1 peer]' end, 'the status line to count the peer')
end

local ok, failure = pcall(run)
if not ok then check(false, 'error: ' .. tostring(failure)) end
pcall(vim.cmd, 'QuireStop')
for _, job in ipairs(jobs) do vim.fn.jobstop(job) end
H.finish()
