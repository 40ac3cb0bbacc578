-- Headless test of the Neovim client's buffer lifecycle and commands against a real daemon (run
-- by editors/nvim/test/run.sh): :w tells the daemon (a later open does not double the saved
-- text), :QuireSave, 3u and 3<C-R>, :e! with a partner's unsaved line (and no modeline from the
-- shared text), :e other and :e back without 'hidden', an outside change found by checktime
-- arriving once, :saveas, and :bwipeout. Tokens look like code (<A17>, f(x), "s"), and after
-- each step the daemon's text is checked against the buffer.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/helpers.lua')
local quire = require('quire')
local check, wait_for, count = H.check, H.wait_for, H.count
-- Keys typed one by one (each command its own undo step); a < in them is typed as is.
local function keys(text) H.keys((text:gsub('<([%w-]+)>', function(name)
  return (name == 'Esc' or name == 'C-R') and '<' .. name .. '>' or '<lt>' .. name .. '>' end)), 't') end
local socket = vim.env.QUIRE_TEST_SOCKET

H.attach(quire, socket)
vim.o.modeline = true      -- Neovim's default: what a shared text must not reach
vim.o.hidden = false

-- A step that fails by an error is reported like a failed check, and the result is written.
local function run()
  local project = vim.fn.tempname()
  vim.fn.mkdir(project .. '/.git', 'p')
  local path = project .. '/notes.txt'
  vim.fn.writefile({ 'alpha <A17>', 'beta f(x)' }, path)
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  local buf = vim.api.nvim_get_current_buf()
  vim.cmd('QuireShare')
  local otto = H.editor(socket, 'otto')
  otto.ask('document/open', { uri = 'notes.txt', text = '' })
  local otto_revision = 0   -- daemon edits otto has seen: his edits below are based on the text he asked for
  local function daemon_text() return (otto.ask('document/text', { uri = 'notes.txt' }) or {}).text end
  local function file() return table.concat(vim.fn.readfile(path, 'b'), '\n') end
  local function in_step(what) return daemon_text() == H.buffer_text(buf) end
  local function synced(what) wait_for(function() return in_step() end, what .. ': the daemon to hold what the buffer shows') end
  -- Otto appends a line at the end of the text (he resyncs first, so his revision is current).
  local function otto_appends(line)
    local now = otto.ask('document/resync', { uri = 'notes.txt' })
    local lines = vim.split(now.text, '\n', true)
    otto.ask('document/edit', { uri = 'notes.txt', epoch = now.epoch, revision = 0, changes = {
      { range = { start = { line = #lines - 1, character = 0 }, ['end'] = { line = #lines - 1, character = 0 } }, text = line .. '\n' } } })
    if vim.api.nvim_buf_is_loaded(buf) then
      wait_for(function() return count(H.buffer_text(buf), line) == 1 end, "otto's line " .. line)
    end
  end
  -- A request on the client's own connection: its notifications sent before are handled by then.
  local function settle() quire.document_names() end
  synced('the share')
  check(quire.statusline() == '[quire]', 'not shared: ' .. quire.statusline())

  -- :w, then another editor opens the document with the file: the saved line is there once.
  keys('Go"s" <W1><Esc>')
  synced('typing')
  vim.cmd('write')
  check(file() == H.buffer_text(buf), ':w wrote something else: ' .. file())
  settle()
  local pia = H.editor(socket, 'pia')
  pia.ask('document/open', { uri = 'notes.txt', text = file(), file = path })
  local text = (pia.ask('document/text', { uri = 'notes.txt' }) or {}).text or ''
  check(count(text, '<W1>') == 1, 'after :w an open with the file doubled the saved line: ' .. vim.inspect(text))
  synced(':w and an open')
  vim.fn.jobstop(pia.job)

  -- :QuireSave writes the shared text, otto's unsaved line included; the buffer is not modified.
  otto_appends('otto g(y) <B2>')
  check(vim.bo[buf].modified, 'the buffer should be modified before :QuireSave')
  vim.cmd('QuireSave')
  wait_for(function() return file() == daemon_text() end, ':QuireSave to write the shared text')
  check(count(file(), '<B2>') == 1 and count(file(), '<W1>') == 1, ':QuireSave wrote ' .. vim.inspect(file()))
  wait_for(function() return not vim.bo[buf].modified end, 'the buffer to be unmodified after :QuireSave')
  synced(':QuireSave')

  -- 3u undoes my last three steps and leaves otto's line; 3<C-R> brings them back.
  local before = H.buffer_text(buf)
  keys('A <C1><Esc>')
  synced('step 1')
  keys('A f(1)<Esc>')
  synced('step 2')
  otto_appends('otto between "o"')
  keys('ggA "s3"<Esc>')
  synced('step 3')
  keys('3u')
  wait_for(function() return H.buffer_text(buf) == before .. 'otto between "o"\n' end, '3u to undo three steps')
  synced('3u')
  keys('3<C-R>')
  wait_for(function() local t = H.buffer_text(buf)
    return count(t, '<C1>') == 1 and count(t, 'f(1)') == 1 and count(t, '"s3"') == 1 and count(t, 'otto between "o"') == 1 end,
    '3<C-R> to redo three steps')
  synced('3<C-R>')

  -- :e! of a shared buffer shows the shared text (otto's unsaved line), not the file; a modeline
  -- in the file does not take effect.
  otto_appends('otto vim: set tabstop=3 :')
  vim.cmd('write')
  otto_appends('otto unsaved <U4>')
  vim.cmd('edit!')
  wait_for(function() return count(H.buffer_text(buf), '<U4>') == 1 end, ':e! to show the shared text')
  synced(':e!')
  check(vim.bo[buf].tabstop == 8, 'a modeline of the shared text took effect: tabstop ' .. vim.bo[buf].tabstop)
  keys('Goafter e! <E1><Esc>')
  synced('typing after :e!')
  otto_appends('otto after e! "e"')
  synced('otto after :e!')

  -- :e other and :e back without 'hidden': the buffer is unloaded, otto types meanwhile, and it
  -- comes back with the shared text.
  vim.cmd('write')
  local other = project .. '/other.txt'
  vim.fn.writefile({ 'other' }, other)
  vim.cmd('edit ' .. vim.fn.fnameescape(other))
  check(not vim.api.nvim_buf_is_loaded(buf), 'the shared buffer should be unloaded')
  otto_appends('otto while away <A5>')
  vim.cmd('buffer ' .. buf)
  wait_for(function() return count(H.buffer_text(buf), '<A5>') == 1 end, ':e back to show the shared text')
  synced(':e back')
  check(vim.bo[buf].tabstop == 8, 'a modeline took effect on :e back: tabstop ' .. vim.bo[buf].tabstop)
  keys('Goback "b" <K6><Esc>')
  synced('typing after :e back')
  otto_appends('otto after back (p)')
  synced('otto after :e back')

  -- A change made to the file outside Quire, found by checktime, arrives once, and otto's
  -- unsaved line stays.
  vim.cmd('write')
  otto_appends('otto unsaved again <U7>')
  local outside = vim.fn.readfile(path, 'b')
  table.insert(outside, #outside, 'outside h(z) <O9>')
  vim.fn.writefile(outside, path, 'b')
  vim.loop.fs_utime(path, os.time() + 100, os.time() + 100)   -- a later time, whatever the clock's grain
  vim.cmd('checktime')
  wait_for(function() return count(H.buffer_text(buf), '<O9>') == 1 end, 'the outside change to arrive')
  synced('checktime')
  text = daemon_text() or ''
  check(count(text, '<O9>') == 1 and count(text, '<U7>') == 1, 'after checktime the daemon has ' .. vim.inspect(text))
  vim.cmd('checktime')
  settle()
  check(count(daemon_text() or '', '<O9>') == 1, 'a second checktime brought the outside change again')
  vim.cmd('write')
  settle()
  pia = H.editor(socket, 'pia')
  pia.ask('document/open', { uri = 'notes.txt', text = file(), file = path })
  text = (pia.ask('document/text', { uri = 'notes.txt' }) or {}).text or ''
  check(count(text, '<O9>') == 1 and count(text, '<K6>') == 1, 'an open after checktime and :w doubled: ' .. vim.inspect(text))
  vim.fn.jobstop(pia.job)

  -- The file rewritten outside with CRLF, found by checktime (a reload keeps 'ff=unix'): no \r
  -- reaches the document, and the line added outside arrives once.
  vim.bo[buf].fileformat = 'unix'
  vim.cmd('write')
  local crlf = {}
  for _, line in ipairs(vim.fn.readfile(path)) do table.insert(crlf, line .. '\r') end
  table.insert(crlf, 'crlf outside é <W2>\r')
  table.insert(crlf, '')   -- the last line's break
  vim.fn.writefile(crlf, path, 'b')
  vim.loop.fs_utime(path, os.time() + 200, os.time() + 200)
  vim.cmd('checktime')
  wait_for(function() return count(H.buffer_text(buf), '<W2>') == 1 end, 'the outside CRLF change to arrive')
  synced('checktime after an outside CRLF write')
  text = daemon_text() or ''
  check(not text:find('\r') and count(text, '<W2>') == 1, 'after an outside CRLF write the daemon has ' .. vim.inspect(text))

  -- :saveas binds the document to the new file: still shared, and :w there is known as ours.
  -- Otto types as :saveas runs (his edit reaches the daemon before, during or after the rebind)
  -- and so was something typed here and not sent yet: both merge, nothing is asked.
  local renamed = project .. '/renamed.txt'
  local now = otto.ask('document/resync', { uri = 'notes.txt' })
  keys('Gotyped before saveas <H5> k(w)<Esc>')
  otto.tell('document/edit', { uri = 'notes.txt', epoch = now.epoch, revision = 0, changes = {
    { range = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 0 } }, text = 'otto <G7> ' } } })
  vim.cmd('saveas ' .. vim.fn.fnameescape(renamed))
  check(quire.statusline() == '[quire]', ':saveas with otto typing: ' .. quire.statusline())
  check(not H.told('holds other text'), ':saveas with otto typing asked: ' .. vim.inspect(H.said))
  wait_for(function() return count(H.buffer_text(buf), '<G7>') == 1 end, "otto's edit during :saveas")
  synced(':saveas')
  check(count(H.buffer_text(buf), '<H5> k(w)') == 1, 'typed before :saveas: ' .. vim.inspect(H.buffer_text(buf)))
  keys('Gosaved as "r" <R8><Esc>')
  synced('typing after :saveas')
  vim.cmd('write')
  settle()
  pia = H.editor(socket, 'pia')
  pia.ask('document/open', { uri = 'notes.txt', text = table.concat(vim.fn.readfile(renamed, 'b'), '\n'), file = renamed })
  text = (pia.ask('document/text', { uri = 'notes.txt' }) or {}).text or ''
  check(count(text, '<R8>') == 1 and count(text, '<O9>') == 1, 'an open with the new file after :saveas doubled: ' .. vim.inspect(text))
  vim.fn.jobstop(pia.job)
  synced('after :saveas')
  -- The undo history went on across the rebind: u takes back what was typed before :saveas
  -- (the line typed after it first), and otto's edit stays.
  keys('u')
  keys('u')
  wait_for(function() return count(H.buffer_text(buf), '<H5>') == 0 end, 'u after :saveas to take back <H5>')
  synced('u after :saveas')
  check(count(H.buffer_text(buf), '<G7>') == 1, 'u after :saveas took otto\'s edit: ' .. vim.inspect(H.buffer_text(buf)))
  keys('<C-R>')
  keys('<C-R>')
  wait_for(function() return count(H.buffer_text(buf), '<R8>') == 1 end, '<C-R> to bring back <R8>')
  synced('redo after :saveas')
  vim.cmd('write')
  settle()

  -- :bwipeout closes the document: the client forgets the buffer, otto edits on.
  vim.cmd('enew')
  vim.cmd('bwipeout! ' .. buf)
  check(quire._state(buf) == nil, ':bwipeout left the buffer shared')
  otto_appends = nil
  local now = otto.ask('document/resync', { uri = 'notes.txt' })
  check(now and count(now.text, '<R8>') == 1, 'the document after :bwipeout: ' .. vim.inspect(now))

  check(not H.told('failed') and not H.told('refused'), 'warnings: ' .. vim.inspect(H.said))
  vim.fn.jobstop(otto.job)
  quire.stop()
end

local ok, failure = pcall(run)
check(ok, 'the test stopped: ' .. tostring(failure))
H.finish()
