vim9script
# Opening a buffer with other text under a name the daemon already holds (-32017, Document
# differs): the daemon changes nothing, the buffer is not shared and says so, and a menu asks
# the person. Each answer ends as promised: take (the buffer shows the shared text), merge (the
# shared text, then the buffer's), apart (a new document "<uri>~<user>" with the buffer's text,
# the shared one untouched; from a file, bound to no file). The answer is given through g:quire_test_conflict_answer, which
# closes the menu with that choice once it is up. Run by editors/vim/test/run.sh.
runtime plugin/quire.vim

var errors: list<string> = []
var quire = $QUIRE_BINARY
var socket = $QUIRE_TEST_SOCKET

def WaitFor(Condition: func(): bool, what: string, timeout = 10000)
  var waited = 0
  while !Condition() && waited < timeout
    sleep 10m
    waited += 10
  endwhile
  if !Condition()
    add(errors, 'timed out waiting for ' .. what .. '; buffer: ' .. string(getline(1, '$')) .. '; messages: ' .. execute('messages')[-300 :])
  endif
enddef

def Check(ok: bool, what: string)
  if !ok
    add(errors, what)
  endif
enddef

# The other editor: a plain LSP channel to the same daemon, which created the documents.
var other = job_start([quire, 'attach', socket], {in_mode: 'lsp', out_mode: 'lsp', err_io: 'null', timeout: 10000})
var otherChannel = job_getchannel(other)
ch_setoptions(otherChannel, {callback: (_, _) => 0})
ch_evalexpr(otherChannel, {method: 'initialize', params: {user: {name: 'otto'}, capabilities: {general: {positionEncodings: ['utf-8']}}}})

def DaemonText(uri: string): string
  var reply = ch_evalexpr(otherChannel, {method: 'document/text', params: {uri: uri}})
  if type(reply) != v:t_dict || !has_key(reply, 'result')
    # Not open in the other editor yet (the apart copy): open it without text of its own.
    ch_evalexpr(otherChannel, {method: 'document/open', params: {uri: uri, text: ''}})
    reply = ch_evalexpr(otherChannel, {method: 'document/text', params: {uri: uri}})
  endif
  return type(reply) == v:t_dict && has_key(reply, 'result') ? reply.result.text : '(no such document)'
enddef

def Names(): list<string>
  var reply = ch_evalexpr(otherChannel, {method: 'document/list', params: {}})
  return mapnew(get(reply, 'result', []), (_, d) => d.uri)
enddef

# The conflict menus up (not the notifications that show long messages whole).
def Menus(): list<number>
  return filter(popup_list(), (_, id) => get(popup_getoptions(id), 'title', '') =~ 'already shared')
enddef

g:quire_command = [quire, 'attach', socket]
g:quire_log = $QUIRE_TEST_LOG
g:quire_user = 'vera'
set hidden laststatus=2 statusline=%{quire#StatusLine()}

var shared = "x <A1> y\nf(x) = \"s\"\n"
var mine = ['mine <B2>', 'g(y)']

# One round: the other editor holds `uri` with `shared`; this Vim shares a buffer showing
# `mine` under that name and answers `answer`.
def Round(uri: string, answer: string)
  ch_evalexpr(otherChannel, {method: 'document/open', params: {uri: uri, text: shared}})
  enew
  setline(1, mine)
  g:quire_test_conflict_answer = answer
  execute 'QuireShare ' .. uri
  # The menu is up (its answer comes from a timer): nothing is shared, and the buffer says so.
  Check(quire#StatusLine() == '[quire: NOT shared, choose]', answer .. ': status line before the answer: ' .. string(quire#StatusLine()))
  Check(len(Menus()) == 1, answer .. ': no menu: ' .. string(Menus()))
  Check(DaemonText(uri) == shared, answer .. ': the daemon changed ' .. uri .. ' before the answer: ' .. string(DaemonText(uri)))
  Check(getline(1, '$') == mine, answer .. ': the buffer changed before the answer: ' .. string(getline(1, '$')))
  WaitFor(() => quire#StatusLine() == '[quire]', answer .. ': the buffer to be shared')
  Check(empty(Menus()), answer .. ': the menu is still up')
  unlet g:quire_test_conflict_answer
enddef

# 1. Take: the buffer shows the shared text, which is unchanged.
Round('take.txt', 'take')
WaitFor(() => getline(1, '$') == ['x <A1> y', 'f(x) = "s"'], 'take: the shared text in the buffer')
Check(DaemonText('take.txt') == shared, 'take: the daemon has ' .. string(DaemonText('take.txt')))
Check(execute('messages') =~ 'took the shared text of "take.txt"', 'take: no message that the shared text was taken')
# And the buffer is shared from then on.
setline(1, 'x <A1> y z')
listener_flush()
WaitFor(() => DaemonText('take.txt') == "x <A1> y z\nf(x) = \"s\"\n", 'take: an edit after taking')

# 2. Merge: the shared text, then the buffer's, in the buffer and in the daemon.
Round('merge.txt', 'merge')
var merged = ['x <A1> y', 'f(x) = "s"', 'mine <B2>', 'g(y)']
WaitFor(() => getline(1, '$') == merged, 'merge: the shared text then mine in the buffer')
Check(DaemonText('merge.txt') == join(merged, "\n") .. "\n", 'merge: the daemon has ' .. string(DaemonText('merge.txt')))
# The merge is one undo step of this editor's.
quire#Undo(bufnr())
WaitFor(() => getline(1, '$') == ['x <A1> y', 'f(x) = "s"'], 'merge: u to take the merged text back')

# 3. Apart: a new document "apart.txt~vera" with the buffer's text; apart.txt is untouched.
Round('apart.txt', 'apart')
WaitFor(() => index(Names(), 'apart.txt~vera') >= 0, 'apart: the document apart.txt~vera')
Check(getline(1, '$') == mine, 'apart: the buffer changed: ' .. string(getline(1, '$')))
Check(DaemonText('apart.txt~vera') == join(mine, "\n") .. "\n", 'apart: apart.txt~vera has ' .. string(DaemonText('apart.txt~vera')))
Check(DaemonText('apart.txt') == shared, 'apart: apart.txt changed: ' .. string(DaemonText('apart.txt')))
Check(execute('messages') =~ 'shared apart as "apart.txt\~vera"', 'apart: the person was not told the name')
setline(1, 'mine <B2>!')
listener_flush()
WaitFor(() => DaemonText('apart.txt~vera') == "mine <B2>!\ng(y)\n", 'apart: an edit of the apart copy')
Check(DaemonText('apart.txt') == shared, 'apart: apart.txt changed after an edit: ' .. string(DaemonText('apart.txt')))

# 3b. Apart, from a file: the copy is bound to no file, as in Neovim and Emacs (the file stays
# the document of its name's): the daemon cannot save it, and :w writes the file and binds nothing.
var dir = fnamemodify($QUIRE_TEST_RESULT, ':h') .. '/conflict'
mkdir(dir, 'p')
var path = dir .. '/filed.txt'
writefile(['my filed plan <F1>'], path)
ch_evalexpr(otherChannel, {method: 'document/open', params: {uri: 'filed.txt', text: shared}})
execute 'edit ' .. fnameescape(path)
g:quire_test_conflict_answer = 'apart'
QuireShare filed.txt
WaitFor(() => quire#StatusLine() == '[quire]', 'apart from a file: the buffer to be shared')
unlet g:quire_test_conflict_answer
def Unbound(what: string)
  DaemonText('filed.txt~vera')   # opens it in the other editor
  var reply = ch_evalexpr(otherChannel, {method: 'document/save', params: {uri: 'filed.txt~vera'}})
  Check(get(get(reply, 'error', {}), 'code', 0) == -32602, what .. ': the copy is bound to a file: ' .. string(reply))
enddef
Unbound('apart from a file')
append('$', 'apart filed <K4>')
listener_flush()
WaitFor(() => DaemonText('filed.txt~vera') == "my filed plan <F1>\napart filed <K4>\n", 'apart from a file: an edit of the copy')
write
Check(readfile(path) == ['my filed plan <F1>', 'apart filed <K4>'], ':w of the copy wrote ' .. string(readfile(path)))
Unbound(':w of the copy')
Check(DaemonText('filed.txt') == shared, 'apart from a file: filed.txt changed: ' .. string(DaemonText('filed.txt')))

# 4. Dismissed (Esc): the buffer stays unshared and says how to be asked again.
ch_evalexpr(otherChannel, {method: 'document/open', params: {uri: 'dismissed.txt', text: shared}})
enew
setline(1, mine)
QuireShare dismissed.txt
Check(len(Menus()) == 1, 'dismiss: no menu')
popup_close(Menus()[0], -1)
Check(quire#StatusLine() == '', 'dismiss: status line ' .. string(quire#StatusLine()))
Check(execute('messages') =~ '"dismissed.txt" is not shared in this buffer', 'dismiss: not told')
Check(DaemonText('dismissed.txt') == shared, 'dismiss: the daemon changed dismissed.txt')

# 5. The menu's keys: "m" merges at once.
QuireShare dismissed.txt
Check(len(Menus()) == 1, 'keys: no menu')
feedkeys('m', 'xt')
WaitFor(() => quire#StatusLine() == '[quire]', 'keys: the buffer to be shared after "m"')
WaitFor(() => getline(1, '$') == merged, 'keys: merged after "m"')

quire#Stop()
job_stop(other)
filter(errors, (_, e) => e != '')
writefile(errors, $QUIRE_TEST_RESULT)
qall!
