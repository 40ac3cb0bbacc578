vim9script
# A shared buffer's life, against a real daemon with another editor typing: unloaded by
# `:e other` (no 'hidden') and read again by `:e back` while the other typed; `:e!`, which
# shows the shared text; the file changed outside Vim and read again (checktime), whose change
# reaches the document once; and no modeline from shared text runs on any of these reloads;
# a hidden buffer shown again loses nothing; :w elsewhere leaves the binding, :saveas moves it.
# After each, the buffer equals the daemon's text, nothing anyone typed is lost, and editing
# goes on. Run by editors/vim/test/run.sh.

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
set nohidden noswapfile modeline
setglobal modeline

var other = job_start([quire, 'attach', socket], {in_mode: 'lsp', out_mode: 'lsp', err_io: 'null', timeout: 10000})
var otherChannel = job_getchannel(other)
ch_setoptions(otherChannel, {callback: (_, msg) => 0})
ch_evalexpr(otherChannel, {method: 'initialize', params: {user: {name: 'otto'}, capabilities: {general: {positionEncodings: ['utf-8']}}}})

var dir = fnamemodify($QUIRE_TEST_RESULT, ':h') .. '/lifecycle'
mkdir(dir, 'p')
var path = dir .. '/notes.txt'
var elsewhere = dir .. '/elsewhere.txt'
writefile(['one <A17>', 'two f(x)'], path)
writefile(['another file'], elsewhere)
var uri = 'notes.txt'   # set from the shared buffer below: the daemon names the file

def DaemonText(): string
  return g:QuireTestText(otherChannel, uri)
enddef

def BufferText(): string
  return join(getline(1, '$'), "\n") .. (&eol ? "\n" : '')
enddef

# The other editor types at the start of the text (a place that exists whatever it missed).
def OtherTypes(text: string)
  var reply = ch_evalexpr(otherChannel, {method: 'document/edit', params: {uri: uri, epoch: 0, revision: 0, changes: [
    {range: {start: {line: 0, character: 0}, end: {line: 0, character: 0}}, text: text}]}})
  add(errors, has_key(reply, 'error') ? 'the other editor''s edit was refused: ' .. reply.error.message : '')
  WaitFor(() => stridx(DaemonText(), text) >= 0, 'the daemon to have ' .. text)
enddef

def Agree(what: string)
  WaitFor(() => DaemonText() == BufferText(), what .. ': the buffer and the daemon to agree (daemon: ' .. string(DaemonText()) .. ')')
enddef

# Each token once in the buffer.
def Once(what: string, tokens: list<string>)
  var text = BufferText()
  for token in tokens
    var count = len(split(text, '\V' .. escape(token, '\'), 1)) - 1
    add(errors, count == 1 ? '' : what .. ': ' .. token .. ' is there ' .. count .. ' times: ' .. string(text))
  endfor
enddef

execute 'edit ' .. fnameescape(path)
var buf = bufnr()
QuireShare
uri = quire#SharedName()
ch_evalexpr(otherChannel, {method: 'document/open', params: {uri: uri, text: ''}})
write

# :e other, the other types meanwhile, :e back: the buffer shows what they typed, and typing on
# does not take it away.
execute 'edit ' .. fnameescape(elsewhere)
add(errors, bufloaded(buf) ? 'the shared buffer stayed loaded' : '')
OtherTypes("otto1 \"s\"\n")
execute 'edit ' .. fnameescape(path)
Agree(':e back')
Once(':e back', ['otto1 "s"', '<A17>', 'f(x)'])
feedkeys("Goafter e back <B2>\<Esc>", 'tx')
Agree('typing after :e back')
Once('typing after :e back', ['otto1 "s"', '<B2>'])

# :e! drops nothing shared: the buffer shows the shared text (what we and the other typed),
# not the file; a modeline the other typed does not run; the other's next edit lands right.
OtherTypes("vim: set tabstop=3 :\n")
feedkeys("Goours before e! g(y)\<Esc>", 'tx')
Agree('before :e!')
edit!
Agree(':e!')
Once(':e!', ['otto1 "s"', '<B2>', 'g(y)', 'tabstop=3'])
add(errors, &tabstop == 8 ? '' : ':e! ran a modeline from shared text: tabstop ' .. &tabstop)
OtherTypes("otto2 <C3>\n")
Agree('the other typing after :e!')
feedkeys("ggA ours after e!\<Esc>", 'tx')
Agree('typing after :e!')
Once('after :e!', ['otto1 "s"', 'otto2 <C3>', 'g(y)'])

# The file changes outside Vim while the other has typed what is not in it: read again
# (checktime), the outside change reaches the document once and the other's text stays.
write
OtherTypes("otto3 [x]\n")
writefile(readfile(path) + ['outside <D4>'], path)
checktime
Agree('checktime')
Once('checktime', ['outside <D4>', 'otto3 [x]', 'otto2 <C3>', 'g(y)'])
add(errors, &tabstop == 8 ? '' : 'checktime ran a modeline from shared text: tabstop ' .. &tabstop)
feedkeys("Goafter checktime\<Esc>", 'tx')
Agree('typing after checktime')
# A save by the daemon does not bring the outside change a second time.
QuireSave
Agree(':QuireSave')
Once(':QuireSave', ['outside <D4>', 'otto3 [x]'])
add(errors, readfile(path) == getline(1, '$') ? '' : 'file after :QuireSave: ' .. string(readfile(path)))

# With 'hidden': added, hidden and shown again before the change was sent: nothing is dropped.
set hidden
append("$", "added before hiding <E5>")
execute 'edit ' .. fnameescape(elsewhere)
execute 'edit ' .. fnameescape(path)
Agree('a change made before hiding')
Once('a change made before hiding', ['<E5>', 'outside <D4>'])
set nohidden

# :w to another file leaves the binding alone; :saveas binds the document to the new file.
var copy = dir .. '/copy.txt'
var renamed = dir .. '/renamed.txt'
execute 'write ' .. fnameescape(copy)
OtherTypes("otto4 {y}\n")
Agree('typing after :w to another file')
QuireSave
add(errors, readfile(path) == getline(1, '$') ? '' : 'the bound file after :w elsewhere and :QuireSave: ' .. string(readfile(path)))
var before = readfile(path)
# The other types right before :saveas: its edit is in the daemon but not yet in this buffer,
# and so is what was just typed here. The rebind names the view: both merge, nothing is asked.
feedkeys("Goours before saveas h(z)\<Esc>", 'tx')
OtherTypes("otto6 <G7>\n")
var inFlight = stridx(BufferText(), 'otto6 <G7>') < 0
execute 'saveas ' .. fnameescape(renamed)
add(errors, quire#StatusLine() == '[quire]' ? '' : ':saveas with an edit in flight: ' .. quire#StatusLine())
add(errors, quire#SharedName() == uri ? '' : ':saveas stopped sharing: ' .. string(quire#SharedName()))
Agree(':saveas with an edit in flight')
Once(':saveas with an edit in flight' .. (inFlight ? '' : ' (already applied)'), ['otto6 <G7>', 'h(z)'])
OtherTypes("otto5 <F6>\n")
Agree('typing after :saveas')
QuireSave
add(errors, readfile(renamed) == getline(1, '$') ? '' : 'the new file after :saveas and :QuireSave: ' .. string(readfile(renamed)))
add(errors, readfile(path) == before ? '' : 'the old file changed after :saveas: ' .. string(readfile(path)))
Once(':saveas', ['otto4 {y}', 'otto5 <F6>', 'otto6 <G7>', 'h(z)', 'outside <D4>', '<E5>'])
# The undo history went on across the rebind: u takes back what was typed before :saveas.
feedkeys('u', 'tx')
WaitFor(() => stridx(BufferText(), 'h(z)') < 0, 'u after :saveas to take back h(z)')
Agree('u after :saveas')
Once('u after :saveas', ['otto6 <G7>', 'otto5 <F6>'])

# :file gives the buffer another name without writing: the rebind comes once the command is
# over, and the document is bound to that file (:QuireSave writes there), the other typing on.
var named = dir .. '/named.txt'
execute 'file ' .. fnameescape(named)
sleep 1m   # the command is over: Vim's main loop runs the rebind's timer (a script's waits may not)
OtherTypes("otto7 <H8>\n")
Agree('typing after :file')
QuireSave
add(errors, filereadable(named) && readfile(named) == getline(1, '$') ? '' : 'the file after :file and :QuireSave: ' .. string(filereadable(named) ? readfile(named) : []))
add(errors, quire#StatusLine() == '[quire]' ? '' : ':file stopped sharing: ' .. quire#StatusLine())
Once(':file', ['otto7 <H8>', 'otto6 <G7>'])

quire#Stop()
job_stop(other)
filter(errors, (_, e) => e != '')
writefile(errors, $QUIRE_TEST_RESULT)
qall!
