vim9script
# Headless test of what the Vim client sends and how it follows others' edits: its cursor and
# marks move with text the other editor inserts; an insert-mode paste of several lines, :r, :g,
# a visual-block insert and a large undo all reach the daemon as edits it accepts (no resync);
# and an edit the daemon refuses is shown and resynced with the buffer's text kept.
# Run by editors/vim/test/run.sh.

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

def DaemonText(): string
  return g:QuireTestText(otherChannel, 'intent.txt')
enddef

def BufferText(): string
  return join(getline(1, '$'), "\n") .. (&eol ? "\n" : '')
enddef

def InSync(what: string)
  WaitFor(() => DaemonText() == BufferText(), what .. ' to reach the daemon')
  add(errors, quire#EpochForTest(bufnr()) == 0 ? '' : what .. ': the buffer was resynced')
enddef

enew
setline(1, ['see the world', 'two', 'three'])
QuireShare intent.txt
ch_evalexpr(otherChannel, {method: 'document/open', params: {uri: 'intent.txt', text: ''}})

# The other editor inserts before the cursor, on the cursor's line: the cursor stays on 'w'.
cursor(1, 9)
normal! ma
var otherRevision = 0
def OtherInserts(line: number, character: number, text: string)
  otherRevision += 1
  ch_evalexpr(otherChannel, {method: 'document/edit', params: {uri: 'intent.txt', revision: 0, changes: [
    {range: {start: {line: line, character: character}, end: {line: line, character: character}}, text: text}]}})
enddef
OtherInserts(0, 4, 'all of ')
WaitFor(() => getline(1) == 'see all of the world', 'the remote insertion')
add(errors, col('.') == 16 && getline('.')[col('.') - 1] == 'w' ? '' : 'cursor did not move with the text: col ' .. col('.'))
add(errors, getpos("'a")[2] == 16 ? '' : 'mark a did not move with the text: ' .. string(getpos("'a")))
# Lines inserted above move it down, still on 'w'.
OtherInserts(0, 0, "zero\nhalf ")
WaitFor(() => getline(1) == 'zero', 'the remote lines')
add(errors, line('.') == 2 && getline('.')[col('.') - 1] == 'w' ? '' : 'cursor after remote lines: ' .. string(getcurpos()))
# Typing now lands where the cursor is, not inside the other's text.
feedkeys("inew \<Esc>", 'tx')
listener_flush()
InSync('typing after remote text')
add(errors, getline(2) =~ 'the new world' ? '' : 'typed text misplaced: ' .. getline(2))

# An insert-mode paste of several lines at the end of the buffer, then typing on its last line.
setreg('p', "x\ny\nz", 'c')
feedkeys("GA\<C-R>p tail\<Esc>", 'tx')
listener_flush()
InSync('an insert-mode paste')
# Line-wise put, :r, :g, a visual-block insert, a large undo.
feedkeys("ggyy3p", 'tx')
listener_flush()
InSync('a put')
writefile(['read one', 'read two'], $QUIRE_TEST_RESULT .. '.r')
execute 'silent :2read ' .. $QUIRE_TEST_RESULT .. '.r'
listener_flush()
InSync(':read')
silent :g/read/normal! Aed
listener_flush()
InSync(':g')
silent :g/^y$/d
listener_flush()
InSync(':g with :d')
feedkeys("gg\<C-V>3jI> \<Esc>", 'tx')
listener_flush()
InSync('a visual-block insert')
# The daemon undoes this editor's own steps (u is mapped to it).
feedkeys("uuu", 'tx')
InSync('three undos')

# A refused edit (a client bug: a revision the daemon never sent) is shown and resynced, and
# what was typed is kept, and so is what the other editor typed before the resync. The resync
# sends the text with the epoch and daemon revision, no base: the daemon resolves the buffer
# against what it had sent this editor.
quire#BreakRevisionForTest(bufnr())
feedkeys("Gokept words\<Esc>", 'tx')
quire#Flush(bufnr())   # the refused edit is sent now
OtherInserts(0, 0, 'partner ')   # before this Vim reads the refusal
WaitFor(() => quire#EpochForTest(bufnr()) == 1, 'the resync after a refusal')
WaitFor(() => DaemonText() == BufferText(), 'the kept text to reach the daemon')
add(errors, getline('$') == 'kept words' ? '' : 'the typed line was lost: ' .. string(getline(1, '$')))
add(errors, getline(1) =~ '^partner ' ? '' : 'the other editor''s word was lost: ' .. string(getline(1, '$')))
add(errors, count(DaemonText(), 'kept words') == 1 && count(DaemonText(), 'partner') == 1 ? '' : 'not once each: ' .. string(DaemonText()))
add(errors, execute('messages') =~ 'refused an edit' ? '' : 'no message about the refusal')
var resyncs = filter(readfile($QUIRE_TEST_LOG), (_, l) => l =~ 'resyncing intent.txt keeping the buffer text')
add(errors, len(resyncs) == 1 && resyncs[0] =~ "sending \\['epoch', 'revision', 'text', 'uri'\\]$" ? '' : 'the resync sent: ' .. string(resyncs))
feedkeys("A and more\<Esc>", 'tx')
listener_flush()
WaitFor(() => DaemonText() == BufferText(), 'editing after the resync')

# Vim's own combined line range is wrong after a paste; the replayed changes are exact.
var region = quire#ChangedRegion([{lnum: 2, end: 3, added: -1, col: 1}, {lnum: 4, end: 4, added: 1, col: 1}])
add(errors, region == [2, 5, 5] ? '' : 'changed region: ' .. string(region))

quire#Stop()
job_stop(other)
filter(errors, (_, e) => e != '')
writefile(errors, $QUIRE_TEST_RESULT)
qall!
