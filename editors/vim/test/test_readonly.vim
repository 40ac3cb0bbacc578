vim9script
# Read-only documents (protocol/decisions/roles.md), against a stand-in daemon that opens every
# document read-only (editors/test/readonly_daemon.py): the buffer is 'nomodifiable', typing
# changes nothing and says why once, the daemon's edits still go in, document/readOnly makes it
# writable and read-only again, and an edit the daemon refuses brings the shared text back with
# one message. Run by editors/vim/test/run.sh.
runtime plugin/quire.vim

var errors: list<string> = []
const here = expand('<sfile>:p:h')
var dir = tempname()
mkdir(dir, 'p')
$QUIRE_FAKE_LOG = dir .. '/received'
$QUIRE_FAKE_CONTROL = dir .. '/control'
g:quire_command = ['python3', here .. '/../../test/readonly_daemon.py']
g:quire_log = $QUIRE_TEST_LOG
set hidden

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

def Expect(ok: bool, what: string)
  if !ok
    add(errors, what)
  endif
enddef

# What the stand-in daemon sends next.
def Send(message: dict<any>)
  writefile([json_encode(extend({jsonrpc: '2.0'}, message))], $QUIRE_FAKE_CONTROL, 'a')
enddef

def Told(): number
  return len(filter(split(execute('messages'), "\n"), (_, l) => l =~# 'you can read notes but not change it (role read)'))
enddef

def Received(method: string): number
  var lines = filereadable($QUIRE_FAKE_LOG) ? readfile($QUIRE_FAKE_LOG) : []
  return len(filter(lines, (_, l) => get(json_decode(l), 'method', '') == method))
enddef

enew
setline(1, ['hello world'])
QuireShare notes
var buf = bufnr()
WaitFor(() => quire#ReadOnlyForTest(buf), 'the read-only open')
Expect(!&modifiable, 'a read-only document''s buffer is nomodifiable')
Expect(quire#StatusLine() == '[quire: read-only]', 'the status line says read-only: ' .. quire#StatusLine())
Expect(Told() == 0, 'nothing said before anyone typed')

# Typing: Vim refuses (E21), and the client says why, once, however often it is tried.
for _ in range(3)
  silent! feedkeys("ityped\<Esc>", 'xt')
  quire#TriedToType()   # what SafeState runs once Vim waits for the next key
endfor
Expect(getline(1, '$') == ['hello world'], 'the buffer did not change: ' .. string(getline(1, '$')))
Expect(Told() == 1, 'said once, not per keystroke: ' .. Told())
Expect(Received('document/edit') == 0, 'no edit was sent')

# The daemon's edits still go in (following a writer).
Send({method: 'document/edit', params: {uri: 'notes', epoch: 1, revision: 0, changes: [
  {range: {start: {line: 0, character: 0}, end: {line: 0, character: 0}}, text: 'W '}]}})
WaitFor(() => getline(1) == 'W hello world', 'the writer''s edit')
Expect(!&modifiable, 'still nomodifiable after a daemon edit')

# The role changes to write: the buffer is writable; back to read: read-only again.
Send({method: 'document/readOnly', params: {uri: 'notes', readOnly: false, reason: 'you can change notes again (role write)', project: 'notes', role: 'write'}})
WaitFor(() => !quire#ReadOnlyForTest(buf) && &modifiable, 'writable again')
Expect(quire#StatusLine() == '[quire]', 'the status line no longer says read-only: ' .. quire#StatusLine())
Send({method: 'document/readOnly', params: {uri: 'notes', readOnly: true, reason: 'you can read notes but not change it (role read)', project: 'notes', role: 'read'}})
WaitFor(() => quire#ReadOnlyForTest(buf) && !&modifiable, 'read-only again')

# Typed while the role still allowed it, refused by the daemon: one message, the shared text back.
Send({method: 'document/readOnly', params: {uri: 'notes', readOnly: false, reason: 'you can change notes again (role write)', project: 'notes', role: 'write'}})
WaitFor(() => &modifiable, 'writable for the race')
var before = Told()
feedkeys("Araced\<Esc>", 'xt')
quire#Flush(buf)
feedkeys("Aagain\<Esc>", 'xt')
quire#Flush(buf)
WaitFor(() => Received('document/resync') >= 1 && getline(1) == 'hello world', 'the shared text back after the refusal')
WaitFor(() => quire#ReadOnlyForTest(buf) && !&modifiable, 'read-only after the refusal')
Expect(Told() == before + 1, 'the refusal said once: ' .. (Told() - before))

QuireStop
Expect(&modifiable, 'unshared, the buffer is modifiable again')
writefile(errors, $QUIRE_TEST_RESULT)
qall!
