-- Headless test of sharing a buffer under a name that exists with other text (run by
-- editors/nvim/test/run.sh): the daemon changes nothing (-32017) and the client asks with
-- vim.ui.select (stubbed here); until the answer the buffer is not shared and says so. Each
-- answer ends as promised: take the shared text, merge both, keep mine apart (shared as
-- "plan.txt~nora", and from a file bound to no file, as in Vim and Emacs), and no answer (not
-- shared).
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/helpers.lua')
local quire = require('quire')
local check, wait_for, count, told = H.check, H.wait_for, H.count, H.told
local socket = vim.env.QUIRE_TEST_SOCKET
-- Keys typed one by one (each command its own undo step); a < in them is typed as is.
local function keys(text) H.keys((text:gsub('<([%w-]+)>', function(name)
  return name == 'Esc' and '<Esc>' or '<lt>' .. name .. '>' end)), 't') end

H.attach(quire, socket)

-- vim.ui.select, answered by the test.
local asked = {}
vim.ui.select = function(items, opts, on_choice)
  table.insert(asked, { items = items, opts = opts, on_choice = on_choice })
end
local function pick(question, choice)
  for _, item in ipairs(question.items) do
    if item.choice == choice then return question.on_choice(item) end
  end
  check(false, 'no choice ' .. choice .. ' offered: ' .. vim.inspect(question.items))
end

local function run()
  local otto = H.editor(socket, 'otto')
  local theirs = 'their plan <T1> f(x)\nsecond "t"\n'
  otto.ask('document/open', { uri = 'plan.txt', text = theirs })
  local function daemon_text(uri) return (otto.ask('document/text', { uri = uri or 'plan.txt' }) or {}).text end
  local function settle() quire.document_names() end   -- a request: what was sent before is handled

  -- Opens a new buffer with `lines` and shares it as plan.txt: the person is asked, nothing changes.
  local function share_mine(lines, what)
    vim.cmd('enew')
    local buf = vim.api.nvim_get_current_buf()
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    local before = daemon_text()
    local questions = #asked
    H.said = {}
    vim.cmd('QuireShare plan.txt')
    wait_for(function() return #asked == questions + 1 end, what .. ': the question')
    local question = asked[#asked] or { items = {} }
    check(#question.items == 3, what .. ': choices ' .. vim.inspect(question.items))
    check(told('not shared until you choose'), what .. ': not told the buffer is not shared: ' .. vim.inspect(H.said))
    check(quire.statusline() == '[quire: not shared, choose]', what .. ': status line ' .. quire.statusline())
    check(not told('failed'), what .. ': an error was shown: ' .. vim.inspect(H.said))
    -- Typing while the question waits is not sent, and the buffer keeps it.
    keys('Gomeanwhile <W' .. questions .. '><Esc>')
    settle()
    check(daemon_text() == before, what .. ': the document changed before the answer: ' .. vim.inspect(daemon_text()))
    return buf, question
  end

  -- Take the shared text: the buffer shows it, the document is unchanged, typing is shared.
  local buf, question = share_mine({ 'my own plan <M1> "m"' }, 'take')
  pick(question, 'take')
  wait_for(function() return H.buffer_text(buf) == theirs end, 'take: the buffer to show the shared text')
  check(daemon_text() == theirs, 'take changed the document: ' .. vim.inspect(daemon_text()))
  check(quire.statusline() == '[quire]', 'take: status line ' .. quire.statusline())
  keys('Gotaken <K1><Esc>')
  wait_for(function() return daemon_text() == H.buffer_text(buf) and count(H.buffer_text(buf), '<K1>') == 1 end, 'take: typing to be shared')
  theirs = daemon_text()
  vim.cmd('bwipeout! ' .. buf)

  -- Merge both: the shared text, then mine after a line break, in the buffer and the document.
  buf, question = share_mine({ 'mine to merge <M2> g(y)' }, 'merge')
  pick(question, 'merge')
  local mine = 'mine to merge <M2> g(y)\nmeanwhile <W1>\n'
  wait_for(function() return daemon_text() == H.buffer_text(buf) and daemon_text() == theirs .. mine end, 'merge: both texts')
  check(daemon_text() == theirs .. mine, 'merge gave ' .. vim.inspect(daemon_text()))
  keys('Gomerged <K2><Esc>')
  wait_for(function() return daemon_text() == H.buffer_text(buf) and count(daemon_text(), '<K2>') == 1 end, 'merge: typing to be shared')
  theirs = daemon_text()
  vim.cmd('bwipeout! ' .. buf)

  -- Keep mine apart: shared as plan.txt~nora, plan.txt untouched, and the person is told.
  buf, question = share_mine({ 'kept apart <M3> "k"' }, 'apart')
  pick(question, 'apart')
  local apart = 'kept apart <M3> "k"\nmeanwhile <W2>\n'
  check(quire._state(buf) and quire._state(buf).uri == 'plan.txt~nora', 'apart: shared as ' .. vim.inspect(quire._state(buf) and quire._state(buf).uri))
  wait_for(function() return told('plan.txt~nora') end, 'apart: to be told the name')
  check(daemon_text() == theirs, 'apart changed plan.txt: ' .. vim.inspect(daemon_text()))
  otto.ask('document/open', { uri = 'plan.txt~nora', text = '' })
  check(daemon_text('plan.txt~nora') == apart, 'apart: plan.txt~nora holds ' .. vim.inspect(daemon_text('plan.txt~nora')))
  check(H.buffer_text(buf) == apart, 'apart: the buffer shows ' .. vim.inspect(H.buffer_text(buf)))
  keys('Goapart <K3><Esc>')
  wait_for(function() return daemon_text('plan.txt~nora') == H.buffer_text(buf) and count(H.buffer_text(buf), '<K3>') == 1 end,
    'apart: typing to be shared')
  check(daemon_text() == theirs, 'typing apart reached plan.txt: ' .. vim.inspect(daemon_text()))
  vim.cmd('bwipeout! ' .. buf)

  -- Keep mine apart, from a file: the copy is bound to no file (the file stays the document of
  -- its name's), so the daemon cannot save it, and :w writes the file and binds nothing.
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, 'p')
  local path = dir .. '/filed.txt'
  vim.fn.writefile({ 'my filed plan <F1>' }, path)
  otto.ask('document/open', { uri = 'filed.txt', text = 'their filed plan <T2>\n' })
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  buf = vim.api.nvim_get_current_buf()
  local questions = #asked
  vim.cmd('QuireShare')
  wait_for(function() return #asked == questions + 1 end, 'apart from a file: the question')
  pick(asked[#asked], 'apart')
  local state = quire._state(buf) or {}
  check(state.uri == 'filed.txt~nora' and state.file == nil, 'apart from a file: shared as ' .. vim.inspect(state.uri) ..
    ' bound to ' .. vim.inspect(state.file))
  otto.ask('document/open', { uri = 'filed.txt~nora', text = '' })
  local function unbound(what)
    local reply = otto.request('document/save', { uri = 'filed.txt~nora' })
    check(reply.error and reply.error.code == -32602, what .. ': the copy is bound to a file: ' .. vim.inspect(reply))
  end
  unbound('apart from a file')
  keys('Goapart filed <K4><Esc>')
  wait_for(function() return daemon_text('filed.txt~nora') == H.buffer_text(buf) end, 'apart from a file: typing to be shared')
  vim.cmd('write')
  check(table.concat(vim.fn.readfile(path), '\n') == 'my filed plan <F1>\napart filed <K4>', ':w of the copy wrote ' ..
    vim.inspect(vim.fn.readfile(path)))
  unbound(':w of the copy')
  check(daemon_text('filed.txt') == 'their filed plan <T2>\n', 'apart from a file changed filed.txt: ' .. vim.inspect(daemon_text('filed.txt')))
  vim.cmd('bwipeout! ' .. buf)

  -- No answer: not shared, and said so; the buffer keeps its text.
  buf, question = share_mine({ 'never shared <M4>' }, 'no answer')
  question.on_choice(nil)
  check(quire._state(buf) == nil, 'no answer: the buffer is still shared')
  wait_for(function() return told('not shared: nothing chosen') end, 'no answer: to be told')
  check(H.buffer_text(buf) == 'never shared <M4>\nmeanwhile <W4>\n', 'no answer: the buffer shows ' .. vim.inspect(H.buffer_text(buf)))
  check(daemon_text() == theirs, 'no answer changed plan.txt: ' .. vim.inspect(daemon_text()))

  vim.fn.jobstop(otto.job)
  quire.stop()
end

local ok, failure = pcall(run)
check(ok, 'the test stopped: ' .. tostring(failure))
H.finish()
