" Runs one of the client's headless tests (not a test itself): editors/vim/test/run.sh starts
" Vim with this file and the test's path in $QUIRE_TEST_SCRIPT. Whatever the test does, Vim
" quits with a result written: an error the test did not catch (a daemon reply that never came,
" a typo) ends the test with that error in $QUIRE_TEST_RESULT, and a test still running at
" $QUIRE_TEST_DEADLINE seconds (default 50, under the runner's 60) is stopped the same way, so
" the runner reports what went wrong instead of "no result".

" What the daemon answered `method` with on `channel`, or `default` when no answer came within
" `timeout` ms (a slow daemon under load): a test waiting on it keeps waiting until its own deadline.
function! QuireTestAsk(channel, method, params, default, timeout = 10000) abort
  let reply = ch_evalexpr(a:channel, {'method': a:method, 'params': a:params}, {'timeout': a:timeout})
  return type(reply) == v:t_dict && has_key(reply, 'result') ? reply.result : a:default
endfunction

" The document's text as the daemon sends it on `channel`, or a note saying no answer came.
function! QuireTestText(channel, uri) abort
  return QuireTestAsk(a:channel, 'document/text', {'uri': a:uri}, {'text': '(no answer from the daemon)'}).text
endfunction

function! s:Fail(what) abort
  " What the test had already written stays; the failure is added after it.
  call writefile([a:what], $QUIRE_TEST_RESULT, 'a')
  qall!
endfunction

call timer_start(1000 * str2nr(empty($QUIRE_TEST_DEADLINE) ? '50' : $QUIRE_TEST_DEADLINE),
      \ {-> s:Fail('the test was still running at its deadline (' . fnamemodify($QUIRE_TEST_SCRIPT, ':t') . '); buffer: ' . string(getline(1, 8)))})
try
  execute 'source ' . fnameescape($QUIRE_TEST_SCRIPT)
catch
  call s:Fail('stopped by an error: ' . v:exception . ' (at ' . v:throwpoint . ')')
endtry
if !filereadable($QUIRE_TEST_RESULT)
  call s:Fail('the test ended without writing its result')
endif
qall!
