vim9script
# Vim's own undo commands in a shared buffer never take back what another person typed
# (protocol/client-contract.md, section 4). U, g- and g+ (counts too) go to the daemon's undo and
# redo of your own edits, as u and CTRL-R do; :undo, :undo N, :undo 0, :redo, :earlier and :later
# (counts, seconds, file writes), a plugin's normal! u and an undo file read when the file is
# opened reach only Vim's own history, which holds nothing another typed: only your edits since
# their last one. A daemon edit that comes in Insert mode leaves nothing behind once the insert
# ends. After each command the buffer equals the daemon's text and every token the other editor
# typed is there once. Run by editors/vim/test/run.sh.

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

var dir = fnamemodify($QUIRE_TEST_RESULT, ':h') .. '/own-history'
mkdir(dir, 'p')

def BufferText(): string
  return join(getline(1, '$'), "\n") .. (&eol ? "\n" : '')
enddef

def Count(text: string, token: string): number
  return len(split(text, '\V' .. escape(token, '\'), 1)) - 1
enddef

def DaemonText(): string
  return g:QuireTestText(otherChannel, quire#SharedName())
enddef

# The other editor types `text` at (line, character) of the text it opened (it applies nothing
# of Vim's, so its positions stay those of the rows), and Vim shows it.
def OtherTypes(line: number, character: number, text: string)
  var reply = ch_evalexpr(otherChannel, {method: 'document/edit', params: {uri: quire#SharedName(), epoch: 0, revision: 0,
    changes: [{range: {start: {line: line, character: character}, end: {line: line, character: character}}, text: text}]}})
  add(errors, has_key(reply, 'error') ? 'the other editor''s edit was refused: ' .. reply.error.message : '')
  WaitFor(() => stridx(BufferText(), trim(text)) >= 0, 'the other''s ' .. trim(text))
enddef

# Keys typed (mappings apply), each command its own undo block; what they changed sent.
def Type(keys: string)
  feedkeys(keys, 'tx')
  quire#Flush(bufnr())
  WaitFor(() => DaemonText() == BufferText(), 'the daemon to have ' .. strtrans(keys))
enddef

var rows = ['row 01 <A17>', 'row 02 f(x)', 'row 03 "s"']
var cases = 0

# Shares the rows from a file of their own; you append " mine1" to row 1, the other types <P1>
# at its start, you append " mine2" to row 3, and, when `otherLast`, the other types f(p) at the
# start of row 3 (so Vim's U, which puts back the last line changed, would take it). Then `Command` runs, and the buffer must equal the daemon's text,
# <P1> and f(p) be there once, and each of `expected` (patterns) match.
def Case(name: string, Command: func, expected: list<string>, otherLast = true)
  cases += 1
  var path = dir .. '/own-' .. cases .. '.txt'
  writefile(rows, path)
  execute 'edit! ' .. fnameescape(path)
  QuireShare
  ch_evalexpr(otherChannel, {method: 'document/open', params: {uri: quire#SharedName(), text: ''}})
  Type("ggA mine1\<Esc>")
  OtherTypes(0, 0, '<P1> ')
  Type("GA mine2\<Esc>")
  if otherLast
    OtherTypes(2, 0, 'f(p) ')
  endif
  try
    Command()
  catch
    add(errors, name .. ': ' .. v:exception)
  endtry
  quire#Flush(bufnr())
  WaitFor(() => DaemonText() == BufferText() && BufferText() =~ expected[0], name .. ': the buffer and the daemon to agree on '
    .. expected[0] .. ' (daemon: ' .. string(DaemonText()) .. ')')
  var text = BufferText()
  for token in ['<P1>'] + (otherLast ? ['f(p)'] : [])
    add(errors, Count(text, token) == 1 ? '' : name .. ': ' .. token .. ' is there ' .. Count(text, token) .. ' times: ' .. string(text))
  endfor
  for pattern in expected
    add(errors, text =~ pattern ? '' : name .. ': ' .. string(text) .. ' does not match ' .. pattern)
  endfor
  ch_evalexpr(otherChannel, {method: 'document/close', params: {uri: quire#SharedName()}})
  set nomodified
enddef

var mine2Undone = '^<P1> row 01 <A17> mine1\nrow 02 f(x)\nf(p) row 03 "s"\n$'
var nothingUndone = '^<P1> row 01 <A17> mine1\nrow 02 f(x)\nf(p) row 03 "s" mine2\n$'
var bothUndone = '^<P1> row 01 <A17>\nrow 02 f(x)\nf(p) row 03 "s"\n$'

# The keys: the daemon's undo and redo of your own edits.
Case('U', () => feedkeys('U', 'tx'), [mine2Undone])
Case('g-', () => feedkeys('g-', 'tx'), [mine2Undone])
Case('2g-', () => feedkeys('2g-', 'tx'), [bothUndone])
Case('g- g+', () => {
  feedkeys('g-', 'tx')
  WaitFor(() => stridx(BufferText(), 'mine2') < 0, 'g- to take back mine2')
  feedkeys('g+', 'tx')
}, [nothingUndone])
Case(':normal u (a mapping applies)', () => execute('normal u'), [mine2Undone])
add(errors, maparg('U', 'n') =~ 'quire#Undo' && maparg('g-', 'n') =~ 'quire#Undo' && maparg('g+', 'n') =~ 'quire#Redo'
  ? '' : 'U, g-, g+ are not mapped in a shared buffer: ' .. string([maparg('U', 'n'), maparg('g-', 'n'), maparg('g+', 'n')]))

# Vim's own history: the other typed last, so it holds nothing.
Case(':undo', () => execute('silent! undo'), [nothingUndone])
Case(':undo 0', () => execute('silent! undo 0'), [nothingUndone])
Case(':undo N (before the other''s edits)', () => execute('silent! undo 1'), [nothingUndone])
Case(':earlier 10', () => execute('silent! earlier 10'), [nothingUndone])
Case(':earlier 1h', () => execute('silent! earlier 1h'), [nothingUndone])
Case('normal! u (a plugin)', () => execute('silent! normal! u'), [nothingUndone])
Case('normal! 3u', () => execute('silent! normal! 3u'), [nothingUndone])
Case(':undo 0 then :later 10 and :redo', () => execute('silent! undo 0 | silent! later 10 | silent! redo'), [nothingUndone])
# You typed last: your edits since the other's reach the daemon as your edits (not others').
var mine2Gone = '^<P1> row 01 <A17> mine1\nrow 02 f(x)\nrow 03 "s"\n$'
Case(':undo 0 after your edit', () => execute('silent! undo 0'), [mine2Gone], false)
Case(':earlier 10s after your edit', () => execute('silent! earlier 10s'), [mine2Gone], false)
Case(':earlier 1f after a write', () => {
  silent write
  OtherTypes(2, 0, 'f(p) ')   # the other types after the write
  execute('silent! earlier 1f')
}, [nothingUndone], false)

# An undo file read with the file: its history is from before the share.
var undoPath = dir .. '/own-undofile.txt'
writefile(rows, undoPath)
execute 'edit! ' .. fnameescape(undoPath)
set undofile
&undodir = dir
feedkeys("ggA old1\<Esc>", 'tx')
feedkeys("ggA old2\<Esc>", 'tx')
silent write
bwipeout!
execute 'edit! ' .. fnameescape(undoPath)
add(errors, undotree().seq_last >= 2 ? '' : 'the undo file was not read: ' .. string(undotree()))
QuireShare
ch_evalexpr(otherChannel, {method: 'document/open', params: {uri: quire#SharedName(), text: ''}})
OtherTypes(0, 0, '<P1> ')
silent! undo 0
quire#Flush(bufnr())
WaitFor(() => DaemonText() == BufferText(), ':undo 0 with an undo file: the buffer and the daemon to agree')
add(errors, BufferText() =~ '^<P1> row 01 <A17> old1 old2\n' ? '' : ':undo 0 with an undo file: ' .. string(BufferText()))
set noundofile
ch_evalexpr(otherChannel, {method: 'document/close', params: {uri: quire#SharedName()}})

# A daemon edit in Insert mode: once the insert ends, Vim's history does not hold it.
var insertPath = dir .. '/own-insert.txt'
writefile(rows, insertPath)
execute 'edit! ' .. fnameescape(insertPath)
QuireShare
ch_evalexpr(otherChannel, {method: 'document/open', params: {uri: quire#SharedName(), text: ''}})
# F2 in Insert mode: the other types, and its edit comes in (a wait handles the channel) while
# Vim is still inserting.
var applied = false
def OtherTypesMidInsert()
  ch_evalexpr(otherChannel, {method: 'document/edit', params: {uri: quire#SharedName(), epoch: 0, revision: 0,
    changes: [{range: {start: {line: 1, character: 0}, end: {line: 1, character: 0}}, text: 'f(p) '}]}})
  WaitFor(() => stridx(BufferText(), 'f(p)') >= 0, 'the other''s f(p) in Insert mode')
  applied = mode() == 'i'
enddef
inoremap <buffer> <F2> <Cmd>call <SID>OtherTypesMidInsert()<CR>
feedkeys("ggA <I1>\<F2> <I2>\<Esc>", 'tx')
add(errors, applied ? '' : 'Insert mode: the other''s edit did not come in while inserting: ' .. string(BufferText()))
quire#Flush(bufnr())
WaitFor(() => DaemonText() == BufferText(), 'Insert mode: the buffer and the daemon to agree')
silent! undo 0
silent! normal! u
quire#Flush(bufnr())
WaitFor(() => DaemonText() == BufferText(), 'Insert mode, then :undo 0: the buffer and the daemon to agree')
add(errors, Count(BufferText(), 'f(p)') == 1 ? '' : 'Insert mode, then :undo 0: f(p) is gone: ' .. string(BufferText()))
# The insert is still one step of the daemon's undo.
feedkeys('u', 'tx')
WaitFor(() => stridx(BufferText(), '<I') < 0, 'u to take back the whole insert')
WaitFor(() => DaemonText() == BufferText() && Count(BufferText(), 'f(p)') == 1, 'u of the insert: f(p) kept')
ch_evalexpr(otherChannel, {method: 'document/close', params: {uri: quire#SharedName()}})
set nomodified

# The insert left by CTRL-O (its command runs with Vim's history dropped) and by CTRL-C (which has
# no InsertLeave).
for [how, keys] in [['CTRL-O', "ggA <I1>\<F2>\<C-O>:silent! undo 0\<CR> <I2>\<Esc>"], ['CTRL-C', "ggA <I1>\<F2>\<C-C>"]]
  execute 'edit! ' .. fnameescape(dir .. '/own-' .. how .. '.txt')
  setline(1, rows)
  QuireShare
  ch_evalexpr(otherChannel, {method: 'document/open', params: {uri: quire#SharedName(), text: ''}})
  inoremap <buffer> <F2> <Cmd>call <SID>OtherTypesMidInsert()<CR>
  applied = false
  feedkeys(keys, 'tx')
  add(errors, applied ? '' : how .. ': the other''s edit did not come in while inserting: ' .. string(BufferText()))
  silent! undo 0
  silent! normal! u
  quire#Flush(bufnr())
  WaitFor(() => DaemonText() == BufferText(), how .. ', then :undo 0: the buffer and the daemon to agree')
  add(errors, Count(BufferText(), 'f(p)') == 1 ? '' : how .. ', then :undo 0: f(p) is gone: ' .. string(BufferText()))
  add(errors, Count(BufferText(), '<I1>') == 1 ? '' : how .. ': <I1> is gone: ' .. string(BufferText()))
  ch_evalexpr(otherChannel, {method: 'document/close', params: {uri: quire#SharedName()}})
  set nomodified
endfor

quire#Stop()
add(errors, maparg('g-', 'n') == '' && maparg('U', 'n') == '' && maparg('g+', 'n') == '' ? '' : ':QuireStop left U, g- or g+ mapped')
job_stop(other)
filter(errors, (_, e) => e != '')
writefile(errors, $QUIRE_TEST_RESULT)
qall!
