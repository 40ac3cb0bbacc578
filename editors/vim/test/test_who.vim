vim9script
# Who is here, jump and follow (quire/who), against a partner editor on the same daemon (otto,
# a raw channel): :QuireWho lists him with his file and line, :QuireJump goes to his cursor
# (opening his file by path), :QuireFollow moves this window as his cursor moves, to another
# line and to another file, and stops when this Vim moves. Run by editors/vim/test/run.sh.

var errors: list<string> = []

def WaitFor(Condition: func(): bool, what: string, timeout = 5000)
  var waited = 0
  while !Condition() && waited < timeout
    sleep 10m
    waited += 10
  endwhile
  if !Condition()
    add(errors, 'timed out waiting for ' .. what .. '; at ' .. bufname() .. ':' .. line('.') .. ':' .. col('.')
      .. ', following "' .. quire#Following() .. '"; messages: ' .. execute('messages')[-300 :])
  endif
enddef

def Check(ok: bool, what: string)
  if !ok
    add(errors, what)
  endif
enddef

runtime plugin/quire.vim
var socket = $QUIRE_TEST_SOCKET
var quire = $QUIRE_BINARY
g:quire_command = [quire, 'attach', socket]
g:quire_log = $QUIRE_TEST_LOG
g:quire_user = 'vera'

var dir = resolve(fnamemodify(tempname(), ':p')) .. '-who'
mkdir(dir .. '/.git', 'p')   # the project root: files are named from here
writefile(['a one', 'a two', 'a three', 'a four'], dir .. '/a.txt')
writefile(['b one', 'b two', 'b three'], dir .. '/b.txt')
writefile(['c one', 'c two', 'c three', 'c four', 'c five'], dir .. '/c.txt')
exe 'cd ' .. fnameescape(dir)

set hidden
edit a.txt
QuireShare
Check(quire#SharedName() == 'a.txt', 'a.txt shared as ' .. quire#SharedName())
cursor(2, 3)
quire#SendCursor(bufnr())

# Otto, a second editor on the same daemon: a.txt joined by name, b.txt and c.txt by file.
var otto = job_getchannel(job_start([quire, 'attach', socket], {in_mode: 'lsp', out_mode: 'lsp', err_io: 'null', timeout: 10000}))
ch_setoptions(otto, {callback: (_, msg) => 0})
ch_evalexpr(otto, {method: 'initialize', params: {user: {name: 'otto'}, capabilities: {general: {positionEncodings: ['utf-8']}}}})
ch_evalexpr(otto, {method: 'document/open', params: {uri: 'a.txt', text: ''}})
for f in ['b.txt', 'c.txt']
  var opened = ch_evalexpr(otto, {method: 'document/open', params: {file: dir .. '/' .. f, text: join(readfile(dir .. '/' .. f), "\n") .. "\n"}})
  Check(get(get(opened, 'result', {}), 'uri', '') == f, 'otto opened ' .. f .. ': ' .. string(opened))
endfor

def OttoAt(uri: string, line: number, character: number)
  var position = {line: line, character: character}
  ch_sendexpr(otto, {method: 'cursor/update', params: {uri: uri, epoch: 0, revision: 0, selections: [{start: position, end: position}]}})
enddef

def Messages(): string
  return execute('messages')
enddef

# Who: otto on line 4 of a.txt, vera (you) on line 2.
OttoAt('a.txt', 3, 2)
WaitFor(() => get(quire#CursorsShown(bufnr()), 'otto', []) == [3, 2], 'otto''s cursor in a.txt')
QuireWho
Check(Messages() =~ 'here: otto a.txt:4, vera (you) a.txt:2', ':QuireWho said: ' .. Messages()[-200 :])

# Jump: to his cursor in a.txt, then, once he is in b.txt, which this Vim has not open, to b.txt.
QuireJump otto
Check(bufname() == 'a.txt' && line('.') == 4 && col('.') == 3, 'jump in a.txt: at ' .. bufname() .. ':' .. line('.') .. ':' .. col('.'))
OttoAt('b.txt', 2, 4)
# (Cursor updates are notifications: wait until the daemon has his, as he sees it himself.)
WaitFor(() => get(get(filter(g:QuireTestAsk(otto, 'quire/who', {}, {people: []}).people, (_, p) => p.self), 0, {}), 'at', [{}])[0]
  ->get('uri', '') == 'b.txt', 'the daemon to have otto in b.txt')
QuireJump otto
Check(bufname() =~ 'b.txt$' && line('.') == 3 && col('.') == 5, 'jump to b.txt: at ' .. bufname() .. ':' .. line('.') .. ':' .. col('.'))
Check(quire#SharedName() == 'b.txt', 'b.txt joined on jump: shared as "' .. quire#SharedName() .. '"')
Check(getline(1, '$') == ['b one', 'b two', 'b three'], 'b.txt text: ' .. string(getline(1, '$')))

# Follow: from a.txt, this window goes to him in b.txt, follows him to another line, back to
# a.txt (by his cursor notification), and into c.txt, which this Vim has not open.
buffer a.txt
cursor(1, 1)
QuireFollow otto
Check(quire#Following() == 'otto', 'following: "' .. quire#Following() .. '"')
Check(bufname() =~ 'b.txt$' && line('.') == 3, 'follow starts at his cursor: ' .. bufname() .. ':' .. line('.'))
OttoAt('b.txt', 0, 1)
WaitFor(() => bufname() =~ 'b.txt$' && line('.') == 1 && col('.') == 2, 'following him to line 1 of b.txt')
OttoAt('a.txt', 2, 0)
WaitFor(() => bufname() == 'a.txt' && line('.') == 3 && col('.') == 1, 'following him to a.txt')
OttoAt('c.txt', 4, 3)
WaitFor(() => bufname() =~ 'c.txt$' && line('.') == 5 && col('.') == 4, 'following him into c.txt')
Check(quire#SharedName() == 'c.txt', 'c.txt joined when followed into: "' .. quire#SharedName() .. '"')
Check(quire#Following() == 'otto', 'still following after three moves: ' .. Messages()[-300 :])

# Vera moves: the follow ends and says so; otto's next move leaves her where she is.
feedkeys('gg', 'xt')
WaitFor(() => quire#Following() == '', 'the follow to end when vera moved')
Check(Messages() =~ 'stopped following otto (you moved)', 'said: ' .. Messages()[-200 :])
OttoAt('c.txt', 2, 0)
WaitFor(() => get(quire#CursorsShown(bufnr()), 'otto', []) == [2, 0], 'otto''s cursor in c.txt')
Check(line('.') == 1, 'no longer following, yet moved to line ' .. line('.'))

# Roles: otto shares a project folder (as `quire share` does) and moves into one of its files:
# :QuireWho shows his role there (this daemon shares it: owner); vera, in a document shared by
# name (no project), has none.
var proj = dir .. '/proj'
mkdir(proj, 'p')
writefile(['d one', 'd two'], proj .. '/d.txt')
var sharedProject = ch_evalexpr(otto, {method: 'project/share', params: {root: proj, listen: ['127.0.0.1:0']}}, {timeout: 10000})
Check(has_key(sharedProject, 'result'), 'project/share: ' .. string(sharedProject))
var inProject = ch_evalexpr(otto, {method: 'document/open', params: {file: proj .. '/d.txt', ifShared: true, text: "d one\nd two\n"}})
var projectUri = get(get(inProject, 'result', {}), 'uri', '')
Check(projectUri =~ '^@', 'otto opened d.txt of the project: ' .. string(inProject))
OttoAt(projectUri, 1, 0)
WaitFor(() => get(get(filter(g:QuireTestAsk(otto, 'quire/who', {}, {people: []}).people, (_, p) => p.self), 0, {}), 'at', [{}])[0]
  ->get('uri', '') == projectUri, 'the daemon to have otto in the project''s d.txt')
QuireWho
Check(Messages() =~ 'here: otto (owner) proj/d.txt:2 (+3 files), vera (you) ', ':QuireWho with roles said: ' .. Messages()[-200 :])
ch_evalexpr(otto, {method: 'project/stop', params: {key: get(get(sharedProject, 'result', {}), 'key', '')}})

ch_close(otto)
quire#Stop()
filter(errors, (_, e) => e != '')
writefile(errors, $QUIRE_TEST_RESULT)
qall!
