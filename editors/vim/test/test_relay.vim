vim9script
# Headless test of :QuireConnectRelay: Vim's daemon dials a `quire relay` that another daemon
# (which never listens either) dials too; the relay pairs them and Vim says who joined.
# Run by editors/vim/test/run.sh.

var errors: list<string> = []
var quire = $QUIRE_BINARY
var work = fnamemodify($QUIRE_TEST_RESULT, ':h') .. '/relay'
mkdir(work, 'p')
var socket = work .. '/a.sock'
var secret = 'quire-nte2zzlcpiiqcach2z7c46dmmo7tj4yd6iugqs5oryajdrswjrghjlr6'

def WaitFor(Condition: func(): bool, what: string, timeout = 10000)
  var waited = 0
  while !Condition() && waited < timeout
    sleep 10m
    waited += 10
  endwhile
  if !Condition()
    add(errors, 'timed out waiting for ' .. what .. '; messages: ' .. execute('messages')[-300 :])
  endif
enddef

def RelayPort(): number
  var lines = filereadable(work .. '/relay.log') ? readfile(work .. '/relay.log') : []
  return str2nr(matchstr(join(lines), 'quire relay: listening on 127.0.0.1:\zs\d\+'))
enddef

runtime plugin/quire.vim
g:quire_log = $QUIRE_TEST_LOG

var relay = job_start([quire, 'relay', '--listen', '127.0.0.1:0'], {err_io: 'file', err_name: work .. '/relay.log', out_io: 'null', in_io: 'null'})
WaitFor(() => RelayPort() > 0, 'the relay to listen')
var port = RelayPort()
var a = job_start([quire, '--no-stdio', '--socket', socket, '--data-dir', work .. '/a-data'],
  {env: {QUIRE_SECRET: secret}, err_io: 'null', out_io: 'null', in_io: 'null'})
WaitFor(() => getftype(socket) == 'socket', 'daemon A')
g:quire_command = [quire, 'attach', socket]
enew
setline(1, ['through the relay'])
QuireShare relayed.txt
execute 'QuireConnectRelay 127.0.0.1:' .. port
add(errors, execute('messages') =~ 'dialing the relay 127.0.0.1:' .. port ? '' : 'no message on :QuireConnectRelay')
var b = job_start([quire, '--no-stdio', '--socket', work .. '/b.sock', '--data-dir', work .. '/b-data', '--relay', '127.0.0.1:' .. port,
  '--user-name', 'bea'], {env: {QUIRE_SECRET: secret}, err_io: 'null', out_io: 'null', in_io: 'null'})
WaitFor(() => execute('messages') =~ 'quire: bea joined', 'bea to join through the relay')
WaitFor(() => quire#StatusLine() == '[quire 1 peer]', 'the status line to count the peer')

job_stop(b)
quire#Stop()
job_stop(a)
job_stop(relay)
filter(errors, (_, e) => e != '')
writefile(errors, $QUIRE_TEST_RESULT)
qall!
