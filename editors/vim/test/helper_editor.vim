vim9script
# A second Vim for the client's tests (not a test itself): started as a job by a test (stdin
# from /dev/null, like the tests; it never returns to Vim's main loop, which would read it), it
# runs the Ex commands the test appends to $QUIRE_HELPER_DIR/commands, one at a time, and after
# each poll writes $QUIRE_HELPER_DIR/report: {done (commands run), text (its buffer's document
# text), status (quire#StatusLine())}. Errors go to $QUIRE_HELPER_DIR/errors. Its client log is
# $QUIRE_HELPER_DIR/client.log.
runtime plugin/quire.vim

var dir = $QUIRE_HELPER_DIR
g:quire_command = [$QUIRE_BINARY, 'attach', $QUIRE_HELPER_SOCKET]
g:quire_log = dir .. '/client.log'
g:quire_user = get(environ(), 'QUIRE_HELPER_USER', 'hugo')
set hidden noswapfile laststatus=2
var done = 0

# Vim's rename() removes the target before it renames, so a file the test replaces can be
# missing for a moment: a read that fails is tried again at the next poll.
def ReadCommands(): list<string>
  var commands: list<string> = []
  try
    commands = filereadable(dir .. '/commands') ? readfile(dir .. '/commands') : []
  catch /E484/
  endtry
  return commands
enddef

def Poll()
  var commands = ReadCommands()
  while done < len(commands)
    var command = commands[done]
    done += 1
    try
      execute command
      listener_flush()   # as Vim's main loop does before it redraws
    catch
      writefile([done .. ': ' .. command .. ': ' .. v:exception], dir .. '/errors', 'a')
    endtry
  endwhile
  writefile([json_encode({done: done, text: quire#DocumentText(bufnr()), status: quire#StatusLine()})], dir .. '/report.new')
  rename(dir .. '/report.new', dir .. '/report')
enddef

# Timers and the daemon's messages are handled while it sleeps. A test ends it with "qall!".
while true
  Poll()
  sleep 20m
endwhile
