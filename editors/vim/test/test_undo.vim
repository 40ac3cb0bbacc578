vim9script
# u and CTRL-R in a shared buffer undo and redo only this editor's own edits: text another
# editor typed meanwhile stays. Once the buffer is no longer shared (a reread refused with
# -32017, :QuireStop) they are Vim's own again (maparg), in the current buffer, one in another
# window and a hidden one. Run by editors/vim/test/run.sh.

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
ch_evalexpr(otherChannel, {method: 'initialize', params: {user: {name: 'otto'}, capabilities: {general: {positionEncodings: ['utf-8']}}}})

enew
setline(1, ['first'])
QuireShare undo.txt
ch_evalexpr(otherChannel, {method: 'document/open', params: {uri: 'undo.txt', text: ''}})

def DaemonText(): string
  return g:QuireTestText(otherChannel, 'undo.txt')
enddef

# Two undo blocks of ours, typed as keys.
feedkeys("A mine\<Esc>", 'xt')
feedkeys("oline two\<Esc>", 'xt')
listener_flush()
WaitFor(() => DaemonText() == "first mine\nline two\n", 'our typing in the daemon (it has ' .. string(DaemonText()) .. ')')
# The other editor types at the start of the first line.
ch_evalexpr(otherChannel, {method: 'document/edit', params: {uri: 'undo.txt', epoch: 0, revision: 0,
  changes: [{range: {start: {line: 0, character: 0}, end: {line: 0, character: 0}}, text: 'OTTO '}]}})
WaitFor(() => getline(1) == 'OTTO first mine', 'the other editor''s text')

normal u
WaitFor(() => getline(1, '$') == ['OTTO first mine'], 'undo of our second block only')
normal u
WaitFor(() => getline(1, '$') == ['OTTO first'], 'undo of our first block, the other''s text kept')
execute "normal \<C-R>"
WaitFor(() => getline(1, '$') == ['OTTO first mine'], 'redo')
WaitFor(() => DaemonText() == "OTTO first mine\n", 'the daemon to agree')

# u and CTRL-R go to the daemon only while the buffer is shared: afterwards they are Vim's own
# again, in the current buffer, in one shown in another window, and in a hidden one.
def UndoMapped(): bool
  return maparg('u', 'n') =~ 'quire#Undo' && maparg('<C-R>', 'n') =~ 'quire#Redo'
enddef
def Unmapped(what: string)
  add(errors, maparg('u', 'n') == '' ? '' : what .. ': u is still mapped to ' .. maparg('u', 'n'))
  add(errors, maparg('<C-R>', 'n') == '' ? '' : what .. ': CTRL-R is still mapped to ' .. maparg('<C-R>', 'n'))
enddef
add(errors, UndoMapped() ? '' : 'u and CTRL-R are not mapped in a shared buffer: ' .. string(maparg('u', 'n')))
var first = bufnr()
set hidden

# A buffer read again whose reopen the daemon refuses (-32017: the document is now bound to
# another file and holds other text) is not shared while the person is asked: u is Vim's.
var dir = fnamemodify($QUIRE_TEST_RESULT, ':h') .. '/undo-maps'
mkdir(dir, 'p')
var path = dir .. '/mine.txt'
writefile(['mine <M1>'], path)
execute 'edit ' .. fnameescape(path)
QuireShare refused-undo.txt
add(errors, UndoMapped() ? '' : 'u and CTRL-R are not mapped in the file''s shared buffer')
# The other editor binds the document to its own file and types what the file here lacks.
ch_evalexpr(otherChannel, {method: 'document/open', params: {uri: 'refused-undo.txt', text: '', file: dir .. '/theirs.txt'}})
ch_evalexpr(otherChannel, {method: 'document/edit', params: {uri: 'refused-undo.txt', epoch: 0, revision: 0,
  changes: [{range: {start: {line: 1, character: 0}, end: {line: 1, character: 0}}, text: "theirs <T1>\n"}]}})
WaitFor(() => getline(1, '$') == ['mine <M1>', 'theirs <T1>'], 'the other editor''s line')
edit!
add(errors, quire#StatusLine() =~ 'NOT shared' ? '' : 'the refused reread did not ask: ' .. string(quire#StatusLine()))
Unmapped('a reread refused with -32017')
for popup in popup_list()
  popup_close(popup, -1)
endfor

execute 'buffer ' .. first
enew
setline(1, ['hidden <H1>'])
QuireShare hidden-undo.txt
add(errors, UndoMapped() ? '' : 'u and CTRL-R are not mapped in the second shared buffer')
var hidden = bufnr()
execute 'buffer ' .. first
split
enew
setline(1, ['shown <S1>'])
QuireShare shown-undo.txt
var shown = bufnr()
wincmd p   # the first buffer is current, the third is in the other window, the second hidden
add(errors, bufnr() == first && bufwinid(shown) != -1 && bufwinid(hidden) == -1 ? '' : 'the buffers are not placed as the test needs')
QuireStop
Unmapped(':QuireStop, the current buffer')
wincmd p
Unmapped(':QuireStop, a buffer in another window')
execute 'buffer ' .. hidden
Unmapped(':QuireStop, a hidden buffer')
# Vim's own undo works there again.
feedkeys("A changed\<Esc>", 'xt')
feedkeys('u', 'xt')
add(errors, getline(1, '$') == ['hidden <H1>'] ? '' : 'u after :QuireStop did not undo: ' .. string(getline(1, '$')))
only

job_stop(other)
filter(errors, (_, e) => e != '')
writefile(errors, $QUIRE_TEST_RESULT)
qall!
