vim9script
# End to end, the Vim side: share a document, type a script while the Emacs side types its
# own, then wait for quiet and write the final buffer. Driven by editors/test/e2e.sh.
runtime plugin/quire.vim
g:quire_command = [$QUIRE_BINARY, 'attach', $QUIRE_SOCKET_A]
g:quire_log = $QUIRE_WORK .. '/vim.log'

enew
setline(1, ['The quick brown fox', 'jumps over the lazy dog.'])
QuireShare e2e.txt
writefile(['shared'], $QUIRE_WORK .. '/vim.ready')

# Wait for Emacs to join (it writes emacs.ready), then type.
var waited = 0
while !filereadable($QUIRE_WORK .. '/emacs.ready') && waited < 20000
  sleep 10m
  waited += 10
endwhile

def Type(keys: string)
  execute 'normal! ' .. keys
  &undolevels = &undolevels   # an undo step per command, as when a person types
  listener_flush()
  sleep 15m
enddef

for i in range(20)
  Type("1GA v" .. i)                     # append at the end of the first line
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
# Not undo: Vim's undo would also revert remote text that landed in the undone lines (a known
# limitation of the client, see editors/vim/README.md).

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
writefile(getline(1, '$') + [&eol ? 'EOL' : 'NOEOL'], $QUIRE_WORK .. '/vim.result')
qall!
