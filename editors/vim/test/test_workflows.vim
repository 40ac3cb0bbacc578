vim9script
# A day's programming in Vim against a real daemon, another editor typing code-like tokens
# (<A17>, f(x), "s") it has not seen at the same moment: :e! with the other's edit in flight, u
# of a :%s over 500 lines, :retab!, << with a count, J and gJ over several lines, folds (dd of a
# closed fold), insert-mode completion, :normal with a count, . over many lines, 'fixeol' and
# 'nofixeol' saves, :saveas, :file, :wall and :argdo over several shared files. After each the
# buffer equals the daemon's text, every token is there once, and nothing was resynced.
# Run by editors/vim/test/run.sh.

var errors: list<string> = []

def WaitFor(Condition: func(): bool, what: string, timeout = 10000)
  var waited = 0
  while !Condition() && waited < timeout
    sleep 10m
    waited += 10
  endwhile
  if !Condition()
    add(errors, 'timed out waiting for ' .. what .. '; buffer: ' .. string(getline(1, 12)))
  endif
enddef

runtime plugin/quire.vim
var socket = $QUIRE_TEST_SOCKET
var quire = $QUIRE_BINARY
g:quire_command = [quire, 'attach', socket]
g:quire_log = $QUIRE_TEST_LOG
set nohidden noswapfile nomodeline

var other = job_start([quire, 'attach', socket], {in_mode: 'lsp', out_mode: 'lsp', err_io: 'null', timeout: 10000})
var otherChannel = job_getchannel(other)
ch_setoptions(otherChannel, {callback: (_, msg) => 0})
ch_evalexpr(otherChannel, {method: 'initialize', params: {user: {name: 'otto'}, capabilities: {general: {positionEncodings: ['utf-8']}}}})

var dir = fnamemodify($QUIRE_TEST_RESULT, ':h') .. '/workflows'
mkdir(dir, 'p')

def BufferText(buf = bufnr()): string
  return join(getbufline(buf, 1, '$'), "\n") .. (getbufvar(buf, '&eol') ? "\n" : '')
enddef

def Count(text: string, token: string): number
  return len(split(text, '\V' .. escape(token, '\'), 1)) - 1
enddef

# The other editor's edits, positioned in the text it opened (it applies nothing of Vim's).
# `wait`: answered before going on; else sent and left in flight.
def OtherTypes(uri: string, typed: list<list<any>>, wait: bool)
  for [line, character, text] in typed
    var params = {uri: uri, epoch: 0, revision: 0, changes: [
      {range: {start: {line: line, character: character}, end: {line: line, character: character}}, text: text}]}
    if wait
      var reply = ch_evalexpr(otherChannel, {method: 'document/edit', params: params})
      add(errors, has_key(reply, 'error') ? uri .. ': the other editor''s edit was refused: ' .. reply.error.message : '')
    else
      ch_sendexpr(otherChannel, {method: 'document/edit', params: params}, {callback: (_, reply) =>
        add(errors, has_key(reply, 'error') ? uri .. ': the other editor''s edit was refused: ' .. reply.error.message : '')})
    endif
  endfor
enddef

# The buffer `buf` and the daemon agree on `uri`; each of `tokens` is there as often as `counts`
# says (once when not said); each of `expected` (patterns) matches; nothing was resynced.
def Check(name: string, buf: number, uri: string, tokens: list<string>, expected: list<string>, counts: dict<number> = {}, rebound = false)
  WaitFor(() => g:QuireTestText(otherChannel, uri) == BufferText(buf), name .. ': the buffer and the daemon to agree (daemon: '
    .. string(g:QuireTestText(otherChannel, uri)) .. ')')
  var text = BufferText(buf)
  for token in uniq(sort(tokens + keys(counts)))
    var count = Count(text, token)
    add(errors, count == get(counts, token, 1) ? '' : name .. ': ' .. token .. ' is there ' .. count .. ' times, not '
      .. get(counts, token, 1) .. ': ' .. string(text))
  endfor
  for pattern in expected
    add(errors, text =~ pattern ? '' : name .. ': ' .. string(text) .. ' does not match ' .. pattern)
  endfor
  # A rebind (:saveas, :file) starts a new epoch; a resync is then told by the client's log.
  if !rebound
    add(errors, quire#EpochForTest(buf) == 0 ? '' : name .. ': the buffer was resynced')
  endif
  var resyncs = filter(readfile($QUIRE_TEST_LOG)[logStart :], (_, l) => l =~ 'resync')
  add(errors, empty(resyncs) ? '' : name .. ': ' .. string(resyncs))
enddef
var logStart = 0

var rows = ['row 01 <A17>', 'row 02 f(x)', '    row 03 "s"', 'row 04 <B2>', 'row 05 g(y, z)', 'b "t"', 'a <C3>', 'c']
var rowTokens = ['<A17>', 'f(x)', '"s"', '<B2>', 'g(y, z)', '"t"', '<C3>']
var cases = 0

# Shares `lines` in a file of its own, runs `Command` while the other editor types `typed` (in
# flight when `inFlight`, else answered just after the command), then checks.
def Case(name: string, lines: list<string>, Command: func, typed: list<list<any>>, expected: list<string>,
    counts: dict<number> = {}, inFlight = false, rebound = false)
  cases += 1
  logStart = filereadable($QUIRE_TEST_LOG) ? len(readfile($QUIRE_TEST_LOG)) : 0
  var path = dir .. '/case-' .. cases .. '.txt'
  writefile(lines, path)
  execute 'edit! ' .. fnameescape(path)
  QuireShare
  var uri = quire#SharedName()
  ch_evalexpr(otherChannel, {method: 'document/open', params: {uri: uri, text: ''}})
  Check(name .. ' (shared)', bufnr(), uri, [], [])
  if inFlight
    OtherTypes(uri, typed, false)
  endif
  Command()
  if !inFlight
    OtherTypes(uri, typed, true)
  endif
  var typedTokens = mapnew(typed, (_, t) => trim(t[2]))
  WaitFor(() => stridx(BufferText(), typedTokens[-1]) >= 0, name .. ': the other''s ' .. typedTokens[-1] .. ' to arrive')
  Check(name, bufnr(), uri, filter(copy(rowTokens), (_, t) => stridx(join(lines), t) >= 0) + typedTokens, expected, counts, rebound)
  ch_evalexpr(otherChannel, {method: 'document/close', params: {uri: uri}})
  set nomodified
enddef

# :e! with the other's edit on its way: the buffer shows the shared text, which has it once.
Case(':e! in flight', rows, () => {
  feedkeys("Gotyped <T1>\<Esc>", 'tx')
  edit!
}, [[1, 4, '<P1> '], [0, 0, '<P2> ']], ['^<P2> row 01 <A17>\nrow <P1> 02 f(x)\n', '\nc\ntyped <T1>\n$'], {}, true)
# u of a :%s over 500 lines, the other typing inside a changed line meanwhile.
var many = mapnew(range(1, 500), (_, i) => printf('line %03d <L%d> f(%d)', i, i, i))
Case('u of :%s over 500 lines', many, () => {
  silent :%s/f(\(\d\+\))/g[\1]/
  quire#Flush(bufnr())   # as Vim's main loop would (its timers do not run in this script's waits)
  WaitFor(() => stridx(g:QuireTestText(otherChannel, quire#SharedName()), 'g[500]') >= 0, ':%s to reach the daemon')
  OtherTypes(quire#SharedName(), [[249, 9, '<P1>']], true)
  WaitFor(() => stridx(BufferText(), '<P1>') >= 0, 'the other''s edit to arrive')
  feedkeys('u', 'tx')
  WaitFor(() => stridx(BufferText(), 'g[') < 0, 'the undo')
}, [[10, 0, '<P2> ']], ['\nline 250 <P1><L250> f(250)\n', '\n<P2> line 011 <L11> f(11)\n'], {'g[': 0, '<L250>': 1, 'f(1)': 1})
Case(':retab!', ["\tif x {", "        y <A17>;", "\t}"], () => execute('setlocal noet ts=4 sw=4 | retab! 4'),
  [[1, 8, '<P1>'], [0, 5, ' <P2>']], ['^\tif x <P2> {\n\t\t<P1>y <A17>;\n\t}\n$'])
Case('3<<', ["\t\tone <A17>", "\t\t\ttwo f(x)", "        three \"s\""], () => feedkeys('gg3<<', 'tx'),
  [[1, 3, '<P1> '], [2, 17, ' <P2>']], ['^\tone <A17>\n\t\t<P1> two f(x)\nthree "s" <P2>\n$'])
Case('4J', rows, () => feedkeys('gg4J', 'tx'), [[3, 11, ' <P1>'], [1, 0, '<P2> ']],
  ['^row 01 <A17>\( <P2> \|<P2>  \)row 02 f(x) row 03 "s" row 04 <B2> <P1>\n'])
Case('3gJ', rows, () => feedkeys('2G3gJ', 'tx'), [[2, 4, '<P1>']], ['\nrow 02 f(x)    <P1>row 03 "s"row 04 <B2>\n'])
# A closed fold deleted whole; the other typed in one of its lines and after it.
Case('dd of a closed fold', rows, () => feedkeys('2Gzf2jdd', 'tx'), [[2, 14, ' <P1>'], [4, 0, '<P2> ']],
  ['^row 01 <A17>\n', '<P2> row 05'], {'f(x)': 0, '"s"': 0, '<B2>': 0})
Case('insert-mode completion', rows, () => feedkeys("Goro\<C-N> end <N1>\<Esc>", 'tx'), [[0, 12, ' <P1>']],
  ['^row 01 <A17> <P1>\n', '\nrow end <N1>\n$'])
Case(':normal with a count', rows, () => execute(':%normal! 2A;'), [[1, 11, ' <P1>']],
  ['^row 01 <A17>;;\nrow 02 f(x)\(;; <P1>\| <P1>;;\)\n'], {';;': 8})
Case('. over many lines', many[: 99], () => feedkeys('gg0cwLINE' .. "\<Esc>" .. repeat('j0.', 99), 'tx'),
  [[50, 9, '<P1>']], ['^LINE 001 <L1> f(1)\n', '\nLINE 051 <P1><L51> f(51)\n', '\nLINE 100 <L100> f(100)\n$'],
  {'line ': 0, 'LINE ': 100})

# 'nofixeol': the last line's break removed and written so, the other typing at the end.
Case(':set nofixeol | :w', ['one <A17>', 'two f(x)'], () => {
  setlocal nofixeol noeol
  write
}, [[0, 9, ' <P1>']], ['^one <A17> <P1>\ntwo f(x)$'])
add(errors, readfile(dir .. '/case-' .. cases .. '.txt', 'b')[-1] == 'two f(x)' ? '' : ':set nofixeol: the file ends in a break')

# :w ++ff=dos (the file CRLF, the buffer still 'ff=unix'), the other types, :QuireSave writes the
# file in its CRLF, and :checktime reads it: no \r reaches the document, nothing is twice.
Case(':w ++ff=dos then :QuireSave', ['one <A17>', 'two f(x)'], () => {
  write ++ff=dos
  OtherTypes(quire#SharedName(), [[1, 0, '<P0> ']], true)
  WaitFor(() => stridx(BufferText(), '<P0>') >= 0, 'the other''s <P0>')
  QuireSave
  system('touch -d @' .. (localtime() + 100) .. ' ' .. shellescape(expand('%:p')))
  checktime
}, [[0, 9, ' <P1>']], ['^one <A17> <P1>\n<P0> two f(x)\n$'], {'<P0>': 1, "\r": 0})
# The file renamed outside while open (a `git mv`), the other typing: :checktime says it is
# gone and the buffer stays shared; :w writes it again with everything.
Case('renamed outside', rows, () => {
  rename(expand('%:p'), expand('%:p') .. '.moved')
  checktime
  feedkeys("Goafter <R1>\<Esc>", 'tx')
}, [[0, 0, '<P1> ']], ['^<P1> row 01', '\nafter <R1>\n$'], {'<R1>': 1})
write
add(errors, readfile(expand('%:p')) == getline(1, '$') ? '' : 'renamed outside: :w did not write the shared text: '
  .. string(readfile(expand('%:p'))))

# :saveas and :file with the other's edit in flight: bound to the new file, nothing lost.
Case(':saveas in flight', rows, () => execute('saveas! ' .. fnameescape(dir .. '/saved-as.txt')),
  [[0, 0, '<P1> ']], ['^<P1> row 01'], {}, true, true)
Case(':file in flight', rows, () => execute('file ' .. fnameescape(dir .. '/renamed.txt')),
  [[7, 1, ' <P1>']], ['\nc <P1>\n$'], {}, true, true)

# :argdo over three shared files, then :wall; the other typing in the second meanwhile.
set hidden
var uris: list<string> = []
var bufs: list<number> = []
for n in range(1, 3)
  var file = dir .. '/arg-' .. n .. '.txt'
  writefile(['file ' .. n .. ' old(' .. n .. ') <F' .. n .. '>', 'second line old()'], file)
  execute 'edit ' .. fnameescape(file)
  QuireShare
  add(uris, quire#SharedName())
  add(bufs, bufnr())
  ch_evalexpr(otherChannel, {method: 'document/open', params: {uri: uris[-1], text: ''}})
endfor
execute 'args ' .. join(mapnew(range(1, 3), (_, n) => fnameescape(dir .. '/arg-' .. n .. '.txt')))
OtherTypes(uris[1], [[0, 11, '<P1>'], [1, 0, '<P2> ']], false)
silent argdo :%s/old(/new(/g
for n in range(3)
  Check(':argdo ' .. n, bufs[n], uris[n], ['<F' .. (n + 1) .. '>'], ['^file ' .. (n + 1) .. ' new(\(<P1>\)\?' .. (n + 1) .. ') '], {'old(': 0})
endfor
Check(':argdo, the other''s', bufs[1], uris[1], ['<P1>', '<P2>'], ['new(<P1>2)', '\n<P2> second line new()\n$'])
wall
for n in range(3)
  add(errors, join(readfile(dir .. '/arg-' .. (n + 1) .. '.txt'), "\n") .. "\n" ==# BufferText(bufs[n]) ? ''
    : ':wall: file ' .. (n + 1) .. ' is not the buffer: ' .. string(readfile(dir .. '/arg-' .. (n + 1) .. '.txt')))
  add(errors, getbufvar(bufs[n], '&modified') ? ':wall left buffer ' .. n .. ' modified' : '')
endfor
OtherTypes(uris[2], [[0, 0, '<P3> ']], true)
for n in range(3)
  Check(':wall then the other types ' .. n, bufs[n], uris[n], ['<F' .. (n + 1) .. '>'], [])
endfor

quire#Stop()
job_stop(other)
filter(errors, (_, e) => e != '')
writefile(errors, $QUIRE_TEST_RESULT)
qall!
