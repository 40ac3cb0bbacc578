vim9script
# A shared buffer with a file: :w tells the daemon the file holds our text (our edits are not
# merged twice), a change made to the file outside Quire is merged into the buffer, and
# :QuireSave writes the merged text. Run by editors/vim/test/run.sh.

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

var path = tempname() .. '-notes.txt'
writefile(['first line', 'second line'], path)
execute 'edit ' .. fnameescape(path)
QuireShare

# Our edit, then our own :w.
setline(1, 'first line, edited in Vim')
listener_flush()
write
# Someone else changes the file on disk (another program, a git checkout).
writefile(['first line, edited in Vim', 'second line', 'added outside Quire'], path)

# :QuireSave merges the outside change (once) and writes the merged text.
QuireSave
WaitFor(() => getline(1, '$') == ['first line, edited in Vim', 'second line', 'added outside Quire'], 'the outside change in the buffer')
var onDisk = readfile(path)
if onDisk != ['first line, edited in Vim', 'second line', 'added outside Quire']
  add(errors, 'file after :QuireSave: ' .. string(onDisk))
endif
if &modified
  add(errors, 'the buffer is still marked modified after :QuireSave')
endif

# Vim took the rewritten file's timestamp: a later :w writes without asking.
append('$', 'after the save')
write
WaitFor(() => readfile(path) == ['first line, edited in Vim', 'second line', 'added outside Quire', 'after the save'], ':w after :QuireSave')

quire#Stop()
delete(path)
filter(errors, (_, e) => e != '')
writefile(errors, $QUIRE_TEST_RESULT)
qall!
