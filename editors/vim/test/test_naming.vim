vim9script
# The daemon names a shared file: Vim sends `document/open` with `file` and no `uri`, and the
# document is named by the file's path from its project root (the nearest directory above holding
# .git or .quire-root). Another editor opening the same file the same way joins the same
# document. Run by editors/vim/test/run.sh.

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

set hidden
runtime plugin/quire.vim

var socket = $QUIRE_TEST_SOCKET
var quire = $QUIRE_BINARY
g:quire_command = [quire, 'attach', socket]
g:quire_log = $QUIRE_TEST_LOG

# The other editor: a plain LSP channel, opening files as every client does (`file`, no `uri`).
var other = job_start([quire, 'attach', socket], {in_mode: 'lsp', out_mode: 'lsp', err_io: 'null'})
var otherChannel = job_getchannel(other)
ch_setoptions(otherChannel, {callback: (_, msg) => 0})
ch_evalexpr(otherChannel, {method: 'initialize', params: {user: {name: 'otto'}, capabilities: {general: {positionEncodings: ['utf-8']}}}})

def OtherText(uri: string): string
  var reply = ch_evalexpr(otherChannel, {method: 'document/text', params: {uri: uri}})
  return has_key(reply, 'result') ? reply.result.text : ''
enddef

var work = fnamemodify($QUIRE_TEST_RESULT, ':h') .. '/naming'
# A project marked by a .git directory, one by a .quire-root file.
mkdir(work .. '/gitproject/.git', 'p')
mkdir(work .. '/gitproject/src', 'p')
writefile(['def a():', '    return 1'], work .. '/gitproject/src/a.py')
mkdir(work .. '/rootproject/docs', 'p')
writefile([], work .. '/rootproject/.quire-root')
writefile(['plan'], work .. '/rootproject/docs/plan.txt')

# Vim shares the file: the document is named by its path from the root.
execute 'edit ' .. fnameescape(work .. '/gitproject/src/a.py')
QuireShare
var name = quire#SharedName()
add(errors, name ==# 'src/a.py' ? '' : 'file in a .git project shared as ' .. string(name))

# The other editor opens the same file by its path: it joins Vim's document, not a new one.
var opened = ch_evalexpr(otherChannel, {method: 'document/open', params: {file: work .. '/gitproject/src/a.py', text: "def a():\n    return 1\n"}})
add(errors, get(get(opened, 'result', {}), 'uri', '') ==# 'src/a.py' ? '' : 'the other editor''s open: ' .. string(opened))
add(errors, get(get(opened, 'result', {}), 'created', true) == false ? '' : 'the other editor created a new document: ' .. string(opened))
add(errors, OtherText('src/a.py') ==# "def a():\n    return 1\n" ? '' : 'the joined document holds ' .. string(OtherText('src/a.py')))
# And what one types reaches the other.
ch_evalexpr(otherChannel, {method: 'document/edit', params: {uri: 'src/a.py', epoch: opened.result.epoch, revision: 0, changes: [
  {range: {start: {line: 0, character: 0}, end: {line: 0, character: 0}}, text: '# otto' .. "\n"}]}})
WaitFor(() => getline(1) ==# '# otto', 'the other editor''s line in Vim')
append('$', '# vim')
WaitFor(() => OtherText('src/a.py') ==# "# otto\ndef a():\n    return 1\n# vim\n", 'Vim''s line in the daemon')

# A .quire-root marks a root too.
execute 'edit ' .. fnameescape(work .. '/rootproject/docs/plan.txt')
QuireShare
add(errors, quire#SharedName() ==# 'docs/plan.txt' ? '' : 'file in a .quire-root project shared as ' .. string(quire#SharedName()))

# A name given to :QuireShare is used as it is; a buffer with no file is still "buffer<n>".
enew
setline(1, 'no file')
QuireShare
add(errors, quire#SharedName() ==# 'buffer' .. bufnr() ? '' : 'a buffer with no file shared as ' .. string(quire#SharedName()))
enew
setline(1, 'named')
QuireShare chosen.txt
add(errors, quire#SharedName() ==# 'chosen.txt' ? '' : 'a named share shared as ' .. string(quire#SharedName()))

quire#Stop()
job_stop(other)
filter(errors, (_, e) => e != '')
writefile(errors, $QUIRE_TEST_RESULT)
qall!
