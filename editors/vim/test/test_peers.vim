vim9script
# Headless test of what a Vim user sees of peers: the document name of a file in a project, a
# message on listen, join, wrong secret and disconnect, the status line's peer count, listening
# again after the daemon restarts, and merging a copy of a document created separately.
# Run by editors/vim/test/run.sh.

var errors: list<string> = []
var quire = $QUIRE_BINARY
var work = fnamemodify($QUIRE_TEST_RESULT, ':h') .. '/peers'
mkdir(work, 'p')
var socket = work .. '/a.sock'
# The client's log holds every message whole (the screen shows one line of it).
g:quire_log = work .. '/client.log'

def WaitFor(Condition: func(): bool, what: string, timeout = 10000)
  var waited = 0
  while !Condition() && waited < timeout
    sleep 10m
    waited += 10
  endwhile
  if !Condition()
    add(errors, 'timed out waiting for ' .. what .. '; buffer: ' .. string(getline(1, '$')) .. '; messages: ' .. execute('messages')[-300 :])
  endif
enddef

def Daemon(arguments: list<string>, secret: string): job
  return job_start([quire] + arguments, {env: {QUIRE_SECRET: secret}, err_io: 'null', out_io: 'null', in_io: 'null'})
enddef

def StartA(): job
  var daemon = Daemon(['--no-stdio', '--socket', socket, '--data-dir', work .. '/a-data'], 'quire-nte2zzlcpiiqcach2z7c46dmmo7tj4yd6iugqs5oryajdrswjrghjlr6')
  WaitFor(() => getftype(socket) == 'socket', 'daemon A')
  return daemon
enddef

# One request to daemon A as another editor.
def AskA(method: string, params: dict<any>): any
  var probe = job_start([quire, 'attach', socket], {in_mode: 'lsp', out_mode: 'lsp', err_io: 'null', timeout: 10000})
  var channel = job_getchannel(probe)
  ch_evalexpr(channel, {method: 'initialize', params: {}})
  var reply = ch_evalexpr(channel, {method: method, params: params})
  job_stop(probe)
  return get(reply, 'result', v:null)
enddef

def Messages(): string
  return execute('messages')
enddef

runtime plugin/quire.vim
g:quire_log = $QUIRE_TEST_LOG

var a = StartA()
g:quire_command = [quire, 'attach', socket]
enew
setline(1, ['shared by vim'])
QuireShare plan.txt
add(errors, Messages() =~ 'quire: sharing "plan.txt"' ? '' : 'no message on share')
QuireListen 0
WaitFor(() => Messages() =~ 'listening for peers on port', 'the listen message')
var port = str2nr(matchstr(Messages(), 'listening for peers on port \zs\d\+'))

# A peer joins: said, and counted in the status line.
var b = Daemon(['--no-stdio', '--socket', work .. '/b.sock', '--data-dir', work .. '/b-data', '--connect', '127.0.0.1:' .. port,
  '--user-name', 'bea'], 'quire-nte2zzlcpiiqcach2z7c46dmmo7tj4yd6iugqs5oryajdrswjrghjlr6')
WaitFor(() => Messages() =~ 'quire: bea joined', 'the join message')
WaitFor(() => quire#StatusLine() == '[quire 1 peer]', 'the status line to count the peer')
# Someone with the wrong secret: said, with the reason.
var c = Daemon(['--no-stdio', '--socket', work .. '/c.sock', '--data-dir', work .. '/c-data', '--connect', '127.0.0.1:' .. port], 'quire-ncf2hmtytokixgxm4vwb4zvcxrdtzenrsvhm5obvmahgqatsycldfr45')
WaitFor(() => Messages() =~ 'authentication failed', 'the wrong-secret message')
add(errors, quire#StatusLine() == '[quire 1 peer]' ? '' : 'a failed stranger changed the count: ' .. quire#StatusLine())
job_stop(c)

# Disconnect: said in one message naming the person.
QuireDisconnect
WaitFor(() => Messages() =~ 'quire: disconnected from bea', 'the disconnect message')
WaitFor(() => Messages() =~ 'bea left (disconnected by an editor)', 'the peer to be said to have left')
WaitFor(() => quire#StatusLine() == '[quire]', 'the peer to be gone from the status line')

# The daemon restarts: the client asks it to listen on the same port again.
job_stop(a, 'kill')
WaitFor(() => job_status(a) != 'run', 'daemon A to die')
delete(socket)
a = StartA()
WaitFor(() => quire#StatusLine() == '[quire]', 'the client to reconnect')
WaitFor(() => type(AskA('peer/status', {})) == v:t_dict && AskA('peer/status', {}).listening == [port], 'listening again on ' .. port)

# A copy of plan.txt made separately on another daemon: kept apart as plan.txt#id, and merged here on request.
var other = Daemon(['--no-stdio', '--socket', work .. '/d.sock', '--data-dir', work .. '/d-data', '--user-name', 'dee'], 'quire-nte2zzlcpiiqcach2z7c46dmmo7tj4yd6iugqs5oryajdrswjrghjlr6')
WaitFor(() => getftype(work .. '/d.sock') == 'socket', 'daemon D')
var dprobe = job_start([quire, 'attach', work .. '/d.sock'], {in_mode: 'lsp', out_mode: 'lsp', err_io: 'null', timeout: 10000})
var dchannel = job_getchannel(dprobe)
ch_evalexpr(dchannel, {method: 'initialize', params: {user: {name: 'dee'}}})
ch_evalexpr(dchannel, {method: 'document/open', params: {uri: 'plan.txt', text: "dee's own plan\n"}})   # offline
ch_evalexpr(dchannel, {method: 'peer/connect', params: {port: port}})
WaitFor(() => Messages() =~ 'another document named "plan.txt"', 'the message about two documents of one name')
# The message is cut to one line (a longer one asks for ENTER); the copy's name is in the list.
var fork = matchstr(join(mapnew(AskA('document/list', {}), (_, d) => d.uri)), 'plan\.txt#\x\+')
add(errors, fork != '' ? '' : 'the message names no copy')
# Worded by the client (the daemon sends document/forked), with its own commands.
var told = join(readfile(g:quire_log), "\n")
add(errors, told =~ ':QuireMerge ' .. escape(fork, '.#') .. ' merges its text into yours' ? '' : 'the message names no :QuireMerge: ' .. told[-300 :])
# The copy is made when its name arrives; its text follows.
WaitFor(() => !empty(filter(AskA('document/list', {}), (_, d) => d.uri == fork && d.characters > 0)), 'the copy to get its text')
execute 'QuireMerge ' .. fork
WaitFor(() => getline(1, '$') == ['shared by vim', "dee's own plan"], 'the merged text')
add(errors, Messages() =~ 'merged 15 characters' ? '' : 'no message on merge')

job_stop(dprobe)
job_stop(other)
job_stop(b)
quire#Stop()
job_stop(a)
filter(errors, (_, e) => e != '')
writefile(errors, $QUIRE_TEST_RESULT)
qall!
