vim9script
# Line moves in the real Vim while another Vim types in a line that stays put (driven by
# editors/test/line_moves.sh with QUIRE_ROLE mover or typist, QUIRE_SOCKET, QUIRE_WORK).
# Vim reports each move as one range trimmed to the characters that differ, cut mid-line; the
# typist's token must stay in its line (protocol/decisions/edit-intent.md, rule 7).
runtime plugin/quire.vim
var role = $QUIRE_ROLE
var work = $QUIRE_WORK
g:quire_command = [$QUIRE_BINARY, 'attach', $QUIRE_SOCKET]
g:quire_log = work .. '/' .. role .. '.log'

def WaitForFile(name: string)
  var waited = 0
  while !filereadable(work .. '/' .. name) && waited < 20000
    sleep 5m
    waited += 5
  endwhile
enddef

def Do(keys: string)
  try
    execute keys
  catch
    writefile([keys .. ': ' .. v:exception], work .. '/' .. role .. '.errors', 'a')
  endtry
  &undolevels = &undolevels
  listener_flush()
enddef

# Until nothing changed for 600 ms and `token` is shown (at most 15 s).
def Settle(token: string)
  var last = getline(1, '$')
  var still = 0
  var waited = 0
  while (still < 600 || stridx(join(last, "\n"), token) < 0) && waited < 15000
    sleep 50m
    waited += 50
    if getline(1, '$') == last
      still += 50
    else
      last = getline(1, '$')
      still = 0
    endif
  endwhile
enddef

enew
if role == 'mover'
  setline(1, ['    row 1 a', '    row 2 b', '    row 3 c', '--', '  x = 1;', '  y = 2;', '  z = 3;', '--',
    'top', '  dp1 one;', '  dp2 two;', 'end', 'srt-c', 'srt-b', 'srt-a', '--',
    'row 1;', 'row 2;', 'row 3;', 'row 4;', 'row 5;', '--'])
  QuireShare moves.txt
  writefile(['shared'], work .. '/mover.ready')
  WaitForFile('typist.ready')
else
  WaitForFile('mover.ready')
  var waited = 0
  quire#Start()
  while waited < 20000 && quire#DocumentNames()->index('moves.txt') < 0
    sleep 10m
    waited += 10
  endwhile
  QuireShare moves.txt
  while waited < 20000 && line('$') < 22
    sleep 10m
    waited += 10
  endwhile
  writefile(['shared'], work .. '/typist.ready')
endif

# Each step: the mover's command, and the line the typist types at the end of, and what.
var steps = [
  [':3m 0', '^    row 1 a', ' <A17>'],
  ["call search('^  x = 1;') | :m +2", '^  z = 3;', ' // "s"'],
  ["call search('^  dp1 one;') | normal! ddp", '^  dp2 two;', ' <B5>'],
  ["call search('^srt-c') | :.,.+2sort", '^srt-b', ' <E12>'],
  ["call search('^row 1;') | execute ':' .. line('.') .. ',' .. (line('.') + 4) .. 'g/^/m ' .. (line('.') - 1)", '^row 3;', ' f(y)'],
]
for i in range(len(steps))
  var [command, line, token] = steps[i]
  writefile(['ready'], work .. '/' .. role .. '.step' .. i)
  WaitForFile((role == 'mover' ? 'typist' : 'mover') .. '.step' .. i)
  if role == 'mover'
    Do(command)
  else
    cursor(1, 1)
    Do("call search('" .. line .. "') | normal! A" .. token)
  endif
  Settle(token)
endfor
writefile(getline(1, '$') + [&eol ? 'EOL' : 'NOEOL'], work .. '/' .. role .. '.result')
qall!
