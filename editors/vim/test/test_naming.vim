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
var other = job_start([quire, 'attach', socket], {in_mode: 'lsp', out_mode: 'lsp', err_io: 'null', timeout: 10000})
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

# A real Neovim (the Neovim client, headless) opens another file of the project while Vim has it
# shared: both name it src/b.py and edit one document. Skipped where nvim is not installed.
if executable('nvim')
  var bpath = work .. '/gitproject/src/b.py'
  writefile(['b = 2'], bpath)
  execute 'edit ' .. fnameescape(bpath)
  QuireShare
  add(errors, quire#SharedName() ==# 'src/b.py' ? '' : 'src/b.py shared as ' .. string(quire#SharedName()))
  var nvimName = work .. '/nvim-name.txt'
  var nvimText = work .. '/nvim-text.txt'
  var script = work .. '/nvim-join.lua'
  # Neovim writes each report whole under another name and renames it into place: Vim polls for
  # the name and read a file Neovim had created but not yet written (under load) as empty.
  # Neovim waits for Vim's line until Vim stops it (job_stop below, once Vim has what it waits
  # for or gave up): a budget of its own, started before Vim even saw the share, ran out while
  # Vim was still within its waits. 45 s, under the harness's 50, is only a safety net.
  writefile([
    'local quire = require("quire")',
    'local function report(lines, path) vim.fn.writefile(lines, path .. ".part"); assert(os.rename(path .. ".part", path)) end',
    'quire.config.command = { ' .. string(quire) .. ', "attach", ' .. string(socket) .. ' }',
    'quire.config.user = "nora"',
    'vim.cmd("edit " .. vim.fn.fnameescape(' .. string(bpath) .. '))',
    'vim.cmd("QuireShare")',
    'report({ quire.shared_name() or "(not shared)" }, ' .. string(nvimName) .. ')',
    'vim.api.nvim_buf_set_lines(0, 0, 0, false, { "# nvim" })',
    'vim.wait(45000, function() return vim.fn.getline("$") == "# vim" end, 10)',
    'report(vim.api.nvim_buf_get_lines(0, 0, -1, false), ' .. string(nvimText) .. ')',
    'vim.cmd("qall!")'], script)
  var nvimJob = job_start(['nvim', '--headless', '-u', 'NONE', '-i', 'NONE', '-n',
    '--cmd', 'set rtp^=' .. fnamemodify(globpath(&rtp, 'autoload/quire.vim', 0, 1)[0], ':p:h:h:h') .. '/nvim',
    '--cmd', 'runtime plugin/quire.lua', '-c', 'luafile ' .. script], {in_io: 'null', out_io: 'null', err_io: 'null'})
  WaitFor(() => filereadable(nvimName), 'Neovim to share src/b.py', 15000)
  add(errors, filereadable(nvimName) && readfile(nvimName) ==# ['src/b.py'] ? '' : 'Neovim shared the file as ' .. string(filereadable(nvimName) ? readfile(nvimName) : []))
  WaitFor(() => getline(1) ==# '# nvim', 'Neovim''s line in Vim')
  append('$', '# vim')
  WaitFor(() => filereadable(nvimText), 'Neovim to see Vim''s line', 15000)
  add(errors, filereadable(nvimText) && readfile(nvimText) ==# ['# nvim', 'b = 2', '# vim'] ? '' : 'Neovim ends with ' .. string(filereadable(nvimText) ? readfile(nvimText) : []))
  add(errors, getline(1, '$') ==# ['# nvim', 'b = 2', '# vim'] ? '' : 'Vim ends with ' .. string(getline(1, '$')))
  job_stop(nvimJob)
endif

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
