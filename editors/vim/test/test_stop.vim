vim9script
# :QuireStop, then :QuireShare again in the same Vim: the stopped daemon job ending afterwards
# does not take the new connection down, and the buffer shared again stays shared: its status
# line, typing reaching the daemon, another editor's edit applied, and after the daemon is
# killed and restarted the client reconnects (it did not stay stopped). Run by
# editors/vim/test/run.sh.
runtime plugin/quire.vim

var errors: list<string> = []
var quire = $QUIRE_BINARY
var socket = $QUIRE_TEST_SOCKET .. '.stop'

def WaitFor(Condition: func(): bool, what: string, timeout = 10000)
  var waited = 0
  while !Condition() && waited < timeout
    sleep 10m
    waited += 10
  endwhile
  if !Condition()
    add(errors, 'timed out waiting for ' .. what .. '; buffer: ' .. string(getline(1, '$')) .. '; status: ' .. quire#StatusLine())
  endif
enddef

# A daemon of its own, killed and restarted below: its data directory is next to its socket.
def StartDaemon(): job
  var daemon = job_start([quire, '--no-stdio', '--socket', socket, '--data-dir', socket .. '.data'], {err_io: 'null', out_io: 'null', in_io: 'null'})
  WaitFor(() => getftype(socket) == 'socket', 'the daemon socket')
  return daemon
enddef
var daemon = StartDaemon()

g:quire_command = [quire, 'attach', socket]
g:quire_log = $QUIRE_TEST_LOG
set hidden

var other = job_start([quire, 'attach', socket], {in_mode: 'lsp', out_mode: 'lsp', err_io: 'null', timeout: 10000})
var otherChannel = job_getchannel(other)
ch_setoptions(otherChannel, {callback: (_, _) => 0})
ch_evalexpr(otherChannel, {method: 'initialize', params: {user: {name: 'otto'}, capabilities: {general: {positionEncodings: ['utf-8']}}}})

def DaemonText(uri: string): string
  var reply = ch_evalexpr(otherChannel, {method: 'document/text', params: {uri: uri}})
  return type(reply) == v:t_dict && has_key(reply, 'result') ? reply.result.text : ''
enddef

enew
setline(1, ['first <A1>'])
QuireShare stop-first.txt
WaitFor(() => quire#StatusLine() == '[quire]', 'the first share')
# The client's daemon job: every job but the other editor's.
var stopped = filter(job_info(), (_, j) => j != other && j != daemon)
add(errors, len(stopped) == 1 ? '' : 'expected one daemon job, found ' .. string(stopped))
QuireStop

enew
setline(1, ['again <B2> f(x)'])
QuireShare stop-again.txt
ch_evalexpr(otherChannel, {method: 'document/open', params: {uri: 'stop-again.txt', text: ''}})
WaitFor(() => empty(filter(copy(stopped), (_, j) => job_status(j) != 'dead')), 'the stopped daemon job to end')
feedkeys("A typed <C3>\<Esc>", 'xt')
WaitFor(() => DaemonText('stop-again.txt') == "again <B2> f(x) typed <C3>\n", 'typing after sharing again to reach the daemon')
ch_evalexpr(otherChannel, {method: 'document/edit', params: {uri: 'stop-again.txt', revision: 0,
  changes: [{range: {start: {line: 0, character: 0}, end: {line: 0, character: 0}}, text: '<O4> '}]}})
WaitFor(() => getline(1) == '<O4> again <B2> f(x) typed <C3>', 'the other editor''s edit after sharing again')
add(errors, quire#StatusLine() == '[quire]' ? '' : 'status line after sharing again: ' .. quire#StatusLine())

# Sharing again after :QuireStop reconnects after a restart of the daemon, as before the stop.
job_stop(other)
job_stop(daemon, 'kill')
WaitFor(() => job_status(daemon) != 'run', 'the daemon to die')
WaitFor(() => quire#StatusLine() == '[quire: reconnecting]', 'the client to notice')
delete(socket)
feedkeys("A away <D5>\<Esc>", 'xt')
daemon = StartDaemon()
WaitFor(() => quire#StatusLine() == '[quire]', 'the reconnect after sharing again')
other = job_start([quire, 'attach', socket], {in_mode: 'lsp', out_mode: 'lsp', err_io: 'null', timeout: 10000})
otherChannel = job_getchannel(other)
ch_setoptions(otherChannel, {callback: (_, _) => 0})
ch_evalexpr(otherChannel, {method: 'initialize', params: {user: {name: 'otto'}}})
ch_evalexpr(otherChannel, {method: 'document/open', params: {uri: 'stop-again.txt', text: ''}})
WaitFor(() => DaemonText('stop-again.txt') == "<O4> again <B2> f(x) typed <C3> away <D5>\n", 'what was typed while the daemon was away')

quire#Stop()
job_stop(other)
job_stop(daemon)
filter(errors, (_, e) => e != '')
writefile(errors, $QUIRE_TEST_RESULT)
qall!
