vim9script
# Vim's buffer-changing commands against a real daemon while another editor types at the same
# time (its edits made without having seen Vim's): J, gJ, gq, :sort, ddp, :m, >> and :s across
# lines each reach the daemon as what they did, so the daemon's text equals the buffer, every
# token (words and code-like ones: <A17>, f(x), "s") is there once and whole, and what the other
# person typed stays next to the word they typed it at. Run by editors/vim/test/run.sh.

var errors: list<string> = []

def WaitFor(Condition: func(): bool, what: string, timeout = 5000)
  var waited = 0
  while !Condition() && waited < timeout
    sleep 10m
    waited += 10
  endwhile
  if !Condition()
    add(errors, 'timed out waiting for ' .. what .. '; buffer: ' .. string(getline(1, '$')))
  endif
enddef

runtime plugin/quire.vim
var socket = $QUIRE_TEST_SOCKET
var quire = $QUIRE_BINARY
g:quire_command = [quire, 'attach', socket]
g:quire_log = $QUIRE_TEST_LOG

var other = job_start([quire, 'attach', socket], {in_mode: 'lsp', out_mode: 'lsp', err_io: 'null', timeout: 10000})
var otherChannel = job_getchannel(other)
ch_setoptions(otherChannel, {callback: (_, msg) => 0})
ch_evalexpr(otherChannel, {method: 'initialize', params: {user: {name: 'otto'}, capabilities: {general: {positionEncodings: ['utf-8']}}}})

def DaemonText(uri: string): string
  return g:QuireTestText(otherChannel, uri)
enddef

def BufferText(): string
  return join(getline(1, '$'), "\n") .. (&eol ? "\n" : '')
enddef

var rows = ['row 01 <A17>', 'row 02 f(x)', '    row 03 "s"', 'row 04 <B2>', 'row 05 g(y, z)', 'b "t"', 'a <C3>', 'c']
var tokens = ['<A17>', 'f(x)', '"s"', '<B2>', 'g(y, z)', '"t"', '<C3>', 'é1', '日本', 'x̃', '😀', 'café', 'naïve']
# Multi-byte text: two-byte, double-width, a combining mark (x + U+0303), an emoji, a tab.
var mb = ['é1 日本 <A17>', 'x̃ 😀 f(x)', "\tcafé \"s\"", 'ÿ <B2> 日', 'naïve g(y, z)', 'end']

# The byte just after `needle` in `line` (the other editor counts in UTF-8).
def After(line: string, needle: string): number
  return stridx(line, needle) + strlen(needle)
enddef
var cases = 0

# Shares `lines` as a new document, runs `Command` in Vim while the other editor (which has not
# seen it) inserts `typed` at its own [line, character]s; then both must agree and `expected`
# (patterns) must match the text.
# `counts`: how many times a token must be there when not once (0 for one the command changed,
# 2 for one it copied).
def Case(name: string, lines: list<string>, Command: func, typed: list<list<any>>, expected: list<string>, counts: dict<number> = {})
  cases += 1
  var uri = 'commands-' .. cases .. '.txt'
  enew!
  setline(1, lines)
  execute 'QuireShare ' .. uri
  ch_evalexpr(otherChannel, {method: 'document/open', params: {uri: uri, text: join(lines, "\n") .. "\n"}})
  Command()
  # The other editor's edits, positioned in its own text (it applies nothing of Vim's): at the
  # same time as Vim's command.
  var revision = 0
  for [line, character, text] in typed
    var reply = ch_evalexpr(otherChannel, {method: 'document/edit', params: {uri: uri, epoch: 0, revision: 0, changes: [
      {range: {start: {line: line, character: character}, end: {line: line, character: character}}, text: text}]}})
    if has_key(reply, 'error')
      add(errors, name .. ': the other editor''s edit was refused: ' .. reply.error.message)
    endif
  endfor
  var typedTokens = mapnew(typed, (_, t) => trim(t[2]))
  WaitFor(() => DaemonText(uri) == BufferText() && stridx(BufferText(), typedTokens[-1]) >= 0, name .. ': the buffer and the daemon to agree')
  var text = BufferText()
  for token in uniq(sort(filter(copy(tokens), (_, t) => stridx(join(lines), t) >= 0) + typedTokens + keys(counts)))
    var count = len(split(text, '\V' .. escape(token, '\'), 1)) - 1
    if count != get(counts, token, 1)
      add(errors, name .. ': ' .. token .. ' is there ' .. count .. ' times, not ' .. get(counts, token, 1) .. ': ' .. string(text))
    endif
  endfor
  for pattern in expected
    if text !~ pattern
      add(errors, name .. ': ' .. string(text) .. ' does not match ' .. pattern)
    endif
  endfor
  add(errors, quire#EpochForTest(bufnr()) == 0 ? '' : name .. ': the buffer was resynced')
  ch_evalexpr(otherChannel, {method: 'document/close', params: {uri: uri}})
enddef

# J: what the other typed at the end of the joined line and before its first word stays there.
Case('J', rows, () => feedkeys('2GJ', 'tx'), [[2, 14, ' <P1>'], [2, 4, '<P2> ']],
  ['row 02 f(x) \?<P2> \?row 03 "s" <P1>\n'])
Case('gJ', rows, () => feedkeys('2GgJ', 'tx'), [[2, 14, ' <P1>']], ['row 02 f(x)    row 03 "s" <P1>\n'])
Case('3J', rows, () => feedkeys('2G3J', 'tx'), [[2, 14, ' <P1>'], [3, 11, ' "p2"']],
  ['row 02 f(x) row 03 "s" <P1> row 04 <B2> "p2"\n'])
# gq: the line breaks move, the words stay (and what was typed after one).
Case('gq', ['aaa bbb <A17>', 'ccc f(x) eee "s" ggg hhh <B2> iii', 'jjj'],
  () => execute('setlocal tw=14 | normal! gggqG'), [[1, 16, ' <P1>']], ['"s" <P1>'])
# ddp: the line that stays keeps what was typed on it.
Case('ddp', rows, () => feedkeys('2Gddp', 'tx'), [[2, 14, ' <P1>']], ['\n    row 03 "s" <P1>\nrow 02 f(x)\n'])
Case(':m', rows, () => execute(':2m 4'), [[3, 11, ' <P1>']], ['\nrow 04 <B2> <P1>\nrow 02 f(x)\n'])
Case(':sort', rows, () => execute(':6,8sort'), [[7, 1, ' <P1>']], ['\na <C3>\nb "t"\nc <P1>\n$'])
Case('>>', rows, () => feedkeys('2G3>>', 'tx'), [[1, 11, ' <P1>']], ['\n\trow 02 f(x) <P1>\n\t    row 03 "s"\n\trow 04'])
Case(':s across lines', rows, () => execute(':4,5s/\n/ /'), [[4, 14, ' <P1>']], ['row 04 <B2> row 05 g(y, z) <P1> b "t"\n'])

# :g over lines that move (not the indented one): each line once, the other's text once. (It
# can land in another line than the one it was typed in, which stayed: Vim sends the moves as
# one range cut to the characters that differ, and the daemon's line diff then matches no line.
# Sent as whole lines it stays, but then :sort's lines tie in the diff and commands.sh's partner
# typing at the end of a sorted line lands at the start of another: left to settle.)
Case(':g/re/m0', rows, () => execute(':g/^row/m 0'), [[5, 5, ' <P1>'], [2, 4, '<P2> ']],
  ['^row 05 g(y, z)\(<P2> \)\?\nrow 04 <B2>\nrow 02 f(x)\nrow 01 <A17>\n    \(<P2> \)\?row 03 "s"\nb "t" <P1>\na <C3>\nc\n$'])
# :t copies: the copied tokens twice, the other's word once, on the line it typed at.
Case(':t', rows, () => execute(':1,2copy $'), [[1, 11, ' <P1>']],
  ['row 02 f(x) <P1>\n    row 03', '\nc\nrow 01 <A17>\nrow 02 f(x)\n$'], {'<A17>': 2, 'f(x)': 2})
# A filter rewrites every line; the other's word, typed into a line it rewrote, stays once.
Case(':%!sort', rows, () => execute('silent :%!LC_ALL=C sort'), [[6, 6, ' <P1>']],
  ['^    row 03 "s"\n\_.*a <C3>\_.*\nb "t"\_.*\nc\_.*\nrow 01 <A17>\_.*row 05 g(y, z)'])
# :r !cmd at the break where the other types.
Case(':r !cmd', rows, () => execute("silent :3r !printf 'r1 <R1>\\nr2 日本語\\n'"), [[2, 14, ' <P1>']],
  ['    row 03 "s" <P1>\nr1 <R1>\nr2 日本語\nrow 04 <B2>\n'], {'<R1>': 1, '日本語': 1})
# Visual block $A on multi-byte lines of three lengths, the other typing at one line's end.
Case('block $A', mb, () => feedkeys("gg\<C-V>2j$A;\<Esc>", 'tx'), [[1, After(mb[1], 'f(x)'), ' <P1>']],
  ['^é1 日本 <A17>;\n', '\nx̃ 😀 f(x)\(; <P1>\| <P1>;\)\n', "\n\tcafé \"s\";\n"], {';': 3})
# Visual block c over two cells that are one double-width character, two letters, two
# multi-byte letters. (Here and in g~ below, a token typed just before a word replaced at the
# same moment can end up right after the new word: the daemon inserts the replacement after the
# character before the old word, where the other's insertion is anchored too, and the newer
# insertion comes first. Kept once and whole; where it lands is the daemon's to settle.)
Case('block c', ['ab日x <A17>', 'abcdx f(x)', 'abéex "s"'], () => feedkeys("gg0ll\<C-V>2jlcZZ\<Esc>", 'tx'),
  [[1, 0, '<P1> '], [0, strlen('ab日x <A17>'), ' <P2>']], ['^abZZx <A17> <P2>\n\(<P1> abZZx\|abZZx<P1> \) f(x)\nabZZx "s"\n$'])
# Visual block I after a combining mark, the other typing at the same place.
Case('block I', ['x̃yz <A17>', 'abc f(x)', 'ébc "s"'], () => feedkeys("gg0l\<C-V>2jI|\<Esc>", 'tx'),
  [[1, 1, '<P1>']], ['^x̃|yz <A17>\na\(|<P1>\|<P1>|\)bc f(x)\né|bc "s"\n$'])
# A macro over lines, :normal over a range, . repeated.
Case('macro', rows, () => feedkeys("ggqqA;\<Esc>jq4@q", 'tx'), [[2, 14, ' <P1>']],
  ['^row 01 <A17>;\nrow 02 f(x);\n    row 03 "s"\(; <P1>\| <P1>;\)\nrow 04 <B2>;\nrow 05 g(y, z);\nb'], {';': 5})
Case(':normal', rows, () => execute(':%normal! I# '), [[3, 0, '<P1> ']], ['^# row 01 <A17>\n', '\n\(# <P1> \|<P1> # \)row 04 <B2>\n', '\n# c\n$'], {'#': 8})
Case('.', rows, () => feedkeys("gg0cwROW\<Esc>j0.jj0.", 'tx'), [[1, 1, '<P1>']],
  ['^ROW 01 <A17>\n', '\nROW 04 <B2>\n'], {'row 01': 0, 'row 02': 0, 'row 04': 0})
# Case commands on multi-byte text: gU, g?, g~.
Case('gU', mb, () => feedkeys('gggUj', 'tx'), [[0, strlen(mb[0]), ' <P1>']],
  ['^É1 日本 <A17> <P1>\nX̃ 😀 F(X)\n'], {'é1': 0, 'x̃': 0, 'f(x)': 0, 'É1': 1, 'X̃': 1, 'F(X)': 1})
Case('g?', rows, () => feedkeys('ggg??', 'tx'), [[0, 12, ' <P1>']], ['^ebj 01 <N17> <P1>\nrow 02'], {'<A17>': 0, '<N17>': 1})
Case('g~', mb, () => feedkeys('5Gg~~', 'tx'), [[4, 0, '<P1> ']], ['\n\(<P1> NAÏVE\|NAÏVE<P1> \) G(Y, Z)\nend\n$'], {'naïve': 0, 'g(y, z)': 0})
# :retab and = rewrite indentation, the other typing after it.
Case(':retab', ["\tcafé \"s\"", "\t\tx <A17>"], () => execute('setlocal et ts=4 | retab'), [[0, strlen("\tcafé \"s\""), ' <P1>'], [1, 2, '<P2>']],
  ['^    café "s" <P1>\n        \(<P2>\)\?x <A17>\n$'])
Case('=', ['f(x) {', 'a <A17>;', '}'], () => execute('setlocal cindent ts=4 sw=4 noet | normal! gg=G'), [[1, 8, ' <P1>']],
  ['^f(x) {\n\ta <A17>; <P1>\n}\n$'])

quire#Stop()
job_stop(other)
filter(errors, (_, e) => e != '')
writefile(errors, $QUIRE_TEST_RESULT)
qall!
