vim9script
# The daemon under Vim is killed (-9) and restarts from its data directory: the client reopens
# the shared buffer with its view, epoch and revision and no base, and what was typed while the
# daemon was away merges into the kept text.
runtime plugin/quire.vim

var errors: list<string> = []
var quire = $QUIRE_BINARY
var socket = $QUIRE_TEST_SOCKET .. '.reconnect'

def WaitFor(Condition: func(): bool, what: string, timeout = 10000)
  var waited = 0
  while !Condition() && waited < timeout
    sleep 10m
    waited += 10
  endwhile
  if !Condition()
    add(errors, 'timed out waiting for ' .. what .. '; buffer: ' .. string(getline(1, '$')))
  endif
enddef

var daemonLogs = 0
def StartDaemon(): job
  # The same data directory each time: the restarted daemon has the document back from disk.
  daemonLogs += 1
  var daemon = job_start([quire, '--no-stdio', '--log-level', 'info', '--socket', socket, '--data-dir', socket .. '.data'],
    {err_io: 'file', err_name: socket .. '.daemon' .. daemonLogs .. '.log', out_io: 'null', in_io: 'null'})
  WaitFor(() => getftype(socket) == 'socket', 'the daemon socket')
  return daemon
enddef

def DaemonText(): string
  var probe = job_start([quire, 'attach', socket], {in_mode: 'lsp', out_mode: 'lsp', err_io: 'null', timeout: 10000})
  var channel = job_getchannel(probe)
  ch_evalexpr(channel, {method: 'initialize', params: {}})
  var documents = ch_evalexpr(channel, {method: 'document/list', params: {}})
  var text = ''
  if type(documents) == v:t_dict && !empty(get(documents, 'result', []))
    ch_evalexpr(channel, {method: 'document/open', params: {uri: 'kept.txt', text: ''}})
    text = g:QuireTestText(channel, 'kept.txt')
    # Closed, so that the probe leaves no view behind: the daemon keeps at most 8 views of a
    # document whose editors went away, and probing while Vim reconnects must not push out Vim's.
    ch_evalexpr(channel, {method: 'document/close', params: {uri: 'kept.txt'}})
  endif
  job_stop(probe)
  return text
enddef

var daemon = StartDaemon()
g:quire_command = [quire, 'attach', socket]
g:quire_log = $QUIRE_TEST_LOG
enew
setline(1, ['kept', 'across restarts'])
QuireShare kept.txt
WaitFor(() => DaemonText() == "kept\nacross restarts\n", 'the first daemon to have the text')

job_stop(daemon, 'kill')
# Typed at once, before the client noticed: sent towards a daemon that is gone, never
# acknowledged, so the reopen merges it.
append('$', 'typed while the daemon was away')
listener_flush()
WaitFor(() => job_status(daemon) != 'run', 'the daemon to die')
WaitFor(() => quire#StatusLine() == '[quire: reconnecting]', 'the client to notice')
delete(socket)
append('$', 'and more once it noticed')
daemon = StartDaemon()
WaitFor(() => DaemonText() == "kept\nacross restarts\ntyped while the daemon was away\nand more once it noticed\n", 'the reopened document')

# The reopen named the view and where the buffer was in it, and sent no base: the daemon keeps
# what this editor saw.
var reopens = filter(readfile($QUIRE_TEST_LOG), (_, l) => l =~ 'reopening kept.txt')
add(errors, len(reopens) == 1 && reopens[0] =~ "with view [^( ]\\+, epoch 0, revision 0, sending \\['epoch', 'revision', 'text', 'uri', 'view'\\]$"
  ? '' : 'the reopen sent: ' .. string(reopens))

# Editing goes on as before.
setline(1, 'kept!')
listener_flush()
WaitFor(() => DaemonText() == "kept!\nacross restarts\ntyped while the daemon was away\nand more once it noticed\n", 'an edit after the reconnect')

quire#Stop()
job_stop(daemon)
filter(errors, (_, e) => e != '')
writefile(errors, $QUIRE_TEST_RESULT)
qall!
