vim9script
# Joining by opening a file: once a project is shared on the daemon running for this user
# (project/share, as `quire share` asks it), opening one of its files in Vim (:edit, by path)
# starts Vim's `quire`, which attaches to that daemon, and joins its document with no command; a
# file created in it too; a file outside it stays unshared. Run by editors/vim/test/run.sh.

var errors: list<string> = []

def WaitFor(Condition: func(): bool, what: string, timeout = 5000)
  var waited = 0
  while !Condition() && waited < timeout
    sleep 10m
    waited += 10
  endwhile
  if !Condition()
    add(errors, 'timed out waiting for ' .. what .. '; buffer ' .. bufname() .. ': ' .. string(getline(1, '$')))
  endif
enddef

def Check(ok: bool, what: string)
  if !ok
    add(errors, what)
  endif
enddef

runtime plugin/quire.vim
var quire = $QUIRE_BINARY
# A daemon of this test's own, started as an editor starts one (plain `quire`, its stdio the host
# editor's), in a data directory of its own: it listens for more editors at the data directory's
# editor socket, and Vim, which has started nothing, finds it there and attaches.
$XDG_DATA_HOME = resolve(fnamemodify(tempname(), ':p')) .. '-data'
mkdir($XDG_DATA_HOME, 'p')
g:quire_command = [quire]
g:quire_log = $QUIRE_TEST_LOG
g:quire_user = 'vera'
set hidden

var dir = resolve(fnamemodify(tempname(), ':p')) .. '-project'
mkdir(dir .. '/src', 'p')
writefile(['def greet():', '    return "hi"'], dir .. '/src/greet.py')
var outside = resolve(fnamemodify(tempname(), ':p')) .. '-outside.txt'
writefile(['not shared'], outside)

def Run()
  # The host: the daemon's first editor shares the folder, and opens greet.py as a client would.
  var hostJob = job_start([quire], {in_mode: 'lsp', out_mode: 'lsp', err_io: 'null', timeout: 10000})
  var host = job_getchannel(hostJob)
  ch_setoptions(host, {callback: (_, msg) => 0})
  ch_evalexpr(host, {method: 'initialize', params: {user: {name: 'hana'}, capabilities: {general: {positionEncodings: ['utf-8']}}}})
  var shared = ch_evalexpr(host, {method: 'project/share', params: {root: dir, listen: ['127.0.0.1:0']}}, {timeout: 10000})
  Check(has_key(shared, 'result'), 'project/share: ' .. string(shared))
  var opened = ch_evalexpr(host, {method: 'document/open', params: {file: dir .. '/src/greet.py', ifShared: true,
    text: "def greet():\n    return \"hi\"\n"}})
  var uri = get(get(opened, 'result', {}), 'uri', '')
  Check(uri =~ '^@', 'the host''s open of greet.py: ' .. string(opened))

  # Vim, with no daemon of its own yet, opens the file by path: it finds the running daemon's
  # editor socket, starts `quire` (which attaches to it) and joins the file's document.
  WaitFor(() => !empty(glob($XDG_DATA_HOME .. '/quire/editors.sock') .. glob($XDG_RUNTIME_DIR .. '/quire/editors-*.sock')),
    'the daemon''s editor socket')
  exe 'edit ' .. fnameescape(dir .. '/src/greet.py')
  Check(quire#SharedName() == uri, 'greet.py joined as "' .. quire#SharedName() .. '", the host has "' .. uri .. '"')
  ch_evalexpr(host, {method: 'document/edit', params: {uri: uri, epoch: 0, revision: 0, changes: [
    {range: {start: {line: 1, character: 11}, end: {line: 1, character: 15}}, text: '"hello"'}]}})
  WaitFor(() => getline(2) == '    return "hello"', 'the host''s edit to reach the joined buffer')

  # A file created in the project: a new file of it, joined too.
  exe 'edit ' .. fnameescape(dir .. '/src/new.py')
  Check(quire#SharedName() =~ '^@', 'a new file of the project joined as "' .. quire#SharedName() .. '"')

  # A file outside the project: left alone.
  exe 'edit ' .. fnameescape(outside)
  Check(quire#SharedName() == '', 'a file outside the project was shared as "' .. quire#SharedName() .. '"')
  var names = mapnew(g:QuireTestAsk(host, 'document/list', {}, []), (_, d) => d.uri)
  Check(empty(filter(names, (_, n) => n =~ 'outside')), 'the daemon holds a document of the outside file: ' .. string(names))

  ch_evalexpr(host, {method: 'project/stop', params: {key: shared.result.key}})
  quire#Stop()
  ch_evalexpr(host, {method: 'shutdown'})
  ch_sendexpr(host, {method: 'exit'})
  WaitFor(() => job_status(hostJob) != 'run', 'the test''s daemon to exit')
enddef

try
  Run()
catch
  add(errors, 'the test stopped: ' .. v:exception .. ' at ' .. v:throwpoint)
endtry
filter(errors, (_, e) => e != '')
writefile(errors, $QUIRE_TEST_RESULT)
qall!
