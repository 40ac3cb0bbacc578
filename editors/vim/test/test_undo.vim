vim9script
# u and CTRL-R in a shared buffer undo and redo only this editor's own edits: text another
# editor typed meanwhile stays. Run by editors/vim/test/run.sh.

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

var other = job_start([quire, 'attach', socket], {in_mode: 'lsp', out_mode: 'lsp', err_io: 'null'})
var otherChannel = job_getchannel(other)
ch_evalexpr(otherChannel, {method: 'initialize', params: {user: {name: 'otto'}, capabilities: {general: {positionEncodings: ['utf-8']}}}})

enew
setline(1, ['first'])
QuireShare undo.txt
ch_evalexpr(otherChannel, {method: 'document/open', params: {uri: 'undo.txt', text: ''}})

def DaemonText(): string
  return ch_evalexpr(otherChannel, {method: 'document/text', params: {uri: 'undo.txt'}}).result.text
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

quire#Stop()
job_stop(other)
filter(errors, (_, e) => e != '')
writefile(errors, $QUIRE_TEST_RESULT)
qall!
