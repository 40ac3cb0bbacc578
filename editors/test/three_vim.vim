vim9script
# editors/test/three.sh, Vera in Vim on daemon A: shares plan.txt, types her line, and waits to
# see everyone's line and Emma's and Nora's cursors with their names.
runtime plugin/quire.vim
var work = $QUIRE_WORK
g:quire_command = [$QUIRE_BINARY, 'attach', $QUIRE_SOCKET]
g:quire_user = 'vera'
g:quire_log = work .. '/vera.log'

def WaitFor(Condition: func(): bool, timeout = 60000)
  var waited = 0
  while !Condition() && waited < timeout
    sleep 20m
    waited += 20
  endwhile
enddef

def NamesShown(): list<string>
  return keys(quire#CursorsShown(bufnr()))
enddef

def Has(text: string): bool
  return index(getline(1, '$'), text) >= 0
enddef

enew
setline(1, ['The plan'])
QuireShare plan.txt
feedkeys("Gofrom vera\<Esc>", 'tx')
listener_flush()
quire#SendCursor(bufnr())
WaitFor(() => Has('from emma') && Has('from nora'))
cursor(1, 1)
quire#SendCursor(bufnr())
WaitFor(() => index(NamesShown(), 'emma') >= 0 && index(NamesShown(), 'nora') >= 0)
writefile(NamesShown(), work .. '/vera.names')
# Everyone stays until all have seen the others (leaving clears one's cursor).
WaitFor(() => filereadable(work .. '/emma.names') && filereadable(work .. '/nora.names'))
sleep 1
writefile(getline(1, '$'), work .. '/vera.text', &eol ? '' : 'b')
quire#Stop()
qall!
