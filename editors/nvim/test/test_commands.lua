-- Headless test of Neovim's buffer-changing commands against a real daemon while another
-- editor types at the same time (its edits made without having seen Neovim's), on multi-byte
-- text (two-byte, double-width, a combining mark, an emoji, a tab): plugin edits
-- (nvim_buf_set_text, nvim_buf_set_lines, vim.lsp.util.apply_text_edits in UTF-16), :g/re/m0,
-- a :%!sort filter, a visual-block $A and c, gU, :normal over a range, a macro. Each reaches
-- the daemon as what it did (no resync), the daemon's text equals the buffer, every token is
-- there once and whole (or as often as the command made it), and the on_bytes records Neovim
-- sent add up. Run by editors/nvim/test/run.sh.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/helpers.lua')
local quire = require('quire')
local check, wait_for, buffer_text, keys = H.check, H.wait_for, H.buffer_text, H.keys
local socket = vim.env.QUIRE_TEST_SOCKET

H.attach(quire, socket)
local otto = H.editor(socket, 'otto')

local rows = { 'row 01 <A17>', 'row 02 f(x)', '    row 03 "s"', 'row 04 <B2>', 'row 05 g(y, z)', 'b "t"', 'a <C3>', 'c' }
local mb = { 'é1 日本 <A17>', 'x̃ 😀 f(x)', '\tcafé "s"', 'ÿ <B2> 日', 'naïve g(y, z)', 'end' }
local tokens = { '<A17>', 'f(x)', '"s"', '<B2>', 'g(y, z)', '"t"', '<C3>', 'é1', '日本', 'x̃', '😀', 'café', 'naïve' }

-- The byte just after `needle` in `line` (otto counts in UTF-8).
local function after(line, needle) local _, last = line:find(needle, 1, true); return last end

local cases = 0
-- Shares `lines` as a new document, runs `command` while otto (who has not seen it) inserts
-- each {line, character, text} of `typed` in its own text; then the buffer and the daemon must
-- agree, each token be there once (or `counts[token]` times) and each of `expected` (Lua
-- patterns) match.
local function case(name, lines, command, typed, expected, counts)
  counts = counts or {}
  cases = cases + 1
  local uri = 'ncommands-' .. cases .. '.txt'
  vim.cmd('enew!')
  vim.api.nvim_buf_set_lines(0, 0, -1, false, lines)
  vim.cmd('QuireShare ' .. uri)
  otto.ask('document/open', { uri = uri, text = table.concat(lines, '\n') .. '\n' })
  command()
  for _, t in ipairs(typed) do
    local position = { line = t[1], character = t[2] }
    local reply = otto.request('document/edit', { uri = uri, epoch = 0, revision = 0,
      changes = { { range = { start = position, ['end'] = position }, text = t[3] } } })
    check(reply.result ~= nil, name .. ': otto\'s edit was refused: ' .. vim.inspect(reply))
  end
  local last = vim.trim(typed[#typed][3])
  local function daemon_text() return (otto.ask('document/text', { uri = uri }) or {}).text end
  wait_for(function() return daemon_text() == buffer_text() and buffer_text():find(last, 1, true) ~= nil end,
    name .. ': the buffer and the daemon to agree (daemon: ' .. vim.inspect(daemon_text()) .. ')')
  local text = buffer_text()
  H.expect_tokens(name, text, tokens, lines, typed, counts, expected)
  check(quire._epoch(0) == 0, name .. ': the buffer was resynced')
  otto.ask('document/close', { uri = uri })
end

local function set_text(sr, sc, er, ec, replacement)
  return function() vim.api.nvim_buf_set_text(0, sr, sc, er, ec, replacement) end
end

-- A plugin's nvim_buf_set_text across lines, from inside a multi-byte line to inside another.
case('nvim_buf_set_text', mb, set_text(0, after(mb[1], 'é1'), 2, after(mb[3], 'café'), { ' <N1>', 'new 日 line', 'gone' }),
  { { 3, after(mb[4], '<B2>'), ' <P1>' }, { 0, 0, '<P2> ' } },
  { '^<P2> é1 <N1>\nnew 日 line\ngone "s"\nÿ <B2> <P1> 日\n' }, { ['日本'] = 0, ['x̃'] = 0, ['😀'] = 0, ['f(x)'] = 0, ['café'] = 0, ['<A17>'] = 0, ['<N1>'] = 1 })
-- nvim_buf_set_lines: lines replaced in the middle, lines added at the end.
case('nvim_buf_set_lines', rows, function()
  vim.api.nvim_buf_set_lines(0, 2, 4, false, { 'new 03 <N3>' })
  vim.api.nvim_buf_set_lines(0, -1, -1, false, { 'tail 😀 <N4>', '' })
end, { { 4, after(rows[5], 'g(y, z)'), ' <P1>' } },
  { '\nrow 02 f%(x%)\nnew 03 <N3>\nrow 05 g%(y, z%) <P1>\n', '\nc\ntail 😀 <N4>\n\n$' }, { ['"s"'] = 0, ['<B2>'] = 0, ['<N3>'] = 1, ['<N4>'] = 1 })
-- A language server's edits: several at once, in UTF-16 (the emoji is two units), in the
-- text before any of them.
case('apply_text_edits', mb, function()
  vim.lsp.util.apply_text_edits({
    { range = { start = { line = 1, character = 3 }, ['end'] = { line = 1, character = 5 } }, newText = '🎉' },
    { range = { start = { line = 1, character = 6 }, ['end'] = { line = 1, character = 10 } }, newText = 'h(w)' },
    { range = { start = { line = 3, character = 0 }, ['end'] = { line = 5, character = 0 } }, newText = 'joined <L1>\n' },
    { range = { start = { line = 5, character = 3 }, ['end'] = { line = 5, character = 3 } }, newText = ' <L2>' },
  }, 0, 'utf-16')
end, { { 0, after(mb[1], '<A17>'), ' <P1>' } },
  { '^é1 日本 <A17> <P1>\nx̃ 🎉 h%(w%)\n\tcafé "s"\njoined <L1>\nend <L2>\n$' },
  { ['😀'] = 0, ['f(x)'] = 0, ['<B2>'] = 0, ['naïve'] = 0, ['g(y, z)'] = 0, ['<L1>'] = 1, ['<L2>'] = 1, ['🎉'] = 1 })
case(':g/re/m0', rows, function() vim.cmd('g/^row/m0') end, { { 5, 5, ' <P1>' }, { 2, 4, '<P2> ' } },
  { '^row 05 g%(y, z%)\nrow 04 <B2>\nrow 02 f%(x%)\nrow 01 <A17>\n    <P2> row 03 "s"\nb "t" <P1>\na <C3>\nc\n$' })   -- on_bytes: each move exact
case(':%!sort', rows, function() vim.cmd('silent %!LC_ALL=C sort') end, { { 6, 6, ' <P1>' } },
  { '^    row 03 "s"\n.*a <C3>.*\nb "t".*\nc.*\nrow 01 <A17>.*row 05 g%(y, z%)' })
case('block $A', mb, function() keys('gg<C-v>2j$A;<Esc>') end, { { 1, after(mb[2], 'f(x)'), ' <P1>' } },
  { '^é1 日本 <A17>;\n', '\n\tcafé "s";\n' }, { [';'] = 3 })
case('block c', { 'ab日x <A17>', 'abcdx f(x)', 'abéex "s"' }, function() keys('gg0ll<C-v>2jlcZZ<Esc>') end,
  { { 1, 0, '<P1> ' }, { 0, #'ab日x <A17>', ' <P2>' } }, { '^abZZx <A17> <P2>\n', '\nabZZx "s"\n$' })   -- <P1> once (see test_commands.vim)
case('block I', { 'x̃yz <A17>', 'abc f(x)', 'ébc "s"' }, function() keys('gg0l<C-v>2jI|<Esc>') end,
  { { 1, 1, '<P1>' } }, { '^x̃|yz <A17>\na', 'bc f%(x%)\né|bc "s"\n$' }, { ['|'] = 3 })
case('gU', mb, function() keys('gggUj') end, { { 0, #mb[1], ' <P1>' } },
  { '^É1 日本 <A17> <P1>\nX̃ 😀 F%(X%)\n' }, { ['é1'] = 0, ['x̃'] = 0, ['f(x)'] = 0, ['É1'] = 1, ['X̃'] = 1, ['F(X)'] = 1 })
case(':normal', rows, function() vim.cmd('%normal! I# ') end, { { 3, 0, '<P1> ' } },
  { '^# row 01 <A17>\n', '\n# c\n$' }, { ['#'] = 8 })
case('macro', rows, function() vim.fn.setreg('q', vim.api.nvim_replace_termcodes('A;<Esc>j', true, true, true)); keys('gg5@q') end, { { 2, 14, ' <P1>' } },
  { '^row 01 <A17>;\nrow 02 f%(x%);\n    row 03 "s"', '\nrow 04 <B2>;\nrow 05 g%(y, z%);\nb' }, { [';'] = 5 })

quire.stop()
H.finish()
