vim9script
# Two Vims share a document through one daemon, which is killed (-9) and restarted from its
# data directory. The second Vim (helper_editor.vim) has an edit in flight at the crash (sent
# while the daemon was stopped, never read): it replaced <A1> by <C1>; while the daemon is away
# this Vim replaces the same <A1> by <B1> and both type a line. Both reopen with the view the
# daemon gave them (durable views): afterwards the daemon's text equals both buffers, and every
# token is there once and whole. Run by editors/vim/test/run.sh.
runtime plugin/quire.vim

var errors: list<string> = []
var here = expand('<sfile>:p:h')
var quire = $QUIRE_BINARY
var work = fnamemodify($QUIRE_TEST_RESULT, ':h') .. '/views'
mkdir(work, 'p')
var socket = work .. '/quire.sock'
var helperDir = work .. '/helper'
mkdir(helperDir, 'p')

def WaitFor(Condition: func(): bool, what: string, timeout = 15000)
  var waited = 0
  while !Condition() && waited < timeout
    sleep 10m
    waited += 10
  endwhile
  if !Condition()
    add(errors, 'timed out waiting for ' .. what .. '; buffer: ' .. string(getline(1, '$')) .. '; helper: ' .. string(Report()))
  endif
enddef

def Check(ok: bool, what: string)
  if !ok
    add(errors, what)
  endif
enddef

var daemonLog = 0
def StartDaemon(): job
  # The same data directory each time: the restarted daemon has the document and the views back.
  daemonLog += 1
  var daemon = job_start([quire, '--no-stdio', '--log-level', 'info', '--socket', socket, '--data-dir', work .. '/data'],
    {err_io: 'file', err_name: work .. '/daemon' .. daemonLog .. '.log', out_io: 'null', in_io: 'null'})
  WaitFor(() => getftype(socket) == 'socket', 'the daemon socket')
  return daemon
enddef

# The second Vim: its last report, and commands for it (each waited for).
# Vim's rename() removes the target before it renames, so the report can be missing for a
# moment while the second Vim replaces it: then the last one read stands.
var lastReport: dict<any> = {done: 0, text: '', status: ''}
def Report(): dict<any>
  try
    var lines = filereadable(helperDir .. '/report') ? readfile(helperDir .. '/report') : []
    if !empty(lines)
      lastReport = json_decode(lines[0])
    endif
  catch /E484/
  endtry
  return lastReport
enddef

var helperCommands: list<string> = []
def Helper(command: string)
  add(helperCommands, command)
  writefile(helperCommands, helperDir .. '/commands.new')
  rename(helperDir .. '/commands.new', helperDir .. '/commands')
  WaitFor(() => Report().done >= len(helperCommands), 'the second Vim to run ' .. command)
enddef

def HelperLog(): string
  return filereadable(helperDir .. '/client.log') ? join(readfile(helperDir .. '/client.log'), "\n") : ''
enddef

def Text(): string
  return quire#DocumentText(bufnr())
enddef

var daemon = StartDaemon()
g:quire_command = [quire, 'attach', socket]
g:quire_log = $QUIRE_TEST_LOG
g:quire_user = 'vera'
set hidden

enew
setline(1, ['x <A1> y', 'f(x) = "s"', '<A17> end'])
QuireShare twin.txt
var helper = job_start(['vim', '-u', 'NONE', '-i', 'NONE', '-N', '--not-a-term', '-n', '--cmd', 'set rtp^=' .. fnamemodify(here, ':h'),
  '--cmd', 'filetype off', '-S', here .. '/helper_editor.vim'],
  {env: {QUIRE_HELPER_DIR: helperDir, QUIRE_HELPER_SOCKET: socket, QUIRE_BINARY: quire}, in_io: 'null', out_io: 'null', err_io: 'null'})
Helper('QuireOpen twin.txt')
WaitFor(() => Report().text == Text(), 'the second Vim to join')

# Both edit while the daemon is up: each applies a daemon edit (its revision is 1, not 0).
append('$', 'live <C3>')
listener_flush()
WaitFor(() => Report().text =~ 'live <C3>', 'the second Vim to see this edit')
Helper('call append("$", "from hugo <D4>")')
WaitFor(() => getline('$') == 'from hugo <D4>', 'the edit of the second Vim')

# The daemon stops reading: the second Vim's next edit is sent and never answered (in flight).
var pid = job_info(daemon).process
system('kill -STOP ' .. pid)
Helper(':1s/<A1>/<C1>/')
WaitFor(() => HelperLog() =~ "sent edit 2: .*'C1'", 'the second Vim to send its edit')
system('kill -9 ' .. pid)
WaitFor(() => job_status(daemon) != 'run', 'the daemon to die')
WaitFor(() => quire#StatusLine() == '[quire: reconnecting]', 'this Vim to notice')
WaitFor(() => Report().status == '[quire: reconnecting]', 'the second Vim to notice')

# Both type while it is away: the same token replaced here too, and a line each.
:1s/<A1>/<B1>/
append('$', 'offline vera <E5>')
Helper('call append("$", "offline hugo <F6>")')
Check(Report().text =~ '<C1>' && Report().text =~ 'offline hugo <F6>', 'the second Vim: ' .. string(Report().text))

delete(socket)
daemon = StartDaemon()
WaitFor(() => quire#StatusLine() == '[quire]' && Report().status == '[quire]', 'both Vims to reopen')

# The daemon's text, through an editor that opens it once both reopened (an editor that goes
# away leaves a view behind, which must not push out the two kept for the reopens).
var probe = job_start([quire, 'attach', socket], {in_mode: 'lsp', out_mode: 'lsp', err_io: 'null', timeout: 10000})
var probeChannel = job_getchannel(probe)
ch_setoptions(probeChannel, {callback: (_, _) => 0})
ch_evalexpr(probeChannel, {method: 'initialize', params: {user: {name: 'probe'}}})
ch_evalexpr(probeChannel, {method: 'document/open', params: {uri: 'twin.txt', text: ''}})
def DaemonText(): string
  var reply = ch_evalexpr(probeChannel, {method: 'document/text', params: {uri: 'twin.txt'}})
  return type(reply) == v:t_dict && has_key(reply, 'result') ? reply.result.text : '(no answer)'
enddef
WaitFor(() => DaemonText() == Text() && Report().text == Text(), 'the daemon and both buffers to agree')
var text = DaemonText()
for token in ['x <', '> y', '<B1>', '<C1>', 'f(x)', '"s"', '<A17>', '<C3>', '<D4>', '<E5>', '<F6>', 'live ', 'from hugo ', 'offline vera ', 'offline hugo ']
  Check(count(text, token) == 1, token .. ' is there ' .. count(text, token) .. ' times: ' .. string(text))
endfor
Check(count(text, '<A1>') == 0, 'the replaced <A1> is back: ' .. string(text))
Check(len(split(text, "\n")) == 7, 'not 7 lines: ' .. string(text))

# Both reopens carried the view their open was given, at the epoch and revision they had.
var mine = filter(readfile($QUIRE_TEST_LOG), (_, l) => l =~ 'reopening twin.txt')
# No base and no pending edits: the one in flight is in the text, and the daemon knows what it read.
var sent = "sending \\['epoch', 'revision', 'text', 'uri', 'view'\\]$"
Check(len(mine) == 1 && mine[0] =~ 'with view [^( ]\+, epoch 0, revision 1, ' .. sent, 'this Vim reopened: ' .. string(mine))
var theirs = filter(split(HelperLog(), "\n"), (_, l) => l =~ 'reopening twin.txt')
Check(len(theirs) == 1 && theirs[0] =~ 'with view [^( ]\+, epoch 0, revision 1, ' .. sent, 'the second Vim reopened: ' .. string(theirs))
var restarted = readfile(work .. '/daemon2.log')
Check(len(filter(copy(restarted), (_, l) => l =~ 'the reopen resumed view')) == 2, 'the daemon did not resume both views: ' .. string(restarted[-20 :]))
Check(filereadable(helperDir .. '/errors') == 0, 'the second Vim: ' .. (filereadable(helperDir .. '/errors') ? join(readfile(helperDir .. '/errors')) : ''))

quire#Stop()
ch_sendexpr(probeChannel, {method: 'shutdown', params: {}})
job_stop(probe)
job_stop(helper, 'kill')
job_stop(daemon)
filter(errors, (_, e) => e != '')
writefile(errors, $QUIRE_TEST_RESULT)
qall!
