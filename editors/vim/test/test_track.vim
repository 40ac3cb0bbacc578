vim9script
# The change tracker on its own: for each command, the listener's records become range changes
# that turn the old text into the buffer's, and say what the command did (a join removes the
# line break and indent; `ddp` removes a line and adds it below; `>>` inserts the indent), and
# so do random commands on random text.
runtime plugin/quire.vim
runtime autoload/quire.vim

var errors: list<string> = []
var records: list<dict<any>> = []

def Record(buf: number, start: number, end: number, added: number, changes: list<dict<any>>)
  extend(records, mapnew(changes, (_, c) => copy(c)))
enddef

def R(l1: number, c1: number, l2: number, c2: number, text: string): dict<any>
  return {range: {start: {line: l1, character: c1}, end: {line: l2, character: c2}}, text: text}
enddef

# Runs `Command` on `lines`; the changes must rebuild the buffer and, when given, be `expected`.
def Check(name: string, lines: list<string>, Command: func, expected: any = null)
  enew!
  setline(1, lines)
  listener_flush()
  records = []
  var id = listener_add(Record)
  Command()
  listener_flush()
  listener_remove(id)
  var old = {lines: copy(lines), eol: &eol}
  var before = deepcopy(old)
  var changes = quire#RangeChanges(bufnr(), old, records)
  if changes == null
    add(errors, name .. ': records did not add up: ' .. string(records))
    return
  endif
  for change in changes
    quire#ApplyChangeForTest(before, change)
  endfor
  if before.lines != getline(1, '$') || old.lines != getline(1, '$')
    add(errors, name .. ': ' .. string(changes) .. ' gave ' .. string(before.lines) .. ', the buffer has ' .. string(getline(1, '$')))
  endif
  if expected != null && changes != expected
    add(errors, name .. ': sent ' .. string(changes) .. ', not ' .. string(expected))
  endif
enddef

var rows = ['row 01 <A17>', 'row 02 f(x)', '    row 03 "s"', 'row 04', 'b', 'a', 'c']
Check('J', rows, () => feedkeys('2GJ', 'tx'), [R(1, 11, 2, 3, '')])
Check('3J', rows, () => feedkeys('2G3J', 'tx'))
Check('gJ', rows, () => feedkeys('2GgJ', 'tx'), [R(1, 11, 2, 0, '')])
Check('ddp', rows, () => feedkeys('2Gddp', 'tx'), [R(3, 0, 3, 0, "row 02 f(x)\n"), R(1, 0, 2, 0, '')])
Check('>>', rows, () => feedkeys('2G>>', 'tx'), [R(1, 0, 1, 0, "\t")])
Check('3>>', rows, () => feedkeys('2G3>>', 'tx'))
Check(':sort', rows, () => execute(':5,7sort'))
Check(':m', rows, () => execute(':2m 4'))
Check(':s across lines', rows, () => execute(':1,3s/\n/ /'))
Check('gq', ['aaa bbb', 'ccc ddd eee fff ggg hhh iii', 'jjj'], () => execute("setlocal tw=10 | normal! gggqG"))
Check('o and typing', rows, () => feedkeys("2Goabc\<Esc>", 'tx'), [R(2, 0, 2, 0, "abc\n")])
Check('o alone', rows, () => feedkeys("2Go\<Esc>", 'tx'), [R(1, 11, 1, 11, "\n")])
Check('Enter mid-line', rows, () => feedkeys("2G2|i\<CR>\<Esc>", 'tx'), [R(1, 1, 1, 1, "\n")])
Check('2dd', rows, () => feedkeys("2G2dd", 'tx'), [R(1, 0, 3, 0, '')])
Check('yyp', rows, () => feedkeys("2Gyyp", 'tx'))
Check('xp', rows, () => feedkeys("2Gxp", 'tx'), [R(1, 0, 1, 3, 'orw')])
Check('typing in a repeat', ['hello'], () => feedkeys("3|il\<Esc>", 'tx'), [R(0, 2, 0, 2, 'l')])
Check('cw', ['one two three'], () => feedkeys("wcwTWO\<Esc>", 'tx'), [R(0, 4, 0, 7, 'TWO')])
Check('r inside a word', ['one two three'], () => feedkeys("5|lrX", 'tx'), [R(0, 4, 0, 7, 'tXo')])
Check('dd of the last line', rows, () => feedkeys("Gdd", 'tx'))
Check('appending lines', rows, () => feedkeys("Goend\<Esc>", 'tx'))
Check('noeol: dd of the last line', rows, () => {
  setlocal noeol
  feedkeys("Gdd", 'tx')
})
Check(':%s', rows, () => execute(':%s/row/ROW/g'))
Check('multibyte', ['héllo wörld', 'x'], () => feedkeys("1G$iö\<Esc>", 'tx'))

# Random commands on random lines of words, code-like tokens, blanks and multibyte characters:
# the changes always rebuild the buffer's text (or the records are said not to add up).
var seed = srand(20261125)
def Random(n: number): number
  return rand(seed) % n
enddef
var words = ['aa', 'a', 'é', 'ö😀', '<A17>', 'f(x)', '"s"', '  ', "\t", 'row', 'll', '']
var commands = ['J', 'gJ', 'ddp', '>>', '<<', 'x', 'xp', 'dw', "cwZ\<Esc>", "ia\<Esc>", "ial\<Esc>", "o\<Esc>", "ox y\<Esc>",
  "O\<Esc>", 'yyp', 'dd', '3J', 'r~', '~', 'gUU', "i\<CR>\<Esc>", "A\<BS>\<BS>\<Esc>", 'ddP', 'D', "Cnew\<Esc>", '2dd', 'p',
  'P', 'gqq', "i  \<Esc>", 'xx', 'de']
var exCommands = [':%s/a/b/g', ':2,3sort', ':1m $', ':2m 0', ':%s/\n/ /', ':1,2s/ /\r/g', ':g/a/d', ':2,3>', ':1t 2', ':%j']
for round in range(500)
  enew!
  var lines: list<string> = []
  for i in range(1 + Random(6))
    add(lines, join(mapnew(range(Random(5)), (_, _) => words[Random(len(words))] .. (Random(2) == 0 ? ' ' : '')), ''))
  endfor
  setline(1, lines)
  &l:eol = Random(3) != 0
  setlocal textwidth=12
  var old = {lines: copy(lines), eol: &eol}
  listener_flush()
  records = []
  var id = listener_add(Record)
  var keys = ''
  if Random(4) == 0
    keys = exCommands[Random(len(exCommands))]
    execute 'silent! ' .. keys
  else
    for k in range(1 + Random(3))
      keys ..= (1 + Random(len(lines))) .. 'G' .. (1 + Random(8)) .. '|' .. commands[Random(len(commands))]
    endfor
    silent! feedkeys(keys, 'tx')
  endif
  listener_flush()
  listener_remove(id)
  if empty(records)
    continue
  endif
  var rebuilt = deepcopy(old)
  var changes = quire#RangeChanges(bufnr(), old, records)
  if changes == null
    continue
  endif
  for change in changes
    quire#ApplyChangeForTest(rebuilt, change)
  endfor
  if join(rebuilt.lines, "\n") .. (rebuilt.eol ? "\n" : '') != quire#DocumentText(bufnr())
    add(errors, 'random ' .. string(lines) .. ' ' .. strtrans(keys) .. ': ' .. string(changes) .. ' gave ' .. string(rebuilt.lines)
      .. ', the buffer has ' .. string(getline(1, '$')))
  endif
endfor

filter(errors, (_, e) => e != '')
writefile(errors, $QUIRE_TEST_RESULT)
qall!
