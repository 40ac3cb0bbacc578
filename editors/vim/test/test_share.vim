vim9script
# Headless test of the Vim client against a real daemon: this Vim shares a buffer, a second
# editor (a raw channel to the same daemon through `quire attach`) edits it concurrently, and
# both must end with the daemon's text. Run by editors/vim/test/run.sh.

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

# The other editor: a plain LSP channel to the same daemon.
var other = job_start([quire, 'attach', socket], {in_mode: 'lsp', out_mode: 'lsp', err_io: 'null', timeout: 10000})
var otherChannel = job_getchannel(other)
var otherEdits: list<dict<any>> = []
ch_setoptions(otherChannel, {callback: (_, msg) => add(otherEdits, msg)})
ch_evalexpr(otherChannel, {method: 'initialize', params: {user: {name: 'otto'}, capabilities: {general: {positionEncodings: ['utf-8']}}}})

# Vim shares a buffer.
enew
setline(1, ['hello', 'world'])
QuireShare shared.txt
var opened = ch_evalexpr(otherChannel, {method: 'document/open', params: {uri: 'shared.txt', text: ''}})
var otherText = opened.result.changes[0].text
var status = execute('QuireStatus')
if status !~ 'documents kept in .*/quire'
  add(errors, 'QuireStatus said ' .. string(status))
endif
add(errors, otherText == "hello\nworld\n" ? '' : 'other editor saw ' .. string(otherText))
# The status line words what the daemon counted (its summary): links up and whether peers
# have everything, removed characters kept for peers, who is where; each link says whether it
# is encrypted and whose key it reached; the daemon's own key is shown.
var summary = quire#StatusSummary({sessions: 1, documents: [{uri: 'a'}], storage: v:null,
  summary: {editors: 3, documents: 2, links: 2, linksUp: 1, notYetSent: 0, removedKept: 7,
    people: [{name: 'otto', documents: ['a', 'b']}, {name: 'pia', documents: ['a']}]},
  peers: {fingerprint: 'aaaa-bbbb', documents: [{uri: 'a', tombstones: 3}, {uri: 'b', tombstones: 4}],
    links: [{link: 1, user: 'bob', address: 'tcp to h:1', state: 'established', encrypted: true, fingerprint: '3f1c-0a9e'},
            {link: 2, user: '', address: 'tcp from 10.0.0.9:4', state: 'handshaking', encrypted: false, fingerprint: v:null}]}})
add(errors, summary == 'quire: 3 editor(s), 2 document(s), 1 of 2 peer link(s) up, in sync, 7 removed character(s) kept for peers; with otto (a, b), pia (a); documents in memory only; your key aaaa-bbbb; bob established, encrypted, key 3f1c-0a9e; a peer (tcp from 10.0.0.9:4) handshaking, NOT encrypted'
  ? '' : 'status summary: ' .. summary)
summary = quire#StatusSummary({storage: v:null, summary: {editors: 1, documents: 0, links: 1, linksUp: 1, notYetSent: 12, removedKept: 0, people: []},
  peers: {fingerprint: 'aaaa', documents: [], links: [{link: 1, user: 'bob', address: 'x', state: 'established', encrypted: true, fingerprint: v:null}]}})
add(errors, summary == 'quire: 1 editor(s), 0 document(s), 1 of 1 peer link(s) up, 12 character(s) not yet with peers; documents in memory only; your key aaaa; bob established, encrypted'
  ? '' : 'status summary while behind: ' .. summary)
# The real daemon's summary: the other editor is here, in shared.txt.
add(errors, status =~ '; with otto (shared.txt);' ? '' : 'QuireStatus does not say who is where: ' .. string(status))
# No g:quire_user: the client sent no name, and the daemon named this person (git's user.name,
# $USER, or the login), which the client takes from the reply.
add(errors, quire#UserName() != '' && quire#UserName() != 'vim' ? '' : 'the name the daemon gave: ' .. string(quire#UserName()))
# The other editor's cursor shows here, with its name.
ch_sendexpr(otherChannel, {method: 'cursor/update', params: {uri: 'shared.txt', revision: 0,
  selections: [{start: {line: 1, character: 2}, end: {line: 1, character: 2}}]}})
WaitFor(() => len(prop_list(2, {types: ['quire_name']})) > 0, "the other editor's name")
var cursorProps = prop_list(2, {types: ['quire_cursor']})
add(errors, len(cursorProps) == 1 && cursorProps[0].col == 3 ? '' : 'cursor mark: ' .. string(cursorProps))
var nameProps = prop_list(2, {types: ['quire_name']})
add(errors, len(nameProps) == 1 ? '' : 'name mark: ' .. string(nameProps))
# A second update moves it: still one mark of each.
ch_sendexpr(otherChannel, {method: 'cursor/update', params: {uri: 'shared.txt', revision: 0,
  selections: [{start: {line: 0, character: 1}, end: {line: 0, character: 1}}]}})
WaitFor(() => len(prop_list(1, {types: ['quire_cursor']})) > 0, 'the moved cursor')
add(errors, len(prop_list(2, {types: ['quire_name', 'quire_cursor']})) == 0 ? '' : 'old marks left on line 2')
# A selection from line 1 into line 2 is highlighted.
ch_sendexpr(otherChannel, {method: 'cursor/update', params: {uri: 'shared.txt', revision: 0,
  selections: [{start: {line: 0, character: 2}, end: {line: 1, character: 3}}]}})
WaitFor(() => len(prop_list(1, {types: ['quire_selection']})) > 0, 'the selection')
var selected = prop_list(1, {types: ['quire_selection']})
add(errors, len(selected) == 1 && selected[0].col == 3 && prop_list(2, {types: ['quire_selection']})[0].length == 3 ? '' : 'selection marks: ' .. string(selected))

# Local typing reaches the daemon as minimal edits.
setline(1, 'hello there')
listener_flush()
WaitFor(() => g:QuireTestText(otherChannel, 'shared.txt') == "hello there\nworld\n", 'local edit to arrive')

# A remote edit lands in the buffer without being echoed back.
ch_evalexpr(otherChannel, {method: 'document/edit', params: {uri: 'shared.txt', revision: 1, changes: [
  {range: {start: {line: 1, character: 5}, end: {line: 1, character: 5}}, text: '!'}]}})
WaitFor(() => getline(2) == 'world!', 'remote edit in the buffer')
sleep 100m
var daemonText = g:QuireTestText(otherChannel, 'shared.txt')
add(errors, daemonText == "hello there\nworld!\n" ? '' : 'no echo expected, daemon has ' .. string(daemonText))

# Enter in the middle of a line here while the other editor types at its end: the typed text
# stays at the end of what is now the second line.
ch_sendexpr(otherChannel, {method: 'document/edit', params: {uri: 'shared.txt', revision: 1, changes: [
  {range: {start: {line: 0, character: 11}, end: {line: 0, character: 11}}, text: '?'}]}})
execute "normal! 1G6|i\<CR>"
listener_flush()
WaitFor(() => getline(1, '$') == ['hello', ' there?', 'world!'], 'both edits merged')
daemonText = g:QuireTestText(otherChannel, 'shared.txt')
add(errors, daemonText == join(getline(1, '$'), "\n") .. "\n" ? '' : 'buffer and daemon differ: ' .. string(daemonText))

# Non-ASCII: byte positions.
setline(3, 'wörld😀!')
listener_flush()
WaitFor(() => g:QuireTestText(otherChannel, 'shared.txt') == "hello\n there?\nwörld😀!\n", 'non-ASCII edit')

# The escape hatch: a buffer corrupted behind the client's back comes back.
quire#Resync(bufnr())
add(errors, getline(1, '$') == ['hello', ' there?', 'wörld😀!'] ? '' : 'after resync: ' .. string(getline(1, '$')))

quire#Stop()
job_stop(other)
filter(errors, (_, e) => e != '')
writefile(errors, $QUIRE_TEST_RESULT)
qall!
