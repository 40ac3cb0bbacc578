vim9script
# A port kept across restarts found taken: the daemon Vim starts (on a data directory where a
# project was shared before) listens on another port and says so (window/showMessage, the
# `notices` of protocol/decisions/project-sharing.md, *The port across restarts*); Vim shows it.
# Run by editors/vim/test/run.sh.

var errors: list<string> = []

def WaitFor(Condition: func(): bool, what: string, timeout = 10000)
  var waited = 0
  while !Condition() && waited < timeout
    sleep 10m
    waited += 10
  endwhile
  if !Condition()
    add(errors, 'timed out waiting for ' .. what)
  endif
enddef

def Check(ok: bool, what: string)
  if !ok
    add(errors, what)
  endif
enddef

runtime plugin/quire.vim
var quire = $QUIRE_BINARY
var base = resolve(fnamemodify(tempname(), ':p'))
$XDG_DATA_HOME = base .. '-data'
mkdir($XDG_DATA_HOME, 'p')
var log = base .. '-client.log'
g:quire_command = [quire]
g:quire_log = log
g:quire_user = 'vera'
set hidden

var dir = base .. '-project'
mkdir(dir, 'p')
writefile(['notes'], dir .. '/notes.md')
var other = base .. '-other'
mkdir(other, 'p')
writefile(['other'], other .. '/other.md')

# A daemon as an editor starts one, speaking LSP framing on its stdio.
def Start(arguments: list<string>): job
  var started = job_start([quire] + arguments, {in_mode: 'lsp', out_mode: 'lsp', err_io: 'null'})
  ch_setoptions(job_getchannel(started), {callback: (_, msg) => 0})
  ch_evalexpr(job_getchannel(started), {method: 'initialize', params: {user: {name: 'hana'}, capabilities: {general: {positionEncodings: ['utf-8']}}}}, {timeout: 10000})
  return started
enddef

def Stop(stopped: job)
  ch_evalexpr(job_getchannel(stopped), {method: 'shutdown'})
  ch_sendexpr(job_getchannel(stopped), {method: 'exit'})
  WaitFor(() => job_status(stopped) != 'run', 'a daemon of the test to exit')
enddef

def Run()
  # The folder is shared once on a port the system picks; the project keeps it.
  var first = Start([])
  var shared = ch_evalexpr(job_getchannel(first), {method: 'project/share', params: {root: dir, listen: ['127.0.0.1:0']}}, {timeout: 10000})
  var addresses = filter(copy(get(get(shared, 'result', {}), 'addresses', [])), (_, a) => a =~ '^127\.0\.0\.1:')
  Check(len(addresses) == 1, 'project/share: ' .. string(shared))
  Stop(first)
  # Another program takes that port meanwhile (a daemon of its own, sharing another folder there).
  var holder = Start(['--data-dir', base .. '-holder-data'])
  var held = ch_evalexpr(job_getchannel(holder), {method: 'project/share', params: {root: other, listen: addresses}}, {timeout: 10000})
  Check(has_key(held, 'result'), 'the port is held: ' .. string(held))

  # Vim starts its daemon on the first data directory by sharing a buffer: it says what happened.
  enew
  setline(1, 'hello')
  quire#Share('scratch')
  WaitFor(() => filereadable(log) && !empty(filter(readfile(log), (_, l) => l =~ 'is taken')), 'the notice in the client''s log')
  var said = join(filter(readfile(log), (_, l) => l =~ 'is taken'), "\n")
  Check(said =~ 'The port this project used before, ' .. addresses[0] .. ', is taken', 'the notice names the port: ' .. said)
  Check(said =~ 'partners need the new line', 'the notice says the line changed: ' .. said)
  Check(execute('messages') =~ 'quire: The port this project used before', 'shown to the person: ' .. execute('messages'))

  quire#Stop()
  Stop(holder)
enddef

try
  Run()
catch
  add(errors, 'the test stopped: ' .. v:exception .. ' at ' .. v:throwpoint)
endtry
filter(errors, (_, e) => e != '')
writefile(errors, $QUIRE_TEST_RESULT)
qall!
