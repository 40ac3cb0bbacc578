vim9script
# The Vim client's application of the daemon's changes, on its own: every shape of range
# change (inside a line, splitting, joining, across lines, at the final newline) must leave the
# buffer equal to the text the change describes.
runtime plugin/quire.vim
runtime autoload/quire.vim

var errors: list<string> = []

def Check(before: string, changes: list<dict<any>>, after: string)
  enew!
  var lines = split(before, "\n", 1)
  var eol = len(lines) > 1 && lines[-1] == ''
  if eol
    remove(lines, -1)
  endif
  &eol = eol
  setline(1, lines)
  quire#ApplyChangesForTest(bufnr(), changes)
  var got = quire#DocumentText(bufnr())
  if got != after
    add(errors, string(before) .. ' + ' .. string(changes) .. ' gave ' .. string(got) .. ', not ' .. string(after))
  endif
enddef

def R(l1: number, c1: number, l2: number, c2: number, text: string): dict<any>
  return {range: {start: {line: l1, character: c1}, end: {line: l2, character: c2}}, text: text}
enddef

Check("abc\ndef\n", [R(0, 1, 0, 1, "\n")], "a\nbc\ndef\n")
Check("abc\ndef\n", [R(0, 3, 1, 0, '')], "abcdef\n")
Check("abc\ndef\nghi\n", [R(0, 1, 2, 1, 'X')], "aXhi\n")
Check("abc\ndef\n", [R(2, 0, 2, 0, 'tail')], "abc\ndef\ntail")
Check("abc\ndef", [R(1, 3, 1, 3, "\n")], "abc\ndef\n")
Check("abc\n", [R(0, 0, 1, 0, '')], "")
Check("", [R(0, 0, 0, 0, "one\ntwo\n")], "one\ntwo\n")
Check("a\nb\nc\n", [R(1, 0, 2, 0, ''), R(0, 1, 0, 1, "\n\n")], "a\n\n\nc\n")
Check("héllo😀\nx\n", [R(0, 6, 0, 6, '!')], "héllo!😀\nx\n")
Check("a\nb\n", [R(0, 1, 0, 1, "1\n2\n3")], "a1\n2\n3\nb\n")

writefile(errors, $QUIRE_TEST_RESULT)
qall!
