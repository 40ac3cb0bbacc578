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
  return ch_evalexpr(otherChannel, {method: 'document/text', params: {uri: uri}}).result.text
enddef

def BufferText(): string
  return join(getline(1, '$'), "\n") .. (&eol ? "\n" : '')
enddef

var rows = ['row 01 <A17>', 'row 02 f(x)', '    row 03 "s"', 'row 04 <B2>', 'row 05 g(y, z)', 'b "t"', 'a <C3>', 'c']
var tokens = ['<A17>', 'f(x)', '"s"', '<B2>', 'g(y, z)', '"t"', '<C3>']
var cases = 0

# Shares `lines` as a new document, runs `Command` in Vim while the other editor (which has not
# seen it) inserts `typed` at its own [line, character]s; then both must agree and `expected`
# (patterns) must match the text.
def Case(name: string, lines: list<string>, Command: func, typed: list<list<any>>, expected: list<string>)
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
  for token in filter(copy(tokens), (_, t) => stridx(join(lines), t) >= 0) + typedTokens
    var count = len(split(text, '\V' .. escape(token, '\'), 1)) - 1
    if count != 1
      add(errors, name .. ': ' .. token .. ' is there ' .. count .. ' times: ' .. string(text))
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

quire#Stop()
job_stop(other)
filter(errors, (_, e) => e != '')
writefile(errors, $QUIRE_TEST_RESULT)
qall!
