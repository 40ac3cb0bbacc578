vim9script
# Others' cursors stay shown, where the text they are in went, when a third person edits their
# line (setting a line removes its text properties) and when Vim itself joins lines: otto's
# cursor is drawn again after every applied edit. Run by editors/vim/test/run.sh.

var errors: list<string> = []

def WaitFor(Condition: func(): bool, what: string, timeout = 5000)
  var waited = 0
  while !Condition() && waited < timeout
    sleep 10m
    waited += 10
  endwhile
  if !Condition()
    add(errors, 'timed out waiting for ' .. what .. '; buffer: ' .. string(getline(1, '$')) .. '; cursors: ' .. string(quire#CursorsShown(bufnr())))
  endif
enddef

runtime plugin/quire.vim
var socket = $QUIRE_TEST_SOCKET
var quire = $QUIRE_BINARY
g:quire_command = [quire, 'attach', socket]
g:quire_log = $QUIRE_TEST_LOG

def Editor(name: string): channel
  var job = job_start([quire, 'attach', socket], {in_mode: 'lsp', out_mode: 'lsp', err_io: 'null', timeout: 10000})
  var ch = job_getchannel(job)
  ch_setoptions(ch, {callback: (_, msg) => 0})
  ch_evalexpr(ch, {method: 'initialize', params: {user: {name: name}, capabilities: {general: {positionEncodings: ['utf-8']}}}})
  ch_evalexpr(ch, {method: 'document/open', params: {uri: 'cursors.txt', text: ''}})
  return ch
enddef

enew
setline(1, ['first <A17>', 'otto is here f(x)', 'last "s"'])
QuireShare cursors.txt
var otto = Editor('otto')
var tess = Editor('tess')

def BufferText(): string
  return join(getline(1, '$'), "\n") .. (&eol ? "\n" : '')
enddef

def Agree(what: string)
  WaitFor(() => g:QuireTestText(tess, 'cursors.txt') == BufferText(), what .. ' to reach everyone')
enddef

# Otto's cursor on the 'f' of f(x).
ch_sendexpr(otto, {method: 'cursor/update', params: {uri: 'cursors.txt', revision: 0,
  selections: [{start: {line: 1, character: 13}, end: {line: 1, character: 13}}]}})
WaitFor(() => get(quire#CursorsShown(bufnr()), 'otto', []) == [1, 13], 'otto''s cursor')

# Where otto's cursor is drawn, as the character under it.
def OttoOn(): string
  var props = prop_list(1, {end_lnum: -1, types: ['quire_cursor']})
  return len(props) == 1 ? getline(props[0].lnum)[props[0].col - 1] .. '@' .. props[0].lnum : string(props)
enddef
add(errors, OttoOn() == 'f@2' ? '' : 'otto''s cursor drawn at ' .. OttoOn())

# Tess types on otto's line, before his cursor: the line is set again, the cursor stays on 'f'.
var tessRevision = 0
def TessTypes(line: number, character: number, text: string)
  ch_evalexpr(tess, {method: 'document/edit', params: {uri: 'cursors.txt', epoch: 0, revision: 0, changes: [
    {range: {start: {line: line, character: character}, end: {line: line, character: character}}, text: text}]}})
enddef
TessTypes(1, 5, '<T1> ')
WaitFor(() => getline(2) == 'otto <T1> is here f(x)', 'tess''s text')
WaitFor(() => OttoOn() == 'f@2', 'otto''s cursor after tess typed on his line (drawn at ' .. OttoOn() .. ')')
add(errors, get(quire#CursorsShown(bufnr()), 'otto', []) == [1, 18] ? '' : 'otto''s name mark: ' .. string(quire#CursorsShown(bufnr())))
add(errors, len(prop_list(2, {types: ['quire_name']})) == 1 ? '' : 'otto''s name: ' .. string(prop_list(2, {types: ['quire_name']})))

# Tess types after it, and on the line above: it stays.
TessTypes(1, 17, ' "t2"')
TessTypes(0, 0, "above\n")
WaitFor(() => getline(1) == 'above' && getline(3) =~ '"t2"', 'tess''s other text')
WaitFor(() => OttoOn() == 'f@3', 'otto''s cursor after tess typed after it (drawn at ' .. OttoOn() .. ')')

# Vim joins otto's line to the one above, then tess types on the joined line: still there.
feedkeys('2GJ', 'tx')
Agree('the join')
TessTypes(2, 0, 'T3 ')   # in tess's text, otto's line is still line 2
WaitFor(() => getline(2) =~ 'T3 ', 'tess''s text on the joined line')
WaitFor(() => OttoOn() == 'f@2', 'otto''s cursor on the joined line (drawn at ' .. OttoOn() .. ')')
Agree('everything')

quire#Stop()
filter(errors, (_, e) => e != '')
writefile(errors, $QUIRE_TEST_RESULT)
qall!
