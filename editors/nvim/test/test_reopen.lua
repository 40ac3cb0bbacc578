-- Headless test of reopening after the daemon is killed (-9), by durable view (run by
-- editors/nvim/test/run.sh): this Neovim (nora) and a second, embedded Neovim (bea) share a
-- document; nora has an edit in flight when the daemon dies; while it is down both type, and
-- both replace the same token (<A1> by <B1> and by <C1>). After the restart each reopens with
-- its view, epoch and revision; the daemon's text equals both buffers and every token is there
-- once and whole.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/helpers.lua')
local quire = require('quire')
local binary = vim.env.QUIRE_BINARY
local check, wait_for, count, told = H.check, H.wait_for, H.count, H.told
local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
-- Keys typed one by one (each command its own undo step); a < in them is typed as is.
local function escaped(text) return (text:gsub('<([%w-]+)>', function(name)
  return (name == 'Esc' or name == 'CR') and '<' .. name .. '>' or '<lt>' .. name .. '>' end)) end
local function keys(text) H.keys(escaped(text), 't') end

local own = vim.env.QUIRE_TEST_SOCKET .. '.reopen'
local daemon_log = own .. '.log'
local function start_daemon()
  local id = vim.fn.jobstart({ 'sh', '-c', 'exec "$0" --no-stdio --log-level info --socket "$1" --data-dir "$2" 2>>"$3"',
    binary, own, own .. '.data', daemon_log })
  wait_for(function() return vim.fn.getftype(own) == 'socket' end, 'the daemon socket')
  return id
end
local function daemon_pid(id) return vim.fn.jobpid(id) end   -- sh execs the daemon: the same process

quire.config.command = { binary, 'attach', own }
quire.config.user = 'nora'
quire.config.log = vim.env.QUIRE_TEST_LOG

local bea, daemon
local function run()
  daemon = start_daemon()
  -- Bea: another Neovim with the client, driven over its RPC channel.
  bea = vim.fn.jobstart({ 'nvim', '--embed', '--headless', '-u', 'NONE', '-i', 'NONE', '-n',
    '--cmd', 'set rtp^=' .. vim.fn.fnamemodify(here, ':h'), '--cmd', 'runtime plugin/quire.lua' }, { rpc = true })
  local function b(code, ...) return vim.rpcrequest(bea, 'nvim_exec_lua', code, { ... }) end
  b([[local q = require('quire'); q.config.command = ...; q.config.user = 'bea'; q.config.log = select(2, ...)]],
    { binary, 'attach', own }, vim.env.QUIRE_TEST_LOG .. '.bea')
  local function bea_text()
    return b([[return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n') .. (vim.bo.eol and '\n' or '')]])
  end
  local function bea_keys(text)
    b([[vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(..., true, true, true), 'xt', false)]], escaped(text))
  end
  local function bea_status() return b([[return require('quire').statusline()]]) end

  vim.cmd('enew')
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { 'x <A1> y', 'two f(x) "s"', 'three <A17>' })
  vim.cmd('QuireShare tokens.txt')
  b([[vim.cmd('QuireOpen tokens.txt')]])
  wait_for(function() return bea_text() == H.buffer_text(buf) end, "bea's buffer to show the document")

  local probe = H.editor(own, 'probe')
  probe.ask('document/open', { uri = 'tokens.txt', text = '' })
  local function daemon_text() return (probe.ask('document/text', { uri = 'tokens.txt' }) or {}).text end

  -- Live typing on both sides, so that each has applied daemon edits (its revision is not 0).
  keys('Goalive <L1><Esc>')
  wait_for(function() return count(bea_text(), '<L1>') == 1 end, "nora's live line at bea")
  bea_keys('Go(b) live <L2><Esc>')
  wait_for(function() return count(H.buffer_text(buf), '<L2>') == 1 end, "bea's live line at nora")
  wait_for(function() local t = daemon_text(); return t == H.buffer_text(buf) and t == bea_text() end, 'live typing to settle')
  check(quire._state(buf).daemon > 0, 'nora applied no daemon edit: revision ' .. tostring(quire._state(buf).daemon))
  local view = quire._state(buf).view
  check(type(view) == 'string' and view ~= '', 'no view kept from the open: ' .. vim.inspect(view))
  check(type(b([[return require('quire')._state(0).view]])) == 'string', 'bea kept no view')
  vim.fn.jobstop(probe.job)

  -- An edit in flight: the daemon is stopped, nora types (the edit is sent, no reply comes), and
  -- the daemon is killed.
  local pid = daemon_pid(daemon)
  os.execute('kill -STOP ' .. pid)
  keys('Goflight <F1><Esc>')
  wait_for(function() return table.concat(vim.fn.readfile(vim.env.QUIRE_TEST_LOG), '\n'):find('sent edit %d+: [^\n]*<F1>') ~= nil end,
    'the edit to be in flight')
  os.execute('kill -9 ' .. pid)
  wait_for(function() return quire.statusline() == '[quire: reconnecting]' end, 'nora to notice')
  wait_for(function() return bea_status() == '[quire: reconnecting]' end, 'bea to notice')
  vim.fn.delete(own)

  -- Both type while the daemon is down, both replacing <A1>.
  keys('gg0f<cf><B1><Esc>')
  keys('Godown "a" <D2><Esc>')
  bea_keys('gg0f<cf><C1><Esc>')
  bea_keys('Go(b) down g(y)<Esc>')
  check(count(H.buffer_text(buf), '<B1>') == 1 and count(H.buffer_text(buf), '<A1>') == 0, 'nora did not replace <A1>: ' .. H.buffer_text(buf))
  check(count(bea_text(), '<C1>') == 1 and count(bea_text(), '<A1>') == 0, 'bea did not replace <A1>: ' .. bea_text())

  daemon = start_daemon()
  wait_for(function() return quire.statusline() == '[quire]' end, 'nora to reconnect')
  wait_for(function() return bea_status() == '[quire]' end, 'bea to reconnect')
  probe = H.editor(own, 'probe')
  probe.ask('document/open', { uri = 'tokens.txt', text = '' })
  wait_for(function() local t = daemon_text(); return t == H.buffer_text(buf) and t == bea_text() end,
    'the daemon, nora and bea to hold one text')
  local text = daemon_text() or ''
  check(text == H.buffer_text(buf), 'nora shows ' .. vim.inspect(H.buffer_text(buf)) .. ', the daemon has ' .. vim.inspect(text))
  check(text == bea_text(), 'bea shows ' .. vim.inspect(bea_text()) .. ', the daemon has ' .. vim.inspect(text))
  local rest = text
  for _, token in ipairs({ '<B1>', '<C1>', '<L1>', '<L2>', '<F1>', '<D2>', '<A17>', 'f(x)', 'g(y)', '"s"', '"a"', '(b) live', '(b) down' }) do
    check(count(text, token) == 1, token .. ' is there ' .. count(text, token) .. ' times: ' .. vim.inspect(text))
    rest = rest:gsub(vim.pesc(token), '')
  end
  check(count(text, '<A1>') == 0, '<A1> came back: ' .. vim.inspect(text))
  check(not rest:find('[<>()"]'), 'a token was cut: ' .. vim.inspect(text))

  -- The reopens named the views, and the daemon resumed them; neither sent a base or the edit
  -- in flight (the text holds it; the daemon knows whether it read it).
  local client_log = table.concat(vim.fn.readfile(vim.env.QUIRE_TEST_LOG), '\n') .. '\n'
  check(client_log:find('reopening tokens.txt with {[^\n]*"view": ?"' .. vim.pesc(view) .. '"[^\n]*, sending epoch,revision,text,uri,view\n') ~= nil,
    'nora did not reopen with her view ' .. view .. ' alone')
  local bea_log = table.concat(vim.fn.readfile(vim.env.QUIRE_TEST_LOG .. '.bea'), '\n') .. '\n'
  check(bea_log:find('reopening tokens.txt with {[^\n]*"view": ?"[^\n]*, sending epoch,revision,text,uri,view\n') ~= nil, 'bea did not reopen with her view alone')
  local log = table.concat(vim.fn.readfile(daemon_log), '\n')
  check(count(log, 'its view resumed') == 2, 'the daemon resumed ' .. count(log, 'its view resumed') .. ' views, not 2')
  check(quire._state(buf).view == view, 'the view changed on the reopen: ' .. tostring(quire._state(buf).view))

  -- Typing goes on, on both sides.
  keys('Goafter "n" <N3><Esc>')
  bea_keys('ggOafter (b) <N4><Esc>')
  wait_for(function() local t = daemon_text() or ''
    return count(t, '<N3>') == 1 and count(t, '<N4>') == 1 and t == H.buffer_text(buf) and t == bea_text() end, 'typing after the reopen')
  check(not told('failed') and not told('refused'), 'warnings: ' .. vim.inspect(H.said))
  vim.fn.jobstop(probe.job)
end

local ok, failure = pcall(run)
check(ok, 'the test stopped: ' .. tostring(failure))
if bea then pcall(vim.rpcrequest, bea, 'nvim_exec_lua', [[require('quire').stop()]], {}); vim.fn.jobstop(bea) end
quire.stop()
if daemon then vim.fn.jobstop(daemon) end
H.finish()
