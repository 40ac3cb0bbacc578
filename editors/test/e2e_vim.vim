vim9script
# End to end, a Vim editor: as the first editor it shares a document, as the second it joins
# it through its own daemon; then it types a script while the other editor types its own,
# waits for quiet and writes its final buffer. Driven by editors/test/e2e.sh with QUIRE_ROLE
# (first or second), QUIRE_SOCKET (its daemon) and QUIRE_MARK (what it types).
runtime plugin/quire.vim
var role = $QUIRE_ROLE
var mark = $QUIRE_MARK
var work = $QUIRE_WORK
g:quire_command = [$QUIRE_BINARY, 'attach', $QUIRE_SOCKET]
g:quire_log = work .. '/' .. role .. '.log'

def WaitForFile(name: string)
  var waited = 0
  while !filereadable(work .. '/' .. name) && waited < 20000
    sleep 10m
    waited += 10
  endwhile
enddef

enew
if role == 'first'
  setline(1, ['The quick brown fox', 'jumps over the lazy dog.'])
  QuireShare e2e.txt
  writefile(['shared'], work .. '/first.ready')
  WaitForFile('second.ready')
else
  WaitForFile('first.ready')
  # Join only once the document has reached this daemon.
  var waited = 0
  quire#Start()
  while waited < 20000 && quire#DocumentNames()->index('e2e.txt') < 0
    sleep 10m
    waited += 10
  endwhile
  QuireShare e2e.txt
  writefile(['shared'], work .. '/second.ready')
endif

def Type(keys: string)
  execute 'normal! ' .. keys
  &undolevels = &undolevels   # an undo step per command, as when a person types
  listener_flush()
  sleep 15m
enddef

for i in range(20)
  Type("1GA " .. mark .. i)                # append at the end of the first line
  if i % 5 == 0
    Type("2G0i\<CR>")                    # Enter at the start of the second line
  endif
  if i % 7 == 0
    Type("GA ünï😀")                      # non-ASCII at the end
  endif
  if i % 4 == 0
    Type("1G0x")                         # delete a character
  endif
endfor
Type("1Gyy")
Type("Gp")                               # paste a line
# Type something and undo it (u goes to the daemon: only our own edit is reverted), while the
# other editor's edits keep arriving; then redo and undo once more.
Type("GA UNDONE " .. mark)
execute 'normal u'
sleep 15m
execute "normal \<C-R>"
sleep 15m
execute 'normal u'
sleep 15m

# Quiet: nothing arrives for a while.
var last = getline(1, '$')
var still = 0
while still < 1500
  sleep 100m
  if getline(1, '$') == last
    still += 100
  else
    last = getline(1, '$')
    still = 0
  endif
endwhile
writefile(getline(1, '$') + [&eol ? 'EOL' : 'NOEOL'], work .. '/' .. role .. '.vim.result')
qall!
