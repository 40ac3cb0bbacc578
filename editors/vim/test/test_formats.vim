vim9script
# A shared file's format and the buffer's life, against a real daemon with another editor
# typing between each step: Vim writing the file itself in its own format (:set ff=dos then :w,
# :w ++ff=unix, :set bomb then :w, :set nobomb), :e ++enc rereading it, the file rewritten
# outside with CRLF and read again (checktime), :bufdo %s over two shared buffers, and :bdelete
# and :bwipeout (which end sharing the buffer) then :edit and :QuireShare again while the other
# typed. After each, the buffer equals the
# daemon's text, no \r or BOM ever reaches the document, the file holds what Vim wrote, and every
# token (multi-byte ones too) is there once. Run by editors/vim/test/run.sh.

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
set nohidden noswapfile autoread

var other = job_start([quire, 'attach', socket], {in_mode: 'lsp', out_mode: 'lsp', err_io: 'null', timeout: 10000})
var otherChannel = job_getchannel(other)
ch_setoptions(otherChannel, {callback: (_, msg) => 0})
ch_evalexpr(otherChannel, {method: 'initialize', params: {user: {name: 'otto'}, capabilities: {general: {positionEncodings: ['utf-8']}}}})

var dir = fnamemodify($QUIRE_TEST_RESULT, ':h') .. '/formats'
mkdir(dir, 'p')
var path = dir .. '/format.txt'
var second = dir .. '/second.txt'
writefile(['one <A17> é', 'two f(x) 日本'], path)
writefile(['second <S1> f(x)'], second)

def BufferText(): string
  return join(getline(1, '$'), "\n") .. (&eol ? "\n" : '')
enddef

# The other editor types at the start of `doc`'s text (a place that exists whatever it missed).
def OtherTypes(doc: string, text: string)
  var reply = ch_evalexpr(otherChannel, {method: 'document/edit', params: {uri: doc, epoch: 0, revision: 0, changes: [
    {range: {start: {line: 0, character: 0}, end: {line: 0, character: 0}}, text: text}]}})
  add(errors, has_key(reply, 'error') ? 'the other editor''s edit was refused: ' .. reply.error.message : '')
  WaitFor(() => stridx(g:QuireTestText(otherChannel, doc), text) >= 0, 'the daemon to have ' .. text)
enddef

# The buffer equals the daemon's text, which holds no \r or BOM, and each token is there once.
def Check(what: string, doc: string, tokens: list<string>)
  WaitFor(() => g:QuireTestText(otherChannel, doc) == BufferText(), what .. ': the buffer and the daemon to agree (daemon: '
    .. string(g:QuireTestText(otherChannel, doc)) .. ')')
  var text = g:QuireTestText(otherChannel, doc)
  add(errors, stridx(text, "\r") >= 0 || stridx(text, "\ufeff") >= 0 ? what .. ': the document holds \r or a BOM: ' .. string(text) .. ' ' .. &encoding .. string(filter(str2list(text), (_, c) => c > 127 || c == 13)) : '')
  for token in tokens
    var count = len(split(BufferText(), '\V' .. escape(token, '\'), 1)) - 1
    add(errors, count == 1 ? '' : what .. ': ' .. token .. ' is there ' .. count .. ' times: ' .. string(BufferText()))
  endfor
  add(errors, quire#StatusLine() == '[quire]' ? '' : what .. ': not shared any more: ' .. quire#StatusLine())
enddef

# The file's bytes, as one string.
def FileBytes(file: string): string
  return join(readfile(file, 'b'), "\n")
enddef

execute 'edit ' .. fnameescape(path)
QuireShare
var shared = quire#SharedName()
ch_evalexpr(otherChannel, {method: "document/open", params: {uri: shared, text: ""}})
var words = ['<A17>', 'é', 'f(x)', '日本']

# :set ff=dos then :w: the file is CRLF, the document has no \r; what the other typed meanwhile
# is in both.
OtherTypes(shared, '<O1> ')
Check('before ff=dos', shared, words + ['<O1>'])
set ff=dos
write
Check(':set ff=dos, :w', shared, words + ['<O1>'])
add(errors, FileBytes(path) =~ "^<O1> one <A17> é\r\ntwo f(x) 日本\r\n$" ? '' : ':w with ff=dos wrote ' .. string(FileBytes(path)))
OtherTypes(shared, '<O2> ')
Check('typing after ff=dos', shared, words + ['<O1>', '<O2>'])
write
add(errors, FileBytes(path) =~ "^<O2> <O1> one <A17> é\r\ntwo f(x) 日本\r\n$" ? '' : 'the second :w wrote ' .. string(FileBytes(path)))
# :w ++ff=unix writes LF this once.
write ++ff=unix
add(errors, FileBytes(path) !~ "\r" ? '' : ':w ++ff=unix wrote ' .. string(FileBytes(path)))
Check(':w ++ff=unix', shared, words + ['<O2>'])
# :set bomb then :w: the file starts with a BOM, the document does not.
set bomb
write
add(errors, FileBytes(path) =~ "^\xef\xbb\xbf<O2>" ? '' : ':w with bomb wrote ' .. string(FileBytes(path)[: 12]))
OtherTypes(shared, '<O3> ')
Check(':set bomb, :w', shared, words + ['<O3>'])
set nobomb ff=unix
write
add(errors, FileBytes(path) =~ "^<O3> <O2>" ? '' : ':w with nobomb wrote ' .. string(FileBytes(path)[: 12]))
# :e ++enc rereads the file: the shared text, nothing doubled.
OtherTypes(shared, '<O4> ')
edit ++enc=utf-8
Check(':e ++enc=utf-8', shared, words + ['<O3>', '<O4>'])
# The file rewritten outside in CRLF with a line added, read again (checktime, which keeps the
# buffer's 'ff=unix'): the line reaches the document once, with no \r (the client takes the file
# as dos), and the other's text stays.
OtherTypes(shared, '<O5> ')
var lines = readfile(path)
writefile(mapnew(lines + ['outside <D4> ü'], (_, l) => l .. "\r"), path)
# A later modification time than Vim's own write, which checktime compares, whatever the clock's grain.
system('touch -d @' .. (localtime() + 100) .. ' ' .. shellescape(path))
checktime
Check('checktime after an outside CRLF write', shared, words + ['<O4>', '<O5>', '<D4>'])
add(errors, &fileformat == 'dos' && getline(1) !~ "\r" ? '' : 'checktime read the CRLF file as ' .. &fileformat .. ': ' .. string(getline(1)))
feedkeys("Goafter checktime <E5>\<Esc>", 'tx')
Check('typing after checktime', shared, words + ['<O5>', '<D4>', '<E5>'])

# :bufdo %s over two shared buffers: each document gets its own substitution once.
set hidden
execute 'edit ' .. fnameescape(second)
QuireShare
var secondUri = quire#SharedName()
ch_evalexpr(otherChannel, {method: 'document/open', params: {uri: secondUri, text: ''}})
bufdo :%s/f(x)/g(ü)/ge
bufdo update
execute 'buffer ' .. bufnr(path)
Check(':bufdo %s, the first', shared, ['g(ü)', '<D4>', '<E5>'])
execute 'buffer ' .. bufnr(second)
Check(':bufdo %s, the second', secondUri, ['g(ü)', '<S1>'])
set nohidden

# :bdelete ends sharing the buffer (as :bwipeout does); the other types; :edit and :QuireShare
# again: the file is what Quire last knew, so nothing is asked and the buffer shows the shared
# text, the other's text once. The same after :bwipeout.
execute 'buffer ' .. bufnr(path)
write
bdelete
OtherTypes(shared, '<O6> ')
execute 'edit ' .. fnameescape(path)
add(errors, quire#StatusLine() == '' ? '' : 'still shared after :bdelete: ' .. quire#StatusLine())
QuireShare
Check(':bdelete, :e, :QuireShare', shared, ['<O6>', '<O5>', '<D4>', '<E5>', 'g(ü)'])
feedkeys("Goafter bdelete <F6>\<Esc>", 'tx')
Check('typing after :bdelete, :e', shared, ['<O6>', '<F6>'])
write
bwipeout
OtherTypes(shared, '<O7> ')
execute 'edit ' .. fnameescape(path)
QuireShare
Check(':bwipeout, :e, :QuireShare', shared, ['<O7>', '<O6>', '<F6>', '<D4>', 'g(ü)'])

quire#Stop()
job_stop(other)
filter(errors, (_, e) => e != '')
writefile(errors, $QUIRE_TEST_RESULT)
qall!
