-- Headless test of the Neovim client against a real daemon (run by editors/nvim/test/run.sh):
-- sharing, others' text moving the cursor, typing, others' cursors and names, undo of one's own
-- edits only, a multi-line paste, a refused edit resynced keeping the text, a daemon killed (-9)
-- and restarted while typing goes on, and peers: listen, join and leave messages, disconnect, and
-- listening again after a restart.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/helpers.lua')
local quire = require('quire')
local binary, socket = vim.env.QUIRE_BINARY, vim.env.QUIRE_TEST_SOCKET
local check, wait_for, editor, buffer_text, told = H.check, H.wait_for, H.editor, H.buffer_text, H.told

quire.config.command = { binary, 'attach', socket }
quire.config.user = 'nora'
quire.config.log = vim.env.QUIRE_TEST_LOG

-- Peers are named by their person; a daemon no editor named yet ("quire") by its address.
check(quire.peer_name({ user = 'fay', address = '127.0.0.1:9' }) == 'fay', 'peer name: ' .. quire.peer_name({ user = 'fay' }))
check(quire.peer_name({ user = 'quire', address = '127.0.0.1:9' }) == 'someone (127.0.0.1:9)', 'a daemon named quire: ' .. quire.peer_name({ user = 'quire', address = '127.0.0.1:9' }))

vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'see the world', 'two' })
vim.cmd('QuireShare intent.txt')
local otto = editor(socket, 'otto')
otto.ask('document/open', { uri = 'intent.txt', text = '' })
local function daemon_text() return (otto.ask('document/text', { uri = 'intent.txt' }) or {}).text end

-- Others' text before the cursor moves it along.
vim.api.nvim_win_set_cursor(0, { 1, 8 })   -- on the "w" of "world"
otto.ask('document/edit', { uri = 'intent.txt', revision = 0, changes = {
  { range = { start = { line = 0, character = 4 }, ['end'] = { line = 0, character = 4 } }, text = 'all of ' } } })
wait_for(function() return vim.api.nvim_buf_get_lines(0, 0, 1, false)[1] == 'see all of the world' end, 'the remote insertion')
local cursor = vim.api.nvim_win_get_cursor(0)
check(cursor[1] == 1 and cursor[2] == 15, 'the cursor did not move with the text: ' .. vim.inspect(cursor))

-- Typing where the cursor is.
vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('inew <Esc>', true, false, true), 'x', false)
wait_for(function() return daemon_text() == buffer_text() end, 'typing to reach the daemon')
check(vim.api.nvim_buf_get_lines(0, 0, 1, false)[1] == 'see all of the new world', 'typed text misplaced')

-- Otto's cursor shows with his name.
otto.tell('cursor/update', { uri = 'intent.txt', revision = 1, selections = { { start = { line = 1, character = 1 }, ['end'] = { line = 1, character = 1 } } } })
wait_for(function() return quire.remote_cursors(0).otto ~= nil end, "otto's cursor")
local at = quire.remote_cursors(0).otto or {}
check(at[1] == 1 and at[2] == 1, "otto's cursor is misplaced: " .. vim.inspect(at))

-- u undoes my own edit and leaves otto's.
vim.api.nvim_feedkeys('u', 'x', false)
wait_for(function() return vim.api.nvim_buf_get_lines(0, 0, 1, false)[1] == 'see all of the world' end, 'the undo')
wait_for(function() return daemon_text() == buffer_text() end, 'the undo to reach the daemon')

-- A multi-line paste in insert mode, then typing below it.
vim.fn.setreg('p', 'x\ny\nz', 'c')
vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('GA<C-R>p tail<Esc>', true, false, true), 'x', false)
wait_for(function() return daemon_text() == buffer_text() end, 'the paste to reach the daemon')
check(quire._epoch(0) == 0, 'the paste made a resync')

-- A refused edit is shown and resynced, keeping what was typed and what otto typed around the
-- refusal. The resync sends the text with the epoch and daemon revision, no base: the daemon
-- resolves the buffer against what it had sent this editor.
quire._break_revision(0)
vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('Gokept words<Esc>', true, false, true), 'x', false)
otto.ask('document/edit', { uri = 'intent.txt', revision = 0, changes = {
  { range = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 0 } }, text = 'partner ' } } })
wait_for(function() return quire._epoch(0) == 1 end, 'the resync after a refusal')
wait_for(function() return daemon_text() == buffer_text() and H.count(buffer_text(), 'partner') == 1 end,
  'the kept text and the partner\'s word to reach both')
check(vim.api.nvim_buf_get_lines(0, -2, -1, false)[1] == 'kept words', 'the typed line was lost: ' .. buffer_text())
check(vim.api.nvim_buf_get_lines(0, 0, 1, false)[1]:find('^partner ') ~= nil, 'the partner\'s word was lost: ' .. buffer_text())
check(H.count(daemon_text() or '', 'kept words') == 1, 'the typed line is not there once: ' .. tostring(daemon_text()))
check(told('refused an edit'), 'no message about the refusal')
do
  local log = table.concat(vim.fn.readfile(vim.env.QUIRE_TEST_LOG), '\n') .. '\n'
  check(H.count(log, 'resyncing intent.txt keeping the buffer text, sending epoch,revision,text,uri\n') == 1,
    'the resync did not send text, epoch and revision alone')
end

vim.fn.jobstop(otto.job)
quire.stop()

-- The daemon is killed and restarts from its data directory; typing done meanwhile is merged.
local own = socket .. '.own'
local function start_daemon()
  local id = vim.fn.jobstart({ binary, '--no-stdio', '--socket', own, '--data-dir', own .. '.data' }, { env = { QUIRE_SECRET = 'quire-dldtkmkg7d4vh6attn5v2o2m3rslkto6siewza6ccv4jnxrqjm5eh4sk' } })
  wait_for(function() return vim.fn.getftype(own) == 'socket' end, 'the daemon socket')
  return id
end
local daemon = start_daemon()
quire.config.command = { binary, 'attach', own }
vim.cmd('enew')
vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'kept', 'across restarts' })
vim.cmd('QuireShare kept.txt')
check(quire.statusline() == '[quire]', 'status line: ' .. quire.statusline())
os.execute('kill -9 ' .. vim.fn.jobpid(daemon))
wait_for(function() return quire.statusline() == '[quire: reconnecting]' end, 'the client to notice')
vim.fn.delete(own)
-- A reconnect attempt fails while the daemon is down (its exit is logged); nothing is shown.
local function exits()
  local log = table.concat(vim.fn.readfile(vim.env.QUIRE_TEST_LOG), '\n')
  return H.count(log, 'daemon exited with 1')
end
local failed_before = exits()
wait_for(function() return exits() > failed_before end, 'a reconnect attempt to fail')
vim.api.nvim_buf_set_lines(0, -1, -1, false, { 'typed while it was away' })
daemon = start_daemon()
wait_for(function() return quire.statusline() == '[quire]' end, 'the reconnect')
check(not told('no answer') and not told('initialize') and not told('went away'), 'the restart was not quiet: ' .. vim.inspect(H.said))
local probe = editor(own, 'probe')
probe.ask('document/open', { uri = 'kept.txt', text = '' })
wait_for(function() return (probe.ask('document/text', { uri = 'kept.txt' }) or {}).text == 'kept\nacross restarts\ntyped while it was away\n' end,
  'the text typed while the daemon was away')
vim.fn.jobstop(probe.job)
-- The reopen named the view and where the buffer was in it, and sent no base.
do
  local log = table.concat(vim.fn.readfile(vim.env.QUIRE_TEST_LOG), '\n') .. '\n'
  check(H.count(log, 'reopening kept.txt with') == 1 and H.count(log, ', sending epoch,revision,text,uri,view\n') == 1,
    'the reopen did not send its view, epoch, revision and text alone: ' .. log:sub(-600))
end

-- Peers: listen, a peer joins (told, counted), disconnect (told), and after a restart the
-- daemon listens on the same port again.
vim.cmd('QuireListen 0')
wait_for(function() return told('listening for peers on port') end, 'the listen message')
local port
for _, message in ipairs(H.said) do port = port or message:match('listening for peers on port (%d+)') end
local far = vim.fn.jobstart({ binary, '--no-stdio', '--socket', own .. '.far', '--data-dir', own .. '.far-data',
  '--connect', '127.0.0.1:' .. tostring(port), '--user-name', 'fay' }, { env = { QUIRE_SECRET = 'quire-dldtkmkg7d4vh6attn5v2o2m3rslkto6siewza6ccv4jnxrqjm5eh4sk' } })
wait_for(function() return told('fay joined') end, 'the join message')
wait_for(function() return quire.statusline() == '[quire 1 peer]' end, 'the status line to count the peer')
vim.cmd('QuireDisconnect')
wait_for(function() return told('disconnected link') and told('fay left') end, 'the disconnect messages')
check(quire.statusline() == '[quire]', 'status line after disconnecting: ' .. quire.statusline())
os.execute('kill -9 ' .. vim.fn.jobpid(daemon))
wait_for(function() return quire.statusline() == '[quire: reconnecting]' end, 'the client to notice again')
vim.fn.delete(own)
daemon = start_daemon()
wait_for(function() return quire.statusline() == '[quire]' end, 'the reconnect again')
local asker = editor(own, 'asker')
wait_for(function()
  local status = asker.ask('peer/status', vim.empty_dict()) or {}
  return status.listening and status.listening[1] == tonumber(port)
end, 'listening again on port ' .. tostring(port))
vim.fn.jobstop(asker.job)
vim.fn.jobstop(far)
quire.stop()
vim.fn.jobstop(daemon)

H.finish()
