vim9script
# The Quire client: starts the daemon as a job speaking LSP framing, shares buffers as
# documents, sends changed lines, applies the daemon's edits by the revision rules of
# protocol/README.md without echoing them, and shows other people's cursors.

var job: job
var channel: channel
var ready = false
# Per shared buffer: uri, epoch, editor and daemon revisions, the daemon's name for our view of
# it (view, sent on a reopen), and whether we are applying.
var shared: dict<dict<any>> = {}
var applying = false
# Buffers whose text differs from the document of their name (-32017), while the person chooses
# what to do: {uri, file, popup}. They are not shared meanwhile.
var conflicts: dict<dict<any>> = {}

# How many links to other daemons are up, as the daemon last said (peer/changed `linksUp`), and
# the port :QuireListen asked for, which a restarted daemon is asked to listen on again.
var linksUp = 0
# Your name for others, as the daemon's initialize reply said it (g:quire_user, or the daemon's).
var userName = ''
var listenPort = -1
# Virtual-text name marks get their own (negative) ids: kept per buffer and session to remove them.
var nameMarks: dict<number> = {}
# What each of those shows: the name and where the cursor was put (for CursorsShown).
var namesShown: dict<dict<any>> = {}
# Others' selections by buffer and session: {name, selections}, moved with every change.
var cursors: dict<dict<dict<any>>> = {}
# Names this Vim's edits (editId), so a reopen after the daemon died can tell which edits in
# flight it had applied.
var instance = printf('vim-%x-%x-%x', getpid(), localtime(), rand())
var editCount = 0
# Numbers each open, reopen and resync of a buffer's document, so that a reply to an edit of an
# earlier one is told apart (epochs restart at 0 on every open).
var opens = 0

def NextOpen(): number
  opens += 1
  return opens
enddef

def Log(message: string)
  if get(g:, 'quire_log', '') != ''
    writefile([strftime('%H:%M:%S ') .. message], g:quire_log, 'a')
  endif
enddef

# A message for the person: one screen line (cut, with the whole of it in the log), kept in
# :messages, on a clean command line, so it never scrolls into a "Press ENTER" prompt that would
# eat the next key typed.
def Say(message: string, warning = false)
  Log(message)
  var line = 'quire: ' .. substitute(message, '[[:cntrl:]]', ' ', 'g')
  var room = max([&columns - 15, 20])
  if strdisplaywidth(line) > room
    # The whole of it for a while in a corner, where it takes no key.
    popup_notification(line, {time: 8000, maxwidth: max([&columns / 2, 30]), highlight: warning ? 'WarningMsg' : 'Normal'})
    while strdisplaywidth(line) > room - 3
      line = strcharpart(line, 0, strcharlen(line) - 1)
    endwhile
    line ..= '...'
  endif
  # No need to wait after an intentional redraw: what was on the command line is replaced.
  redraw
  if warning
    echohl WarningMsg
  endif
  echomsg line
  echohl None
enddef

def Warn(message: string)
  Say(message, true)
enddef

# The document's text for a buffer: its lines joined by "\n", plus the final "\n" that 'eol'
# stands for (protocol/decisions/line-breaks.md).
export def DocumentText(buf: number): string
  return join(getbufline(buf, 1, '$'), "\n") .. (getbufvar(buf, '&eol') ? "\n" : '')
enddef

# A notification; a daemon that just died is not an error here (the reconnect catches up).
def Notify(method: string, params: dict<any>)
  try
    ch_sendexpr(channel, {method: method, params: params})
  catch
    Log('could not send ' .. method .. ': ' .. v:exception)
  endtry
enddef

# A request answered synchronously: the reply as it came ({} when none came).
def Ask(method: string, params: any, timeout = 10000): dict<any>
  var reply = ch_evalexpr(channel, {method: method, params: params}, {timeout: timeout})
  return type(reply) == v:t_dict ? reply : {}
enddef

# A request answered synchronously; returns its result, or null after showing the error
# (only logging it when `quiet`).
def Request(method: string, params: any, timeout = 10000, quiet = false): any
  var reply = Ask(method, params, timeout)
  if type(reply) != v:t_dict || has_key(reply, 'error') || !has_key(reply, 'result')
    var why = method .. ' failed: ' .. (type(reply) == v:t_dict && has_key(reply, 'error') ? reply.error.message : 'no answer')
    if quiet
      Log(why)
    else
      Warn(why)
    endif
    return null
  endif
  return reply.result
enddef

# A request whose result does not matter: whether it succeeded (an error is shown).
def Succeeds(method: string, params: any): bool
  var reply = ch_evalexpr(channel, {method: method, params: params}, {timeout: 10000})
  if type(reply) != v:t_dict || has_key(reply, 'error')
    Warn(method .. ' failed: ' .. (type(reply) == v:t_dict && has_key(reply, 'error') ? reply.error.message : 'no answer'))
    return false
  endif
  return true
enddef

# Starts the daemon (or attaches to it) and initializes; `quiet` (a reconnect, which tries again
# by itself) only logs a failure.
export def Start(quiet = false)
  if ready
    return
  endif
  var command = copy(get(g:, 'quire_command', ['quire']))
  if get(g:, 'quire_secret_file', '') != '' && index(command, 'attach') < 0
    command += ['--secret-file', expand(g:quire_secret_file)]
  endif
  var options = {in_mode: 'lsp', out_mode: 'lsp', callback: (_, msg) => OnMessage(msg),
                 exit_cb: (ended, status) => OnExit(ended, status), noblock: 1}
  if get(g:, 'quire_log', '') != ''
    options.err_io = 'file'
    options.err_name = g:quire_log .. '.daemon'
  else
    options.err_io = 'null'
  endif
  job = job_start(command, options)
  channel = job_getchannel(job)
  # A name only when the person gave one (g:quire_user): otherwise the daemon names them (git's
  # user.name, else $USER, else their login) and says the name in its reply.
  var user: dict<any> = {color: get(g:, 'quire_color', '#d7005f')}
  if get(g:, 'quire_user', '') != ''
    user.name = g:quire_user
  endif
  var reply = Request('initialize', {
    protocolVersion: 1, clientInfo: {name: 'quire.vim', version: '1'},
    user: user, capabilities: {general: {positionEncodings: ['utf-8']}}}, 10000, quiet)
  if type(reply) != v:t_dict
    return   # said once by Request
  elseif reply.capabilities.positionEncoding != 'utf-8'
    Warn('the daemon did not agree to byte positions (' .. reply.capabilities.positionEncoding .. ')')
    return
  endif
  userName = get(get(reply, 'user', {}), 'name', get(g:, 'quire_user', ''))
  ch_sendexpr(channel, {method: 'initialized', params: {}})
  ready = true
  # Links already up (another editor's, or ones that came back before we did): the daemon counts.
  var status = Request('quire/status', {})
  if type(status) == v:t_dict
    linksUp = status.summary.linksUp
  endif
  if listenPort >= 0
    var again = Request('peer/listen', {port: listenPort})
    if type(again) == v:t_dict
      Log('listening again on port ' .. again.port)
    endif
  endif
  highlight default QuireCursor ctermbg=magenta ctermfg=white guibg=#d7005f guifg=white
  highlight default QuireName ctermfg=magenta guifg=#d7005f cterm=italic gui=italic
  prop_type_delete('quire_cursor')
  prop_type_add('quire_cursor', {highlight: 'QuireCursor'})
  prop_type_delete('quire_name')
  prop_type_add('quire_name', {highlight: 'QuireName'})
  highlight default QuireSelection ctermbg=darkmagenta guibg=#5f005f
  prop_type_delete('quire_selection')
  prop_type_add('quire_selection', {highlight: 'QuireSelection'})
enddef

# Your name for others, as the daemon's initialize reply said it.
export def UserName(): string
  return userName
enddef

var stopping = false
var reconnectDelay = 250

# The daemon went away: unless we stopped it, start it again (backing off up to 5 s) and
# reopen every shared buffer (Reconnect), so what was typed meanwhile merges into the daemon's
# document (protocol/README.md, "Reopen after the daemon went away"). Only the current job's end
# counts: one stopped by :QuireStop may end after :QuireShare started the next.
def OnExit(ended: job, status: number)
  if ended != job
    Log('an earlier daemon job exited with ' .. status)
    return
  endif
  ready = false
  linksUp = 0
  Log('daemon exited with ' .. status)
  if !stopping && !empty(shared)
    timer_start(reconnectDelay, (_) => Reconnect())
    reconnectDelay = min([reconnectDelay * 2, 5000])
  endif
enddef

def Reconnect()
  if ready || stopping
    return
  endif
  Start(true)
  if !ready
    return   # OnExit schedules the next try
  endif
  reconnectDelay = 250
  for [key, state] in items(shared)
    var buf = str2nr(key)
    if state.detached
      if bufloaded(buf)
        Reattach(buf, false)   # read again while the daemon was away
      endif
      continue
    endif
    listener_flush(buf)
    state.records = []   # the reopen sends the whole text
    # `text` is the whole buffer: what was typed while the daemon was away (never sent), and the
    # edits sent that it may never have read (in flight at the crash), are all in it. With `view`,
    # `epoch` and `revision` (the daemon edits this buffer had applied: what its next edit would
    # have been based on), the daemon resolves it against exactly what it had sent us, by
    # identity; the edits in flight that it did read are in that view already. No base: the
    # daemon keeps what each editor saw (a view whose elements went keeps its texts). Where it
    # has no view at all (a lost data directory), the open rules apply: -32017 asks the person.
    var params: dict<any> = {uri: state.uri, text: DocumentText(buf)}
    if get(state, 'view', '') != ''
      params.view = state.view
      params.epoch = state.epoch
      params.revision = state.daemon
    endif
    if get(state, 'file', '') != ''
      params.file = state.file
    endif
    Log('reopening ' .. state.uri .. ' with view ' .. get(params, 'view', '(none)') .. ', epoch ' .. state.epoch
      .. ', revision ' .. state.daemon .. ', sending ' .. string(sort(keys(params))))
    var answer = Ask('document/open', params)
    if get(get(answer, 'error', {}), 'code', 0) == -32017
      # No view survived and the document holds other text: nothing changed, the buffer is not
      # shared, and the person chooses, as when sharing (take, merge, keep apart).
      state.detached = true   # closes nothing: the document is not open in this session
      Forget(buf)
      AskConflict(buf, state.uri, get(state, 'file', ''), get(answer.error, 'data', {}))
      continue
    elseif !has_key(answer, 'result')
      Warn('document/open failed: ' .. get(get(answer, 'error', {}), 'message', 'no answer'))
      continue
    endif
    var reply = answer.result
    state.view = get(reply, 'view', '')
    state.epoch = reply.epoch
    state.opened = NextOpen()
    state.editor = 0
    state.daemon = 0
    ApplyChanges(buf, reply.changes)
    TakeSent(buf)
    ForgetUndo(buf)
    ReadOnlyFrom(buf, reply)
    Log('reopened ' .. state.uri .. ' after a daemon restart (' .. len(reply.changes) .. ' changes to the shared text)')
  endfor
enddef

# The documents the daemon holds (for joining one by name).
export def DocumentNames(): list<string>
  Start()
  var documents = Request('document/list', {})
  return type(documents) == v:t_list ? mapnew(documents, (_, d) => d.uri) : []
enddef

# Completion for :QuireOpen and :QuireMerge: the documents the daemon holds, its peers' included.
export def CompleteDocuments(lead: string, line: string, position: number): list<string>
  return filter(DocumentNames(), (_, name) => stridx(name, lead) == 0)
enddef

# :QuireShare [name]: share the current buffer under name. Without one, a buffer with a file
# leaves the name to the daemon (the file's path from its project root, protocol/README.md,
# "Naming rule for files"), and a buffer without one is "buffer<number>".
export def Share(name: string)
  stopping = false   # sharing again after :QuireStop: reconnect when the daemon goes away
  var buf = bufnr()
  var uri = name != '' ? name : (expand('%:p') != '' ? '' : 'buffer' .. buf)
  # A file: the daemon merges changes made to it outside Quire.
  ShareAs(buf, uri, expand('%:p'), '')
enddef

# Shares `buf` as document `uri`, bound to `file` unless it is ''; `uri` '' (with a file) leaves
# the name to the daemon, which says it in the reply's `uri` (and in a -32017's data); `conflict`:
# what the person chose after the daemon said the document holds other text ('take' or 'merge';
# '' to ask).
def ShareAs(buf: number, name: string, file: string, conflict: string)
  Start()
  if !ready || !bufloaded(buf)
    return
  endif
  var params: dict<any> = {text: DocumentText(buf)}
  if name != ''
    params.uri = name
  endif
  if file != ''
    params.file = file
  endif
  if conflict != ''
    params.conflict = conflict
  endif
  var answer = Ask('document/open', params)
  if get(get(answer, 'error', {}), 'code', 0) == -32017
    var data = get(answer.error, 'data', {})
    AskConflict(buf, get(data, 'uri', name), file, data)   # nothing changed: the person decides
    return
  elseif !has_key(answer, 'result')
    Warn('document/open failed: ' .. get(get(answer, 'error', {}), 'message', 'no answer'))
    return
  endif
  Adopt(buf, answer.result, name, file, conflict)
enddef

# Shares `buf` as the document a `document/open` reply `reply` opened (asked with `name`, bound
# to `file` unless it is ''; `conflict` the person's choice after -32017, or '').
def Adopt(buf: number, reply: dict<any>, name: string, file: string, conflict: string)
  var uri: string = get(reply, 'uri', name)
  shared[buf] = {uri: uri, epoch: reply.epoch, editor: 0, daemon: 0, listener: 0, file: file, view: get(reply, 'view', ''),
                 records: [], sendTimer: -1, detached: false, modeline: getbufvar(buf, '&modeline'), opened: NextOpen()}
  # Shared text is read again on every reload: a modeline someone typed into it must not run.
  setbufvar(buf, '&modeline', 0)
  ApplyChanges(buf, reply.changes)
  TakeSent(buf)
  ForgetUndo(buf)   # and an undo file read with the buffer
  ReadOnlyFrom(buf, reply)
  shared[buf].listener = listener_add(OnListener, buf)
  augroup quire
    exe 'autocmd! CursorMoved,CursorMovedI <buffer=' .. buf .. '> quire#SendCursor(' .. buf .. ')'
    exe 'autocmd! BufWritePost <buffer=' .. buf .. '> quire#Saved(' .. buf .. ', expand("<afile>:p"))'
    # :saveas, :file: the document is bound to the new name.
    exe 'autocmd! BufFilePost <buffer=' .. buf .. '> quire#Renamed(' .. buf .. ')'
    # Report changes at undo-block boundaries, so each is tagged with its own block.
    exe 'autocmd! InsertEnter <buffer=' .. buf .. '> quire#Flush(' .. buf .. ')'
    exe 'autocmd! InsertLeave <buffer=' .. buf .. '> quire#InsertLeft(' .. buf .. ')'
    # The buffer's life: unloaded (:e other without 'hidden', :e!, :bunload), read again
    # (:e back, :e!, a reload after the file changed), deleted.
    exe 'autocmd! BufUnload <buffer=' .. buf .. '> quire#Detach(' .. buf .. ')'
    exe 'autocmd! FileChangedShell <buffer=' .. buf .. '> quire#FileChanged(' .. buf .. ')'
    exe 'autocmd! BufReadPre <buffer=' .. buf .. '> quire#BeforeRead(' .. buf .. ')'
    exe 'autocmd! BufReadPost <buffer=' .. buf .. '> quire#Reattach(' .. buf .. ', true)'
    exe 'autocmd! BufWinEnter <buffer=' .. buf .. '> quire#Reattach(' .. buf .. ', false)'
    exe 'autocmd! BufDelete,BufWipeout <buffer=' .. buf .. '> quire#Forget(' .. buf .. ')'
    exe 'autocmd! BufEnter <buffer=' .. buf .. '> quire#UndoKeys(' .. buf .. ')'
    # :set noeol / :set eol changes the text's final newline, which no listener reports.
    autocmd! OptionSet eol quire#EolSet(bufnr())
    # Insert mode ended by CTRL-C, which has no InsertLeave.
    autocmd! ModeChanged [iR]*:n quire#InsertEnded(bufnr())
  augroup END
  MapUndo(buf)
  Log('shared ' .. uri .. (conflict != '' ? ' (' .. conflict .. ')' : ''))
  Say((reply.created ? 'sharing' : conflict == 'take' ? 'took the shared text of' : conflict == 'merge' ? 'merged your text into' : 'joined')
    .. ' "' .. uri .. '"' .. (linksUp == 0 ? '' : printf(' with %d peer link%s', linksUp, linksUp == 1 ? '' : 's')))
enddef

# The name under which the person's text is kept apart from document `uri`.
def ApartName(uri: string): string
  return uri .. '~' .. UserName()
enddef

# The daemon has `uri` with other text than `buf` and nothing says what the two have in common
# (-32017): it changed nothing. The buffer stays unshared (and says so in quire#StatusLine())
# while a menu asks the person: take the shared text, merge both, or keep theirs apart under
# another name. The menu takes t, m, a (or j, k and Enter); Esc leaves the buffer unshared.
def AskConflict(buf: number, uri: string, file: string, data: dict<any>)
  if has_key(conflicts, buf)
    popup_close(conflicts[buf].popup, -2)
  endif
  var apart = ApartName(uri)
  var choices = [
    't  Take the shared text (replaces the text of this buffer)',
    'm  Merge both: the shared text, then the text of this buffer',
    'a  Keep mine apart: share this buffer as "' .. apart .. '"']
  var characters = get(data, 'characters', -1)
  var popup = popup_menu(choices, {
    title: printf(' "%s" is already shared with other text%s ', uri, characters >= 0 ? printf(' (%d characters)', characters) : ''),
    filter: ConflictKey, callback: (_, choice) => Chosen(buf, choice), padding: [0, 1, 0, 1]})
  conflicts[buf] = {uri: uri, file: file, popup: popup}
  Warn('not shared: "' .. uri .. '" holds other text; choose in the menu')
  redrawstatus!
  var answer = get(g:, 'quire_test_conflict_answer', '')
  if answer != ''
    # For the client's own tests: the person's answer, given once the menu is up.
    timer_start(0, (_) => popup_close(popup, index(['take', 'merge', 'apart'], answer) + 1))
  endif
enddef

# The conflict menu's keys: t, m and a choose at once; the menu's own keys otherwise.
def ConflictKey(popup: number, key: string): bool
  var choice = index(['t', 'm', 'a'], key)
  if choice >= 0
    popup_close(popup, choice + 1)
    return true
  endif
  return popup_filter_menu(popup, key)
enddef

# The person chose (1 take, 2 merge, 3 apart; -1: the menu was dismissed).
def Chosen(buf: number, choice: number)
  if !has_key(conflicts, buf) || choice == -2
    return   # replaced by a newer question
  endif
  var conflict = remove(conflicts, buf)
  redrawstatus!
  if !bufloaded(buf) || has_key(shared, buf)
    return
  endif
  Log('conflict over ' .. conflict.uri .. ': choice ' .. choice)
  if choice == 1
    ShareAs(buf, conflict.uri, conflict.file, 'take')
  elseif choice == 2
    ShareAs(buf, conflict.uri, conflict.file, 'merge')
  elseif choice == 3
    # Not bound to the file: the shared document keeps that binding.
    var apart = ApartName(conflict.uri)
    ShareAs(buf, apart, '', '')
    if has_key(shared, buf)
      Say('your text is shared apart as "' .. apart .. '"; "' .. conflict.uri .. '" is untouched')
    endif
  else
    Say('"' .. conflict.uri .. '" is not shared in this buffer; :QuireShare asks again')
  endif
enddef

# Vim's own undo would also revert what others typed: in a shared buffer u, U and g- undo, and
# CTRL-R and g+ redo, your own edits only (through the daemon, a count repeating it); in a buffer
# no longer shared (:QuireStop, a reread refused with -32017, the buffer forgotten) they are
# Vim's own again. What else reaches Vim's own history (:undo, :earlier, :later, a plugin's
# normal! u) finds only your edits since another's last one (ForgetUndo). A buffer-local
# mapping can be changed only in its buffer: here when it is current or shown in a window, else
# when it is entered next (the BufEnter autocommand ShareAs sets).
def MapUndo(buf: number)
  if bufnr() == buf
    UndoKeys(buf)
  elseif bufwinid(buf) != -1
    win_execute(bufwinid(buf), 'quire#UndoKeys(' .. buf .. ')')
  endif
enddef

const undoKeys = ['u', 'U', 'g-']
const redoKeys = ['<C-R>', 'g+']

export def UndoKeys(buf: number)
  if bufnr() != buf
    return
  endif
  if has_key(shared, buf)
    for key in undoKeys
      execute 'nnoremap <buffer> ' .. key .. ' <Cmd>call quire#Undo(bufnr(), v:count1)<CR>'
    endfor
    for key in redoKeys
      execute 'nnoremap <buffer> ' .. key .. ' <Cmd>call quire#Redo(bufnr(), v:count1)<CR>'
    endfor
    return
  endif
  for key in undoKeys + redoKeys
    var mapping = maparg(key, 'n', false, true)
    if get(mapping, 'buffer', 0) && get(mapping, 'rhs', '') =~ '^<Cmd>call quire#\(Undo\|Redo\)('
      execute 'nunmap <buffer> ' .. key
    endif
  endfor
enddef

# The buffer is being unloaded (:e other without 'hidden', :e!, :bunload, quitting): what was
# typed goes first, then the document is closed; the buffer is shared again when it is read
# again (Reattach).
export def Detach(buf: number)
  if !has_key(shared, buf) || shared[buf].detached
    return
  endif
  Flush(buf)
  var state = shared[buf]
  state.detached = true
  state.records = []
  if ready
    try
      ch_sendexpr(channel, {method: 'document/close', params: {uri: state.uri}}, {callback: (_, _) => 0})
    catch
      Log('could not close ' .. state.uri .. ': ' .. v:exception)
    endtry
  endif
  ForgetCursors(buf)
  Log('detached ' .. state.uri .. ' (buffer unloaded)')
enddef

# The file changed on disk (checktime, 'autoread', a shell command): what was typed goes to the
# daemon, then Vim reads the file again without asking (the buffer's text is in the daemon, so
# nothing is lost), and Reattach lets the daemon merge the file's change into the shared text.
export def FileChanged(buf: number)
  if !has_key(shared, buf)
    v:fcs_choice = 'ask'
    return
  endif
  if v:fcs_reason == 'deleted'
    Say(fnamemodify(bufname(buf), ':t') .. ' was deleted on disk; the buffer is still shared (:w writes it again)', true)
    v:fcs_choice = ''
  elseif v:fcs_reason == 'mode'
    v:fcs_choice = ''
  else
    Flush(buf)
    v:fcs_choice = 'reload'
  endif
enddef

# A read over the buffer's text is not an edit of ours: nothing recorded during it is sent.
export def BeforeRead(buf: number)
  if has_key(shared, buf)
    shared[buf].reading = true
  endif
enddef

# The buffer was read again: from disk, without what others typed since it was saved (:e back
# without 'hidden'), or on purpose (:e!, which for a shared buffer means "show the shared text",
# not "the file"), or because the file changed outside Vim. The document is opened again with
# what was read and bound to the file: the daemon merges once what changed in the file outside
# Quire, and its reply turns the buffer into the shared text. `reread`: from BufReadPost, where
# a reload in place (no unload) that shows the text we sent needs nothing.
export def Reattach(buf: number, reread: bool)
  if !has_key(shared, buf) || !bufloaded(buf)
    return
  endif
  var state = shared[buf]
  if !state.detached && !reread
    return   # only shown in another window
  endif
  # A reload keeps the buffer's 'fileformat' (checktime, 'autoread'): a file rewritten outside
  # with CRLF and read into a 'ff=unix' buffer shows a \r at the end of every line, which no text
  # sent to the daemon may hold (client-contract.md, section 7). Take it as Vim's own detection
  # would have, as a dos file: its lines without the \r (not an edit: nothing is recorded yet).
  var lines = getbufline(buf, 1, '$')
  if getbufvar(buf, '&fileformat') == 'unix' && &fileformats =~ 'dos' && !empty(lines)
      && empty(filter(copy(lines), (_, l) => l !~ "\r$"))
    setbufvar(buf, '&fileformat', 'dos')
    setbufline(buf, 1, mapnew(lines, (_, l) => l[: -2]))
    setbufvar(buf, '&modified', 0)
    Log('read ' .. state.uri .. ' again as a dos file (every line ended in CR LF)')
  endif
  state.reading = false
  listener_flush(buf)
  state.records = []   # what the read did is not an edit of ours
  if !state.detached
    if DocumentText(buf) ==# SentText(state)
      RedrawCursors(buf)
      return
    endif
    Detach(buf)
  endif
  setbufvar(buf, '&modeline', 0)
  MapUndo(buf)
  if !ready
    return   # the reconnect reopens it
  endif
  var params: dict<any> = {uri: state.uri, text: DocumentText(buf)}
  if state.file != ''
    params.file = state.file
  endif
  var answer = Ask('document/open', params)
  if !has_key(answer, 'result')
    var error = get(answer, 'error', {})
    Forget(buf)
    if get(error, 'code', 0) == -32017
      AskConflict(buf, state.uri, state.file, get(error, 'data', {}))   # read again with other text
    else
      Warn('document/open failed: ' .. get(error, 'message', 'no answer') .. '; stopped sharing "' .. state.uri .. '" in this buffer')
    endif
    return
  endif
  var reply = answer.result
  state.detached = false
  state.view = get(reply, 'view', '')
  state.epoch = reply.epoch
  state.opened = NextOpen()
  state.editor = 0
  state.daemon = 0
  ApplyChanges(buf, reply.changes)
  TakeSent(buf)
  ForgetUndo(buf)
  ReadOnlyFrom(buf, reply)
  Log('reattached ' .. state.uri .. ' after the buffer was read again (' .. len(reply.changes) .. ' changes to the shared text)')
enddef

# The buffer got another file name (:saveas, :file): the document is bound to that file from
# now on (opened again with it), so :w and :QuireSave write there and the old file is left alone.
# The rebind waits until the command is over (Rebind): :saveas writes the lines it counted before
# this autocommand ran, so the buffer must not change before the write.
export def Renamed(buf: number)
  if !has_key(shared, buf)
    return
  endif
  var state = shared[buf]
  var path = fnamemodify(bufname(buf), ':p')
  if bufname(buf) == '' || path ==# state.file
    return
  endif
  state.file = path
  state.rebind = true
  timer_start(0, (_) => Rebind(buf))   # :file; after :saveas, Saved rebinds first
  Log('bound ' .. state.uri .. ' to ' .. path)
enddef

# A rebind, not a reload: what was typed goes first, the close keeps the view (`keepView`), and
# the open names it with the epoch and daemon revision the buffer is at, as a reopen after a
# restart does, so the daemon resolves the buffer against exactly what it was sent: a partner's
# edit in flight merges, nothing is asked, and the undo history goes on. After :saveas the new
# file holds what the buffer shows, which the daemon takes as this editor's.
def Rebind(buf: number)
  if !has_key(shared, buf) || !get(shared[buf], 'rebind', false)
    return
  endif
  var state = shared[buf]
  state.rebind = false
  if state.detached || !bufloaded(buf) || !ready
    return   # the reconnect or the next read opens it with its view and the new file
  endif
  Flush(buf)
  state.records = []   # the open below sends the whole text
  state.detached = true   # daemon edits of the closing view are dropped: the open brings them
  var closed = Ask('document/close', {uri: state.uri, keepView: true})
  ForgetCursors(buf)
  var params: dict<any> = {uri: state.uri, text: DocumentText(buf), file: state.file}
  if has_key(closed, 'result') && get(state, 'view', '') != ''
    params.view = state.view
    params.epoch = state.epoch
    params.revision = state.daemon
  endif
  Log('rebinding ' .. state.uri .. ' to ' .. state.file .. ', sending ' .. string(sort(keys(params))))
  var answer = Ask('document/open', params)
  if !has_key(answer, 'result')
    var error = get(answer, 'error', {})
    Forget(buf)
    if get(error, 'code', 0) == -32017
      AskConflict(buf, state.uri, state.file, get(error, 'data', {}))
    else
      Warn('document/open failed: ' .. get(error, 'message', 'no answer') .. '; stopped sharing "' .. state.uri .. '" in this buffer')
    endif
    return
  endif
  var reply = answer.result
  state.detached = false
  state.view = get(reply, 'view', '')
  state.epoch = reply.epoch
  state.opened = NextOpen()
  state.editor = 0
  state.daemon = 0
  ApplyChanges(buf, reply.changes)
  TakeSent(buf)
  ForgetUndo(buf)
  ReadOnlyFrom(buf, reply)
enddef

# The buffer is deleted or wiped out: it is no longer shared.
export def Forget(buf: number)
  if !has_key(shared, buf)
    return
  endif
  if !shared[buf].detached && bufloaded(buf)
    Detach(buf)
  endif
  var state = remove(shared, buf)
  timer_stop(state.sendTimer)
  listener_remove(state.listener)
  if bufexists(buf)
    setbufvar(buf, '&modeline', state.modeline)
    Unfreeze(buf, state)
    MapUndo(buf)
  endif
  Log('stopped sharing ' .. state.uri)
enddef

def SentText(state: dict<any>): string
  return join(state.sent.lines, "\n") .. (state.sent.eol ? "\n" : '')
enddef

# After :w wrote the buffer to its file: tell the daemon the file holds our text, so it does not
# take our own edits for a change made outside Quire.
export def Saved(buf: number, path = '')
  if !has_key(shared, buf) || !ready || shared[buf].file == '' || (path != '' && path !=# shared[buf].file)
    return   # written elsewhere (:w other.txt): the bound file did not change
  endif
  if get(shared[buf], 'rebind', false)
    Rebind(buf)   # :saveas: the open binds the file just written, as this editor's
    return
  endif
  Flush(buf)
  var state = shared[buf]
  Notify('document/saved', {uri: state.uri, epoch: state.epoch, revision: state.daemon})
enddef

# u and CTRL-R in a shared buffer: the daemon reverts (or reapplies) this editor's own last
# undo blocks, leaving others' edits alone; the change comes back as a daemon edit, and the
# cursor goes to it.
export def Undo(buf: number, count = 1)
  UndoOrRedo(buf, 'document/undo', count)
enddef

export def Redo(buf: number, count = 1)
  UndoOrRedo(buf, 'document/redo', count)
enddef

def UndoOrRedo(buf: number, method: string, count: number)
  if !has_key(shared, buf) || !ready
    return
  endif
  Flush(buf)
  for _ in range(count)
    var reply = Request(method, {uri: shared[buf].uri})
    if type(reply) != v:t_dict || !reply.done
      Say(method == 'document/undo' ? 'nothing of yours to undo' : 'nothing to redo')
      return
    endif
    shared[buf].jump = true
  endfor
enddef

# :QuireSave: the daemon writes the merged text to the bound file (atomically), merging first
# what changed in the file outside Quire.
export def Save(buf: number)
  if !has_key(shared, buf) || !ready
    return
  endif
  Flush(buf)
  var reply = Request('document/save', {uri: shared[buf].uri})
  if type(reply) != v:t_dict
    return
  endif
  if reply.hash == sha256(DocumentText(buf))
    setbufvar(buf, '&modified', 0)
    MarkFileRead(buf)
  else
    shared[buf].savedHash = reply.hash   # the merged-in change is still on its way
  endif
enddef

# The daemon rewrote the file with the buffer's text: let Vim take the file's new timestamp
# (a reload of identical text), so that :w does not warn that the file changed meanwhile.
def MarkFileRead(buf: number)
  if bufnr() != buf || getbufvar(buf, '&modified')
    return
  endif
  var autoread = &l:autoread
  setlocal autoread
  silent! checktime
  &l:autoread = autoread
enddef

# A new buffer showing document {name}: it starts as no text at all (not one empty line with a
# final newline), so it joins the document rather than bringing a text of its own.
export def Open(name: string)
  enew
  setlocal noeol nofixeol
  Share(name)
enddef

# The lines one listener call changed, as [first, old end, new end] (1-based, ends exclusive).
# Vim's combined start/end/added is wrong once a change added lines and a later one changed lines
# below them (an insert-mode paste, then typing), so the changes are replayed in order, each in
# the line numbers of its own moment.
export def ChangedRegion(changes: list<dict<any>>): list<number>
  var top = changes[0].lnum
  var oldEnd = changes[0].end
  var newEnd = changes[0].end + changes[0].added
  for change in changes[1 :]
    if change.end > newEnd
      oldEnd += change.end - newEnd   # lines below the region so far are unchanged old lines
      newEnd = change.end
    endif
    top = min([top, change.lnum])
    newEnd += change.added
  endfor
  return [top, oldEnd, newEnd]
enddef

# The change tracker. Vim's listener may report one command in several calls, the first while
# the command is still under way (a join: "line 6 changed" while line 7 is still there, then "line
# 7 deleted"), so records wait until the command is over (a timer, or Flush before anything else
# is sent) and go to the daemon together, as the precise range changes they add up to.
def OnListener(buf: number, start: number, end: number, added: number, changes: list<dict<any>>)
  if applying || !has_key(shared, buf) || !ready || shared[buf].detached || get(shared[buf], 'reading', false)
    return   # while the daemon is away, the reopen sends the whole text
  endif
  var state = shared[buf]
  extend(state.records, mapnew(changes, (_, c) => copy(c)))
  if state.sendTimer < 0
    state.sendTimer = timer_start(0, (_) => SendChanges(buf))
  endif
enddef

# Sends what the buffer's listener has recorded so far; call before anything else goes to the
# daemon for this buffer, and before applying its edits.
export def Flush(buf: number)
  if has_key(shared, buf) && bufloaded(buf)
    listener_flush(buf)
    SendChanges(buf)
  endif
enddef

# 'eol' was set (:set noeol nofixeol, :set eol): sent at once (SendChanges sees it).
export def EolSet(buf: number)
  if !applying
    Flush(buf)
  endif
enddef

# The recorded changes, as range changes (protocol/README.md, Change) or, should the records not
# add up with the buffer, the whole text: the daemon reduces either to the same character edits.
def SendChanges(buf: number)
  if !has_key(shared, buf)
    return
  endif
  var state = shared[buf]
  timer_stop(state.sendTimer)
  state.sendTimer = -1
  if applying || !ready || state.detached || get(state, 'reading', false) || !bufloaded(buf)
    return
  endif
  if get(state, 'undoKept', false) && !Inserting(buf)
    ForgetUndo(buf)   # the insert a daemon change came in ended, and nothing said so yet
  endif
  listener_flush(buf)
  if empty(state.records) && getbufvar(buf, '&eol') != state.sent.eol
    # 'eol' changed (:set noeol nofixeol, :set eol; OptionSet does not fire while Vim starts):
    # the final newline is part of the text, but no listener record says so. A change of the
    # last line, which RangeChanges, seeing 'eol' differ, sends as the whole text.
    var last = getbufinfo(buf)[0].linecount
    add(state.records, {lnum: last, end: last + 1, added: 0, col: 1})
  endif
  if empty(state.records)
    return
  endif
  var records = state.records
  state.records = []
  var changes = RangeChanges(buf, state.sent, records)
  if changes == null
    Log('listener records ' .. string(records) .. ' do not add up: sending the whole text')
    changes = [{text: DocumentText(buf)}]
    ApplyLocalChange(state.sent, changes[0])
  endif
  if empty(changes)
    return
  endif
  editCount += 1
  var params: dict<any> = {uri: state.uri, epoch: state.epoch, revision: state.daemon, changes: changes,
    editId: instance .. '-' .. editCount}
  if get(state, 'breakRevision', false)
    state.breakRevision = false
    params.revision += 100   # for the client's own tests (BreakRevisionForTest)
  endif
  if bufnr() == buf
    params.undoGroup = changenr()   # one Vim undo block is one step of the daemon's undo
    params.cursor = {line: line('.') - 1, character: col('.') - 1}
  endif
  var opened = state.opened
  try
    # A request: an error reply means the edit is not in the document (resync keeping the text).
    ch_sendexpr(channel, {method: 'document/edit', params: params}, {callback: (_, reply) => OnEditReply(buf, opened, reply)})
  catch
    Log('could not send an edit: ' .. v:exception)   # the daemon is gone: the reopen merges it
    return
  endtry
  state.editor += 1
  for change in changes
    MoveCursors(buf, change)
  endfor
  Log('sent edit ' .. state.editor .. ': ' .. string(changes))
enddef

# The range changes that listener `records` add up to, from `old` (the text the daemon will have
# once it has our earlier edits: lines and final newline) to what the buffer shows, in the order
# the daemon applies them (bottom first, so each one's positions hold in the text the previous
# left); [] when nothing changed. null when the records do not add up with the buffer.
# The records are replayed in the line numbers of their own moment over the changed region;
# lines no record touched must still be the old ones; each run of touched lines becomes one
# change trimmed to what differs (a join is its line break and indent removed, not its lines
# rewritten), a replacement taking in whole words (protocol/decisions/edit-intent.md).
# - Complexity: O(records + lines in the changed region), whatever the buffer's length.
export def RangeChanges(buf: number, old: dict<any>, records: list<dict<any>>): any
  var [top, oldEnd, newEnd] = ChangedRegion(records)
  var lineCount = getbufinfo(buf)[0].linecount
  if getbufvar(buf, '&eol') != old.eol || oldEnd - 1 > len(old.lines)
      || len(old.lines) - (oldEnd - top) + (newEnd - top) != lineCount
    return null
  endif
  # Each line of the region: the old line it still is (its index), or -1 once a record touched it.
  var entries = range(top - 1, oldEnd - 2)
  for record in records
    var at = record.lnum - top
    var removed = record.end - record.lnum
    var inserted = removed + record.added
    if at < 0 || inserted < 0 || at + removed > len(entries)
      return null
    endif
    if removed > 0
      remove(entries, at, at + removed - 1)
    endif
    extend(entries, repeat([-1], inserted), at)
  endfor
  if len(entries) != newEnd - top
    return null
  endif
  var region = newEnd > top ? getbufline(buf, top, newEnd - 1) : []
  # Runs of touched lines, with the old lines between their untouched neighbours.
  var hunks: list<list<number>> = []
  var oldNext = top - 1
  var runStart = -1
  for i in range(len(entries) + 1)
    var index = i < len(entries) ? entries[i] : oldEnd - 1
    if i < len(entries) && index < 0
      runStart = runStart < 0 ? i : runStart
      continue
    endif
    if i < len(entries) && (index < oldNext || region[i] !=# old.lines[index])
      return null   # an untouched line that is not the old one
    endif
    if runStart >= 0 || index > oldNext
      var newFrom = runStart >= 0 ? runStart : i
      add(hunks, [oldNext, index, top - 1 + newFrom, top - 1 + i])
    endif
    runStart = -1
    oldNext = index + 1
  endfor
  var changes: list<dict<any>> = []
  for [a, b, c, d] in reverse(hunks)
    extend(changes, HunkChange(old, a, b, d > c ? region[c - top + 1 : d - top] : [], c, buf))
  endfor
  if !empty(changes)
    SpliceLines(old, top - 1, oldEnd - 1, region)
  endif
  return changes
enddef

# Old lines first..last-1 (0-based) became `lines` (new line `newFirstLine` on): the change
# trimmed to what differs (none when nothing does), in the order the daemon applies them.
def HunkChange(old: dict<any>, first: number, last: number, lines: list<string>, newFirstLine: number, buf: number): list<dict<any>>
  var [a, b] = [first, last]
  var newLines = lines
  while a < b && !empty(newLines) && old.lines[a] ==# newLines[0]
    a += 1
    newLines = newLines[1 :]
  endwhile
  while a < b && !empty(newLines) && old.lines[b - 1] ==# newLines[-1]
    b -= 1
    newLines = newLines[: -2]
  endwhile
  var n = len(old.lines)
  var atEnd = b == n && !old.eol   # the last line has no break after it
  if a == b && empty(newLines)
    return []
  elseif empty(newLines)
    # Lines removed: each with its break, or with the break before it at the end of the text.
    return [atEnd && a > 0 ? RangeChange(a - 1, strlen(old.lines[a - 1]), n - 1, strlen(old.lines[n - 1]), '')
      : RangeChange(a, 0, b, 0, '')]
  elseif a == b
    # Lines added. New empty lines are breaks typed at the end of the line above (decisions/edit-intent.md, rule 8).
    if atEnd
      return [RangeChange(n - 1, strlen(old.lines[n - 1]), n - 1, strlen(old.lines[n - 1]), "\n" .. join(newLines, "\n"))]
    elseif a > 0 && empty(filter(copy(newLines), (_, l) => l != ''))
      return [RangeChange(a - 1, strlen(old.lines[a - 1]), a - 1, strlen(old.lines[a - 1]), repeat("\n", len(newLines)))]
    endif
    return [RangeChange(a, 0, a, 0, join(newLines, "\n") .. "\n")]
  endif
  # Lines changed: the first and the last differ, so what is kept before and after the change
  # lies in them.
  var oldFirst = str2list(old.lines[a])
  var newFirst = str2list(newLines[0])
  var oldLast = b - a == 1 ? oldFirst : str2list(old.lines[b - 1])
  var newLast = len(newLines) == 1 ? newFirst : str2list(newLines[-1])
  var p = 0
  while p < len(oldFirst) && p < len(newFirst) && oldFirst[p] == newFirst[p]
    p += 1
  endwhile
  var room = min([b - a == 1 ? len(oldFirst) - p : len(oldLast), len(newLines) == 1 ? len(newFirst) - p : len(newLast)])
  var q = 0
  while q < room && oldLast[-1 - q] == newLast[-1 - q]
    q += 1
  endwhile
  # What replaces the old text between the kept ends (in bytes, not characters: a :%s of a long
  # text is one change across all its lines).
  var joined = len(newLines) == 1 ? newLines[0] : join(newLines, "\n")
  var from = Bytes(newFirst, p)
  var trimmed = strlen(newLines[-1]) - Bytes(newLast, len(newLast) - q)
  var text = strlen(joined) - trimmed > from ? strpart(joined, from, strlen(joined) - trimmed - from) : ''
  var removedNothing = b - a == 1 && p + q == len(oldFirst)
  if !removedNothing && text != ''
    # A replacement takes in the rest of the words it touches (the kept letters around it).
    if IsWord(get(oldFirst, p, 0)) || IsWord(strgetchar(text, 0))
      while p > 0 && IsWord(oldFirst[p - 1])
        p -= 1
        text = nr2char(oldFirst[p]) .. text
      endwhile
    endif
    if (len(oldLast) - q - 1 >= 0 && IsWord(oldLast[len(oldLast) - q - 1])) || IsWord(strgetchar(text, strcharlen(text) - 1))
      while q > 0 && IsWord(oldLast[len(oldLast) - q])
        text ..= nr2char(oldLast[len(oldLast) - q])
        q -= 1
      endwhile
    endif
  elseif b - a == 1 && len(newLines) == 1 && bufnr() == buf && line('.') == newFirstLine + 1 + (a - first)
    # Typing or deleting where the same text could come from several places: where the cursor is.
    var inserted: list<number>
    [p, q, inserted] = AtCursor(oldFirst, p, q, str2list(text), col('.') - 1)
    text = list2str(inserted)
  endif
  var startByte = Bytes(oldFirst, p)
  var endByte = strlen(old.lines[b - 1]) - (strlen(list2str(oldLast)) - Bytes(oldLast, len(oldLast) - q))
  if p == 0 && q == 0 && (b - a > 1 || len(newLines) > 1) && !atEnd
    # Whole lines replaced (:m, :sort): with their breaks, so the daemon keeps the lines that
    # stay, and a line added goes after a break, not at the end of the line above it.
    return [RangeChange(a, 0, b, 0, text .. "\n")]
  endif
  if (b - a > 1 || len(newLines) > 1) && b - a + len(newLines) < 2000
    # Across lines (3J, gq, :s/\n/ /): the words kept are kept, only the space between them changes.
    var oldText = join(old.lines[a : b - 1], "\n")
    var changes = SpaceChanges(strpart(oldText, startByte, strlen(oldText) - startByte - (strlen(old.lines[b - 1]) - endByte)), text, a, startByte)
    if changes != null
      return changes
    endif
  endif
  return [RangeChange(a, startByte, b - 1, endByte, text)]
enddef

# When `new` has the words (runs of non-blanks) of `old`, in order, with only blanks changed
# between some of them: a change for each changed blank, the last first; null otherwise (or when
# there are too many words to compare cheaply). `old` starts at line `line`, byte `character`.
# A line break replaced by a space (a join) is a space inserted after the break, then the
# break removed, so what someone typed at the end of the line at the same time stays before it.
def SpaceChanges(old: string, new: string, line: number, character: number): any
  var oldWords = Words(old)
  var newWords = Words(new)
  if len(oldWords) != len(newWords) || len(oldWords) > 2000
    return null
  endif
  var changes: list<dict<any>> = []
  var oldAt = 0
  var newAt = 0
  for i in range(len(oldWords) + 1)
    var [oldStart, oldWord] = i < len(oldWords) ? oldWords[i] : [strlen(old), '']
    var [newStart, newWord] = i < len(newWords) ? newWords[i] : [strlen(new), '']
    if oldWord !=# newWord
      return null
    endif
    var oldSpace = strpart(old, oldAt, oldStart - oldAt)
    var newSpace = strpart(new, newAt, newStart - newAt)
    if oldSpace !=# newSpace
      var from = Position(old, oldAt, line, character)
      var to = Position(old, oldStart, line, character)
      var kept = strlen(newSpace)
      if stridx(oldSpace, "\n") >= 0 && newSpace != '' && stridx(newSpace, "\n") < 0
          && strpart(oldSpace, strlen(oldSpace) - kept) ==# newSpace
        # The new blank ends the old one (gJ keeps the indent, J one of its spaces): only what
        # goes before it is removed, so what was typed after the indent stays after it.
        var keptFrom = Position(old, oldStart - kept, line, character)
        insert(changes, RangeChange(from[0], from[1], keptFrom[0], keptFrom[1], ''))
      elseif stridx(oldSpace, "\n") >= 0 && newSpace != '' && stridx(newSpace, "\n") < 0
        insert(changes, RangeChange(from[0], from[1], to[0], to[1], ''))
        insert(changes, RangeChange(to[0], to[1], to[0], to[1], newSpace))
      else
        insert(changes, RangeChange(from[0], from[1], to[0], to[1], newSpace))
      endif
    endif
    oldAt = oldStart + strlen(oldWord)
    newAt = newStart + strlen(newWord)
  endfor
  return changes
enddef

# The runs of non-blanks of `text`, as [byte offset, run].
def Words(text: string): list<list<any>>
  var words: list<list<any>> = []
  var [word, start, end] = matchstrpos(text, '[^ \t\n]\+')
  while start >= 0
    add(words, [start, word])
    [word, start, end] = matchstrpos(text, '[^ \t\n]\+', end)
  endwhile
  return words
enddef

# The document position of byte `offset` of `text`, which starts at line `line`, byte `character`.
def Position(text: string, offset: number, line: number, character: number): list<number>
  var before = strpart(text, 0, offset)
  var breaks = count(before, "\n")
  return breaks == 0 ? [line, character + offset] : [line + breaks, offset - strridx(before, "\n") - 1]
enddef

def RangeChange(l1: number, c1: number, l2: number, c2: number, text: string): dict<any>
  return {range: {start: {line: l1, character: c1}, end: {line: l2, character: c2}}, text: text}
enddef

# The length in bytes of the first `count` characters of `chars`.
def Bytes(chars: list<number>, count: number): number
  return count > 0 ? strlen(list2str(chars[: count - 1])) : 0
enddef

# Letters, digits and `_` (as the daemon counts them), by code point.
def IsWord(c: number): bool
  return c == 95 || (c > 0 && nr2char(c) =~ '[[:alnum:]]') || (c > 127 && charclass(nr2char(c)) >= 2)
enddef

# A one-line insertion or removal whose text repeats around it (typing `l` in `helo`) could be at
# several places: the one the cursor (byte `cursor` of the new line) says, as the daemon does
# (decisions/edit-intent.md, rule 3); else the rightmost, where the trimming put it.
def AtCursor(old: list<number>, prefix: number, suffix: number, inserted: list<number>, cursor: number): list<any>
  var inserting = !empty(inserted)
  var text = inserting ? copy(inserted) : len(old) - suffix > prefix ? old[prefix : len(old) - suffix - 1] : []
  var p = prefix
  while true
    var start = Bytes(old, p)
    if inserting ? (start + strlen(list2str(text)) == cursor || start == cursor) : start == cursor
      return [p, len(old) - p - (inserting ? 0 : len(text)), inserting ? text : []]
    endif
    if p == 0 || old[p - 1] != text[-1]
      return [prefix, suffix, inserted]
    endif
    p -= 1
    text = [old[p]] + text[: -2]
  endwhile
  return [prefix, suffix, inserted]
enddef

# The reply to one of our edits: accepted, nothing to do (the daemon keeps what this editor saw);
# refused, the user is told and the buffer is resynced keeping its text (every later edit of the
# epoch is refused too).
def OnEditReply(buf: number, opened: number, reply: dict<any>)
  if !has_key(shared, buf) || shared[buf].opened != opened
    return   # an edit of an earlier open or epoch (a reopen also starts at epoch 0)
  endif
  var state = shared[buf]
  if has_key(reply, 'error') && ReadOnlyRefused(buf, reply.error)
    return
  elseif has_key(reply, 'error') && !get(state, 'resyncing', false)
    state.resyncing = true
    Warn('the daemon refused an edit (' .. get(get(reply, 'error', {}), 'message', 'no reason') .. '); resyncing, your text is kept')
    timer_start(0, (_) => ResyncKeepingText(buf))
  endif
enddef

# A local change applied to a copy of the text (lines and final newline).
def ApplyLocalChange(text: dict<any>, change: dict<any>)
  if has_key(change, 'range')
    ApplyChangeToLines(text, change)
  elseif has_key(change, 'lines')
    SpliceLines(text, change.lines.start, change.lines.end, change.newLines)
  else
    var lines = split(change.text, "\n", 1)
    text.eol = len(lines) > 1 && lines[-1] == ''
    text.lines = text.eol ? lines[: -2] : lines
  endif
enddef

def OnMessage(message: dict<any>)
  var method = get(message, 'method', '')
  if method == 'document/edit'
    OnDaemonEdit(message.params)
  elseif method == 'cursor/update'
    OnCursor(message.params)
    FollowCursor(message.params)
  elseif method == 'window/showMessage'
    Warn(message.params.message)
  elseif method == 'document/forked'
    OnDocumentForked(message.params)
  elseif method == 'document/readOnly'
    OnReadOnly(message.params)
  elseif method == 'document/editRefused' && ReadOnlyRefused(BufferOf(get(message.params, 'uri', '')), get(message.params, 'error', {}))
    # a read-only document: said once, and the shared text comes back
  elseif method == 'document/editRefused'
    Warn('the daemon refused an edit of ' .. get(message.params, 'uri', '?') .. ' (' .. get(get(message.params, 'error', {}), 'message', 'no reason') .. ')')
  elseif method == 'peer/changed'
    OnPeerChanged(message.params)
  endif
enddef

# A peer as the person knows it: its user's name; a daemon no editor has named yet is "quire",
# which names no one, so it is told by its address.
def PeerName(user: string, address: string): string
  return user != '' && user != 'quire' ? user : address != '' ? 'a peer (' .. address .. ')' : 'a peer'
enddef

# A peer's document of the same name, made apart from ours: kept whole as `copy`; say how to see
# it and how to merge it.
def OnDocumentForked(params: dict<any>)
  var who = PeerName(get(params, 'user', ''), get(params, 'address', ''))
  Warn(who .. ' has another document named "' .. params.uri .. '", created separately from yours. Both are kept whole: theirs as "'
    .. params.copy .. '". :QuireOpen ' .. params.copy .. ' shows it, :QuireMerge ' .. params.copy .. ' merges its text into yours')
enddef

# Peers joining, leaving and failing are shown (a failure with its reason, such as a wrong secret).
def OnPeerChanged(params: dict<any>)
  var who = PeerName(get(params, 'user', ''), get(params, 'address', ''))
  linksUp = get(params, 'linksUp', linksUp)   # the daemon counts the links up
  if params.event == 'joined'
    Say(who .. ' joined')
  else
    var why = get(params, 'reason', '')
    if params.event == 'failed'
      Warn((why != '' ? why : 'a link failed') .. (params.link == 0 ? '' : ' (' .. who .. ')'))   # the reason first: it is what a cut line keeps
    else
      Say(who .. ' left' .. (why != '' ? ' (' .. why .. ')' : ''))
    endif
  endif
  Log('peer ' .. who .. ' ' .. params.event)
  redrawstatus!
enddef

def BufferOf(uri: string): number
  for [buf, state] in items(shared)
    if state.uri == uri
      return str2nr(buf)
    endif
  endfor
  return -1
enddef

# The revision rule: apply only if based on every edit we sent; otherwise drop (it comes again).
def OnDaemonEdit(params: dict<any>)
  var buf = BufferOf(params.uri)
  if buf < 0 || shared[buf].detached
    return   # sent before our close arrived: the reopen brings the text
  endif
  Flush(buf)
  var state = shared[buf]
  if params.epoch != state.epoch || params.revision != state.editor
    Log('dropped a daemon edit based on ' .. params.revision .. ', we are at ' .. state.editor)
    return
  endif
  ApplyChanges(buf, params.changes)
  # The daemon made this edit after all of ours: the listener check's old lines take it too.
  for change in params.changes
    ApplyChangeToLines(state.sent, change)
  endfor
  state.daemon += 1
  if get(state, 'jump', false) && !empty(params.changes) && bufnr() == buf
    state.jump = false
    var at = params.changes[-1].range.start
    cursor(at.line + 1, at.character + 1)
  endif
  Log('applied daemon edit ' .. state.daemon .. ' based on ' .. params.revision)
  if has_key(state, 'savedHash') && get(params, 'hash', '') == state.savedHash
    # The buffer now shows what :QuireSave wrote.
    setbufvar(buf, '&modified', 0)
    remove(state, 'savedHash')
    MarkFileRead(buf)
  endif
  if has_key(params, 'hash')
    # Hashing the whole buffer costs milliseconds in a long one: check once edits pause.
    state.hash = params.hash
    state.hashAt = [state.editor, state.daemon]
    timer_stop(get(state, 'hashTimer', -1))
    var opened = state.opened
    state.hashTimer = timer_start(100, (_) => CheckHash(buf, opened))
  endif
enddef

# Self-healing: if nothing changed since the last daemon edit, the buffer must have its hash.
# Not while the daemon is away (what the buffer shows then is not yet sent: the reopen takes it)
# nor after a reopen or resync since the edit (`opened`), whose revisions start again.
def CheckHash(buf: number, opened: number)
  if !ready || !has_key(shared, buf) || shared[buf].detached || shared[buf].opened != opened
    return
  endif
  var state = shared[buf]
  Flush(buf)
  if [state.editor, state.daemon] == state.hashAt && sha256(DocumentText(buf)) != state.hash
    Log('hash mismatch: resyncing')
    Resync(buf)
  endif
enddef

# Applies range changes in order to the buffer, reading and writing only the lines they cover,
# so a remote keystroke costs the same in a 10-line and a 100,000-line buffer. The document's
# last line after a final "\n" is the 'eol' flag, not a buffer line.
def ApplyChanges(buf: number, changes: list<any>)
  applying = true
  var touched = [-1, -1]
  var frozen = Thaw(buf)
  var undolevels = WithoutUndo(buf)
  try
    for change in changes
      var places = PlacesIn(buf)
      var lineCount = getbufinfo(buf)[0].linecount
      var eol = getbufvar(buf, '&eol')
      var splice = Splice(change, lineCount, eol, (n: number): string => getbufline(buf, n + 1)[0])
      if splice.eol != eol
        setbufvar(buf, '&eol', splice.eol)
      endif
      # Set the lines both sides have, then insert or delete the difference, so marks and the
      # cursor elsewhere stay put.
      var first = splice.first
      var replacement = splice.lines
      var common = min([len(replacement), splice.end - first])
      if common > 0
        setbufline(buf, first + 1, replacement[: common - 1])
      endif
      if len(replacement) > common
        appendbufline(buf, first + common, replacement[common :])
      elseif splice.end - first > common
        ClearProps(buf, first + common, splice.end + 1)
        deletebufline(buf, first + common + 1, splice.end)
      endif
      MovePlaces(buf, places, change)
      MoveCursors(buf, change)
      var last = first + max([len(replacement), 1])
      touched = touched[0] < 0 ? [first - 1, last] : [min([touched[0], first - 1]), max([touched[1], last])]
    endfor
  finally
    RestoreUndo(buf, undolevels, !empty(changes))
    Refreeze(buf, frozen)
    listener_flush(buf)
    applying = false
  endtry
  if touched[0] >= 0
    RedrawCursors(buf, touched[0], touched[1])
  endif
  FollowedTextMoved(buf)
enddef

# Cursors of the windows showing `buf`, and its marks a-z when it is the current buffer: they
# move with a daemon change as Emacs markers move with text (MovePlaces).
def PlacesIn(buf: number): list<dict<any>>
  var places: list<dict<any>> = []
  for winid in win_findbuf(buf)
    var pos = getcurpos(winid)
    add(places, {winid: winid, line: pos[1] - 1, character: pos[2] - 1})
  endfor
  if bufnr() == buf
    for mark in getmarklist(buf)
      if mark.mark =~ "^'[a-z<>]$"
        add(places, {mark: mark.mark, line: mark.pos[1] - 1, character: mark.pos[2] - 1})
      endif
    endfor
  endif
  return places
enddef

def MovePlaces(buf: number, places: list<dict<any>>, change: dict<any>)
  for place in places
    var [line, character] = MovedPosition(place.line, place.character, change)
    if line == place.line && character == place.character
      continue
    endif
    if has_key(place, 'winid')
      win_execute(place.winid, printf('call cursor(%d, %d)', line + 1, character + 1))
    elseif bufnr() == buf
      setpos(place.mark, [0, line + 1, character + 1, 0])
    endif
  endfor
enddef

# Where a position (0-based line, byte) is after a range change: before it or at its start, it
# stays; after it, it moves with the text after it; inside what was replaced, it goes to the
# change's start.
export def MovedPosition(line: number, character: number, change: dict<any>): list<number>
  var start = change.range.start
  var end = change.range.end
  if line < start.line || (line == start.line && character <= start.character)
    return [line, character]
  endif
  if line < end.line || (line == end.line && character < end.character)
    return [start.line, start.character]
  endif
  var inserted = split(change.text, "\n", 1)
  var lastLine = start.line + len(inserted) - 1
  var lastEnd = (len(inserted) == 1 ? start.character : 0) + strlen(inserted[-1])
  if line == end.line
    return [lastLine, lastEnd + character - end.character]
  endif
  return [line + lastLine - end.line, character]
enddef

# What a daemon change does to a text of `lineCount` lines (line `n`, 0-based, is `Line(n)`)
# with final newline `eol`: lines first..end-1 become `lines`, and the final newline is `eol`.
def Splice(change: dict<any>, lineCount: number, eol: bool, Line: func(number): string): dict<any>
  var first = change.range.start.line
  var last = change.range.end.line
  var firstText = first < lineCount ? Line(first) : ''
  var lastText = last < lineCount ? Line(last) : ''
  var replacement = split(strpart(firstText, 0, change.range.start.character) .. change.text
                          .. strpart(lastText, change.range.end.character), "\n", 1)
  var newEol = eol
  if last + 1 >= lineCount + (eol ? 1 : 0)
    # The change reaches the end of the text: its last line decides the final newline.
    newEol = first + len(replacement) > 1 && replacement[-1] == ''
    if newEol
      remove(replacement, -1)
    endif
  endif
  return {first: first, end: min([last + 1, lineCount]), lines: replacement, eol: newEol}
enddef

# The lines (and final newline) the daemon will have once it has our edits, taken from the buffer
# when both agree (an open, a reopen, a resync), then moved on by each edit sent and each daemon
# edit applied. Never sent: Vim's listener names the lines a command changed but not their old
# text, so this is where RangeChanges reads the old lines to send the exact range (and checks
# that the lines no record touched are unchanged); a mismatch sends the whole text instead.
def TakeSent(buf: number)
  shared[buf].sent = {lines: getbufline(buf, 1, '$'), eol: getbufvar(buf, '&eol')}
enddef

# Lines start..end-1 (0-based) of `text` become `newLines`.
def SpliceLines(text: dict<any>, start: number, end: number, newLines: list<string>)
  var stop = min([end, len(text.lines)])
  if stop > start
    remove(text.lines, start, stop - 1)
  endif
  extend(text.lines, newLines, min([start, len(text.lines)]))
enddef

# A daemon change applied to `text` as ApplyChanges applies it to a buffer.
def ApplyChangeToLines(text: dict<any>, change: dict<any>)
  var splice = Splice(change, len(text.lines), text.eol, (n: number): string => text.lines[n])
  text.eol = splice.eol
  SpliceLines(text, splice.first, splice.end, splice.lines)
enddef

# For the client's own tests.
export def ApplyChangesForTest(buf: number, changes: list<any>)
  ApplyChanges(buf, changes)
enddef

# After a refused edit: the daemon resolves what the buffer shows against what it had sent this
# buffer at its epoch and daemon revision (by identity, as an edit), and the buffer takes the
# result, which is its own text unless others typed meanwhile. A new epoch starts; nothing typed
# is lost, and no base is needed: the daemon knows what this editor saw.
export def ResyncKeepingText(buf: number)
  if !has_key(shared, buf) || !ready
    return
  endif
  listener_flush(buf)
  var state = shared[buf]
  state.records = []   # the resync sends the whole text
  var params = {uri: state.uri, text: DocumentText(buf), epoch: state.epoch, revision: state.daemon}
  Log('resyncing ' .. state.uri .. ' keeping the buffer text, sending ' .. string(sort(keys(params))))
  var reply = Request('document/resync', params)
  state.resyncing = false
  if type(reply) != v:t_dict
    return
  endif
  if reply.text != DocumentText(buf)
    ReplaceText(buf, reply.text)
  endif
  state.epoch = reply.epoch
  state.opened = NextOpen()
  state.editor = 0
  state.daemon = 0
  TakeSent(buf)
  ForgetUndo(buf)
  Log('resynced ' .. state.uri .. ' keeping the buffer text, epoch ' .. reply.epoch)
enddef

# Replaces the whole buffer text (not reported to the daemon).
def ReplaceText(buf: number, text: string)
  applying = true
  var frozen = Thaw(buf)
  var undolevels = WithoutUndo(buf)
  try
    var lines = split(text, "\n", 1)
    var eol = len(lines) > 1 && lines[-1] == ''
    if eol
      remove(lines, -1)
    endif
    setbufvar(buf, '&eol', eol)
    ClearProps(buf, 1, getbufinfo(buf)[0].linecount)
    deletebufline(buf, 1, '$')
    setbufline(buf, 1, lines)
  finally
    RestoreUndo(buf, undolevels, true)
    Refreeze(buf, frozen)
    listener_flush(buf)
    applying = false
  endtry
  RedrawCursors(buf)
enddef

# The escape hatch: the daemon's text replaces the buffer and a new epoch starts.
export def Resync(buf: number)
  if !has_key(shared, buf) || !ready
    return
  endif
  var state = shared[buf]
  var reply = Request('document/resync', {uri: state.uri})
  if type(reply) != v:t_dict
    return
  endif
  ReplaceText(buf, reply.text)
  state.records = []
  state.epoch = reply.epoch
  state.opened = NextOpen()
  state.editor = 0
  state.daemon = 0
  TakeSent(buf)
  ForgetUndo(buf)
enddef

# Read-only documents (protocol/decisions/roles.md): where this daemon's role in a document's
# project does not allow changing it, the buffer is 'nomodifiable' (the daemon's changes still go
# in: Thaw), and the person is told why once: the first time they try to type (Vim's E21, seen at
# the next SafeState) or the daemon refuses an edit. A role change (document/readOnly) makes the
# buffer writable again, or read-only.

# The read-only state a document/open reply says.
def ReadOnlyFrom(buf: number, reply: dict<any>)
  SetReadOnly(buf, get(reply, 'readOnly', false), get(reply, 'readOnlyReason', ''))
enddef

def OnReadOnly(params: dict<any>)
  var buf = BufferOf(get(params, 'uri', ''))
  if buf >= 0
    SetReadOnly(buf, get(params, 'readOnly', false), get(params, 'reason', ''))
  endif
enddef

# Makes `buf` read-only (its 'modifiable' kept to give back) or writable again; `reason` is the
# daemon's sentence ("you can read notes but not change it (role read)").
def SetReadOnly(buf: number, readOnly: bool, reason: string)
  if !has_key(shared, buf)
    return
  endif
  var state = shared[buf]
  var was = get(state, 'readOnly', false)
  state.readOnlyReason = reason
  if readOnly && !was
    state.readOnly = true
    state.toldReadOnly = false
    state.modifiable = getbufvar(buf, '&modifiable')
    setbufvar(buf, '&modifiable', 0)
    augroup quire_readonly
      autocmd! SafeState * quire#TriedToType()
    augroup END
    Log(state.uri .. ' is read-only: ' .. reason)
  elseif !readOnly && was
    Unfreeze(buf, state)
    if reason != ''
      Say(reason)
    endif
  endif
  redrawstatus!
enddef

# `buf` is writable again (its own 'modifiable' back): its role allows it, or it is no longer shared.
def Unfreeze(buf: number, state: dict<any>)
  if get(state, 'readOnly', false)
    state.readOnly = false
    setbufvar(buf, '&modifiable', get(state, 'modifiable', true))
  endif
enddef

# Vim's own undo history holds nothing another person typed (protocol/client-contract.md,
# section 4): its undo is line-based, so whatever reaches it (U, g-, :undo N, :undo 0, :earlier
# and :later with any count or unit, a plugin's normal! u, an undo file read with the buffer)
# would put back old lines over a partner's text and send that as your edit. The daemon's
# changes are applied with 'undolevels' at -1, which makes them no undo block and drops the
# whole history before them, and the history is dropped again whenever the buffer starts an
# epoch (an open, reopen or resync, after an undo file was read). What remains is your own edits
# since another's last one, which only your own text is in. Your blocks keep their changenr()
# (Vim keeps counting), so undoGroup still tells one command from the next. In Insert mode (and
# CTRL-O from it) the history is kept until the insert ends (InsertLeft, InsertEnded, or the
# next edit or cursor move out of it): dropping it there would cut the insert into two undo
# blocks, two steps of the daemon's undo, and leave Vim's insert without its undo record.
def Inserting(buf: number): bool
  return bufnr() == buf && mode(1) =~# '^\(i\|R\|ni\)'
enddef

# Before a daemon change to `buf`: 'undolevels' -1 ([the 'undolevels' to give back to
# RestoreUndo]), or, in Insert mode (unless `force`), nothing ([]) but a note that the history
# holds others' text now.
def WithoutUndo(buf: number, force = false): list<number>
  if !has_key(shared, buf) || (!force && Inserting(buf))
    if has_key(shared, buf)
      shared[buf].undoKept = true
    endif
    return []
  endif
  var undolevels: number = getbufvar(buf, '&l:undolevels')
  setbufvar(buf, '&undolevels', -1)
  return [undolevels]
enddef

# After the change: 'undolevels' back; `changed`: the history is gone.
def RestoreUndo(buf: number, undolevels: list<number>, changed: bool)
  if !empty(undolevels)
    setbufvar(buf, '&undolevels', undolevels[0])
    if changed && has_key(shared, buf)
      shared[buf].undoKept = false
    endif
  endif
enddef

# Drops Vim's undo history of `buf` (in Insert mode, unless `force`, once the insert ends).
# Vim drops it at the first change made with 'undolevels' -1: the first line set to itself,
# without a place in the change list ('. and g;), recorded by nobody, 'modified' unchanged.
def ForgetUndo(buf: number, force = false)
  if !has_key(shared, buf) || !bufloaded(buf) || (bufnr() == buf && empty(undotree().entries))
    return   # nothing to drop, and no change made ('readonly' would warn of it: W10)
  endif
  listener_flush(buf)   # what was typed stays recorded; the line set below is not
  var modified = getbufvar(buf, '&modified')
  applying = true
  var frozen = Thaw(buf)
  var undolevels = WithoutUndo(buf, force)
  try
    if !empty(undolevels)
      keepjumps setbufline(buf, 1, getbufline(buf, 1))
    endif
  finally
    RestoreUndo(buf, undolevels, true)
    Refreeze(buf, frozen)
    listener_flush(buf)
    applying = false
    setbufvar(buf, '&modified', modified)
  endtry
enddef

# The insert ended (Esc, or CTRL-O before its command): what was typed goes to the daemon, then
# the history the insert kept goes.
export def InsertLeft(buf: number)
  Flush(buf)
  if has_key(shared, buf) && get(shared[buf], 'undoKept', false)
    ForgetUndo(buf, true)
  endif
enddef

# Back in Normal mode from Insert or Replace mode (CTRL-C has no InsertLeave).
export def InsertEnded(buf: number)
  if has_key(shared, buf) && get(shared[buf], 'undoKept', false)
    ForgetUndo(buf, true)
  endif
enddef

# Lets the daemon's changes into a read-only buffer; what to give back to Refreeze.
def Thaw(buf: number): bool
  var frozen = has_key(shared, buf) && get(shared[buf], 'readOnly', false) && !getbufvar(buf, '&modifiable')
  if frozen
    setbufvar(buf, '&modifiable', 1)
  endif
  return frozen
enddef

def Refreeze(buf: number, frozen: bool)
  if frozen
    setbufvar(buf, '&modifiable', 0)
  endif
enddef

# Says once why the buffer cannot change.
def TellReadOnly(buf: number)
  if has_key(shared, buf) && !get(shared[buf], 'toldReadOnly', false)
    shared[buf].toldReadOnly = true
    Warn(get(shared[buf], 'readOnlyReason', 'this document is read-only here'))
  endif
enddef

# Someone typed in a read-only buffer: Vim said E21; say why, once.
export def TriedToType()
  var buf = bufnr()
  if v:errmsg =~# '^E21:' && has_key(shared, buf) && get(shared[buf], 'readOnly', false) && !get(shared[buf], 'toldReadOnly', false)
    v:errmsg = ''
    TellReadOnly(buf)
  endif
enddef

# The daemon refused an edit of `buf` because it is read-only here (-32019): the buffer becomes
# read-only, the person is told once, and the shared text comes back (what was typed cannot go
# in). False for any other error.
def ReadOnlyRefused(buf: number, error: dict<any>): bool
  if get(error, 'code', 0) != -32019 || buf < 0 || !has_key(shared, buf)
    return false
  endif
  var data = get(error, 'data', {})
  SetReadOnly(buf, true, get(data, 'reason', get(shared[buf], 'readOnlyReason', '')))
  TellReadOnly(buf)
  var state = shared[buf]
  if !get(state, 'resyncing', false)
    state.resyncing = true
    timer_start(0, (_) => ResyncReadOnly(buf))
  endif
  return true
enddef

def ResyncReadOnly(buf: number)
  if has_key(shared, buf)
    Flush(buf)
    shared[buf].resyncing = false
    Resync(buf)
  endif
enddef

# Whether `buf` is shared read-only (for the client's tests).
export def ReadOnlyForTest(buf: number): bool
  return has_key(shared, buf) && get(shared[buf], 'readOnly', false)
enddef

export def SendCursor(buf: number)
  if !ready || !has_key(shared, buf) || buf != bufnr()
    return
  endif
  Flush(buf)
  var state = shared[buf]
  var position = {line: line('.') - 1, character: col('.') - 1}
  Notify('cursor/update', {uri: state.uri, epoch: state.epoch, revision: state.daemon,
    selections: [{start: position, end: position}]})
enddef

def OnCursor(params: dict<any>)
  var buf = BufferOf(params.uri)
  if buf < 0 || shared[buf].detached
    return
  endif
  if !has_key(cursors, buf)
    cursors[buf] = {}
  endif
  var key = string(params.session)
  if empty(params.selections)
    if has_key(cursors[buf], key)
      remove(cursors[buf], key)
    endif
  else
    cursors[buf][key] = {name: params.user.name, selections: deepcopy(params.selections)}
  endif
  DrawCursor(buf, params.session)
enddef

# Draws one session's selections, cursor and name in `buf` from what `cursors` holds, in place
# of what was drawn before.
def DrawCursor(buf: number, session: number)
  prop_remove({type: 'quire_cursor', id: session, bufnr: buf, all: true})
  prop_remove({type: 'quire_selection', id: session, bufnr: buf, all: true})
  var key = buf .. ':' .. session
  if has_key(nameMarks, key)
    prop_remove({type: 'quire_name', id: remove(nameMarks, key), bufnr: buf, all: true})
  endif
  if has_key(namesShown, key)
    remove(namesShown, key)
  endif
  var shown = get(get(cursors, buf, {}), string(session), {})
  if empty(shown)
    return
  endif
  var lineCount = getbufinfo(buf)[0].linecount
  for selection in shown.selections
    # A selection (anchor and cursor apart) is highlighted from its first to its last position.
    var from = selection.start
    var to = selection.end
    if to.line < from.line || (to.line == from.line && to.character < from.character)
      [from, to] = [to, from]
    endif
    if (from.line != to.line || from.character != to.character) && to.line < lineCount
      # One property per line: a property across lines loses its continuation when a line of
      # it is set (Vim then fails deleting lines: E685).
      var texts = getbufline(buf, from.line + 1, min([to.line, from.line + 500]) + 1)
      for i in range(len(texts))
        var startCol = i == 0 ? min([from.character, strlen(texts[i])]) + 1 : 1
        var endCol = from.line + i == to.line ? min([to.character, strlen(texts[i])]) + 1 : strlen(texts[i]) + 1
        if endCol > startCol
          prop_add(from.line + i + 1, startCol, {type: 'quire_selection', id: session, bufnr: buf, end_col: endCol})
        endif
      endfor
    endif
    var lnum = selection.end.line + 1
    if lnum <= lineCount
      var length = strlen(getbufline(buf, lnum)[0])
      var col = min([selection.end.character + 1, length + 1])
      if col <= length
        prop_add(lnum, col, {type: 'quire_cursor', id: session, bufnr: buf, length: 1})
      endif
      # The name, as virtual text at the end of the line (Vim 9.0.0067 and later).
      nameMarks[key] = prop_add(lnum, 0, {type: 'quire_name', bufnr: buf, text: '  ' .. shown.name, text_align: 'after'})
      namesShown[key] = {name: shown.name, line: lnum - 1, character: col - 1}
    endif
  endfor
enddef

# Others' positions in `buf` move with a change (ours sent, or the daemon's applied), as the
# daemon moves them, so they can be drawn again where the text they are attached to went.
def MoveCursors(buf: number, change: dict<any>)
  if !has_key(change, 'range')
    return
  endif
  for shown in values(get(cursors, buf, {}))
    for selection in shown.selections
      for end in ['start', 'end']
        var [line, character] = MovedPosition(selection[end].line, selection[end].character, change)
        selection[end] = {line: line, character: character}
      endfor
    endfor
  endfor
enddef

# Draws again the cursors with a position on lines first..last (0-based; all when last < 0):
# setting a line's text removes its text properties, so a third person's edit of the line
# holding someone's cursor would otherwise make that cursor vanish.
def RedrawCursors(buf: number, first = 0, last = -1)
  for [key, shown] in items(get(cursors, buf, {}))
    var lines = flattennew(mapnew(shown.selections, (_, s) => [s.start.line, s.end.line]))
    if last < 0 || !empty(filter(lines, (_, l) => l >= first && l <= last))
      DrawCursor(buf, str2nr(key))
    endif
  endfor
enddef

# Removes our properties from lines first..last (1-based) before lines are deleted: a property
# Vim split across lines (Enter at its end) can lose its continuation, and deleting its line
# then fails (E685); they are drawn again from `cursors`.
def ClearProps(buf: number, first: number, last: number)
  if empty(prop_type_get('quire_cursor'))
    return   # never started
  endif
  var lineCount = getbufinfo(buf)[0].linecount
  for type in ['quire_cursor', 'quire_selection', 'quire_name']
    prop_remove({type: type, bufnr: buf, all: true}, max([first, 1]), min([last, lineCount]))
  endfor
enddef

# The buffer no longer shows the document: others' cursors go.
def ForgetCursors(buf: number)
  var sessions = keys(get(cursors, buf, {}))
  if has_key(cursors, buf)
    remove(cursors, buf)
  endif
  if bufloaded(buf)
    for session in sessions
      DrawCursor(buf, str2nr(session))
    endfor
  endif
enddef

# Others' cursors shown in `buf`, by name: {name: [line, character]} (0-based).
export def CursorsShown(buf: number): dict<list<number>>
  var shown: dict<list<number>> = {}
  for [key, mark] in items(namesShown)
    if key =~ '^' .. buf .. ':'
      shown[mark.name] = [mark.line, mark.character]
    endif
  endfor
  return shown
enddef

# The name of the document `buf` is shared as ('' when it is not shared): for a file, the name
# the daemon gave it.
export def SharedName(buf: number = bufnr()): string
  return has_key(shared, buf) ? shared[buf].uri : ''
enddef

# For 'statusline': "[quire]" in a shared buffer, with the number of peer links when any.
export def StatusLine(): string
  if has_key(conflicts, bufnr())
    return '[quire: NOT shared, choose]'
  elseif !has_key(shared, bufnr())
    return ''
  elseif !ready
    return '[quire: reconnecting]'
  elseif get(shared[bufnr()], 'readOnly', false)
    return '[quire: read-only]'
  endif
  var peers = linksUp
  return peers > 0 ? printf('[quire %d peer%s]', peers, peers == 1 ? '' : 's') : '[quire]'
enddef

export def Listen(port: string)
  Start()
  var reply = Request('peer/listen', {port: port == '' ? 0 : str2nr(port)})
  if type(reply) == v:t_dict
    listenPort = reply.port   # the same port again if the daemon restarts
    Say('listening for peers on port ' .. reply.port)
  endif
enddef

# :QuireDisconnect [link]: take down one link (as :QuireStatus numbers them), or all. The
# disconnects are asked without waiting: the person types on meanwhile (a synchronous request
# here, with the links' "left" notifications arriving during it, sometimes never saw its reply in
# Vim 9.0 and held typing for its whole timeout), and one message says who was disconnected.
export def Disconnect(link: string)
  Start()
  var status = Request('peer/status', {})
  if type(status) != v:t_dict
    return
  endif
  var links = filter(copy(status.links), (_, l) => link == '' || l.link == str2nr(link))
  if empty(links)
    Say(link == '' ? 'no peer links' : 'no peer link ' .. link)
    return
  endif
  var tally: dict<any> = {waiting: len(links), gone: []}
  for l in links
    ch_sendexpr(channel, {method: 'peer/disconnect', params: {link: l.link}},
      {callback: function(DisconnectAnswered, [tally, PeerName(l.user, l.address)])})
  endfor
enddef

def DisconnectAnswered(tally: dict<any>, name: string, _: channel, reply: any)
  if type(reply) == v:t_dict && has_key(reply, 'error')
    Warn('peer/disconnect failed: ' .. reply.error.message)
  else
    add(tally.gone, name)
  endif
  tally.waiting -= 1
  if tally.waiting == 0 && !empty(tally.gone)
    Say('disconnected from ' .. join(tally.gone, ', '))   # one message: several would ask for ENTER
  endif
enddef

# :QuireMerge {name}: copy the text of document {name} (a copy of this name created separately
# on another daemon, "name#id") to the end of this buffer's document; undo takes it back.
export def Merge(from: string)
  if !has_key(shared, bufnr()) || !ready
    Warn('this buffer is not shared')
    return
  endif
  Flush(bufnr())
  var reply = Request('document/merge', {uri: shared[bufnr()].uri, from: from})
  if type(reply) == v:t_dict
    shared[bufnr()].jump = true
    Say('merged ' .. reply.merged .. ' characters of ' .. from)
  endif
enddef

# :QuireConnect host:port [fingerprint]: with a fingerprint (as the other side's :QuireStatus
# shows it), only a daemon holding that key is accepted.
export def Connect(arguments: string)
  Start()
  var [address; rest] = split(arguments)
  var parts = split(address, ':')
  var params: dict<any> = {host: parts[0], port: str2nr(parts[-1])}
  if !empty(rest)
    params.fingerprint = rest[0]
  endif
  if Succeeds('peer/connect', params)
    Say('connecting to ' .. address .. (empty(rest) ? '' : ' (key ' .. rest[0] .. ' only)') .. '; you are told when it is up')
  endif
enddef

# :QuireConnectRelay host:port [fingerprint]: dial a `quire relay` until it pairs this daemon
# with another of the same secret (both behind NAT); dialed again whenever the link drops.
export def ConnectRelay(arguments: string)
  Start()
  var [address; rest] = split(arguments)
  var parts = split(address, ':')
  var params: dict<any> = {host: parts[0], port: str2nr(parts[-1]), relay: true}
  if !empty(rest)
    params.fingerprint = rest[0]
  endif
  if Succeeds('peer/connect', params)
    Say('dialing the relay ' .. address .. ' to be paired')
  endif
enddef

export def ConnectCommand(command: string)
  Start()
  if Succeeds('peer/connect', {command: command})
    Say('peering over: ' .. command .. '; you are told when it is up')
  endif
enddef

export def Status()
  Start()
  var status = Request('quire/status', {})
  if type(status) == v:t_dict
    echo StatusSummary(status)
  endif
enddef

# One line from a quire/status result. The daemon counts (its `summary`: editors, documents,
# links up, what peers do not have yet, removed characters kept for peers, who is in which
# document); this only words it.
export def StatusSummary(status: dict<any>): string
  var storage = type(status.storage) == v:t_dict
    ? 'kept in ' .. status.storage.dataDir .. (status.storage.failure != null ? ' (FAILED: ' .. status.storage.failure .. ')' : '')
    : 'in memory only'
  var s = status.summary
  var peers = s.links == 0 ? 'no peer links' : printf('%d of %d peer link(s) up', s.linksUp, s.links)
  if s.linksUp > 0
    peers ..= s.notYetSent == 0 ? ', in sync' : printf(', %d character(s) not yet with peers', s.notYetSent)
  endif
  if s.removedKept > 0
    peers ..= printf(', %d removed character(s) kept for peers', s.removedKept)
  endif
  var people = mapnew(s.people, (_, p) => p.name .. ' (' .. join(p.documents, ', ') .. ')')
  var links = mapnew(status.peers.links, (_, l) => printf('; %s %s, %s%s', PeerName(l.user, l.address), l.state,
    l.encrypted ? 'encrypted' : 'NOT encrypted', type(l.fingerprint) == v:t_string ? ', key ' .. l.fingerprint : ''))
  return printf('quire: %d editor(s), %d document(s), %s%s; documents %s; your key %s%s', s.editors, s.documents, peers,
    empty(people) ? '' : '; with ' .. join(people, ', '), storage, get(status.peers, 'fingerprint', '?'), join(links, ''))
enddef

export def Stop()
  stopping = true
  listenPort = -1
  if ready
    Request('shutdown', {}, 2000)
    ch_sendexpr(channel, {method: 'exit'})
  endif
  var buffers = keys(shared)
  for [buf, state] in items(shared)
    listener_remove(state.listener)
    timer_stop(state.sendTimer)
    if bufexists(str2nr(buf))
      setbufvar(str2nr(buf), '&modeline', state.modeline)
      Unfreeze(str2nr(buf), state)
    endif
  endfor
  shared = {}
  for buf in buffers
    if bufexists(str2nr(buf))
      MapUndo(str2nr(buf))   # u and CTRL-R are Vim's own again
    endif
  endfor
  for conflict in values(conflicts)
    popup_close(conflict.popup, -2)
  endfor
  conflicts = {}
  ready = false
enddef

# For the client's own tests: a client bug, as a daemon revision the daemon never sent in the
# next edit only, so that it is refused (-32012) and the resync that follows is a correct one.
export def BreakRevisionForTest(buf: number)
  shared[buf].breakRevision = true
enddef

# For the client's own tests: the epoch of a shared buffer (it changes only on a resync).
export def EpochForTest(buf: number): number
  return shared[buf].epoch
enddef

# For the client's own tests: a change applied to a copy of the text, as `sent` takes it.
export def ApplyChangeForTest(text: dict<any>, change: dict<any>)
  ApplyLocalChange(text, change)
enddef

# Joining by opening a file: when a file is read or created (BufReadPost, BufNewFile) and a
# daemon runs for this user (this Vim started one, or the data directory's editor socket is
# there: `quire` attaches to it), the daemon is asked to open it only if it lies in a shared or
# joined project (`ifShared`). `{shared: false}` leaves the buffer alone; an open shares it as
# :QuireShare does, so opening a file of the project joins its document with no command.
export def Opened(buf: number)
  try
    JoinIfShared(buf)
  catch
    Log('joining ' .. bufname(buf) .. ' failed: ' .. v:exception)   # never in the way of reading a file
  endtry
enddef

def JoinIfShared(buf: number)
  if has_key(shared, buf) || has_key(conflicts, buf) || getbufvar(buf, '&buftype') != '' || !bufloaded(buf)
    return   # shared already (a reload is Reattach's), or no file
  endif
  var name = bufname(buf)
  if name == '' || name =~ '^\a\+://'
    return
  endif
  if !ready && (stopping || !DaemonRunning())
    return
  endif
  Start(true)
  if !ready
    return
  endif
  var file = resolve(fnamemodify(name, ':p'))
  var answer = Ask('document/open', {file: file, ifShared: true, text: DocumentText(buf)})
  if get(get(answer, 'error', {}), 'code', 0) == -32017
    var data = get(answer.error, 'data', {})
    AskConflict(buf, get(data, 'uri', ''), file, data)   # in the project, with other text: the person decides
    return
  elseif !has_key(answer, 'result') || type(answer.result) != v:t_dict
    Log('document/open ifShared of ' .. file .. ' failed: ' .. get(get(answer, 'error', {}), 'message', 'no answer'))
    return
  endif
  var reply = answer.result
  if !has_key(reply, 'shared') || reply.shared != true
    if has_key(reply, 'uri')
      # A daemon that does not know ifShared opened it as an ordinary open: leave it alone.
      ch_sendexpr(channel, {method: 'document/close', params: {uri: reply.uri}}, {callback: (_, _) => 0})
    endif
    return
  endif
  Adopt(buf, reply, '', file, '')
enddef

# Whether a daemon is running for this user: the editor socket of the data directory (as the
# daemon places it: EditorSocketLocation) exists.
def DaemonRunning(): bool
  var data = $XDG_DATA_HOME =~ '^/' ? $XDG_DATA_HOME .. '/quire' : $HOME != '' ? $HOME .. '/.local/share/quire' : ''
  if data == '' || !isdirectory(data)
    return false
  endif
  var runtime = $XDG_RUNTIME_DIR
  if runtime =~ '^/' && isdirectory(runtime)
    var real = resolve(fnamemodify(data, ':p'))->substitute('/$', '', '')
    return getftype(substitute(runtime, '/$', '', '') .. '/quire/editors-' .. sha256(real)[: 31] .. '.sock') == 'socket'
  endif
  return getftype(data .. '/editors.sock') == 'socket'
enddef

# Who is here, jump and follow. The daemon says who is where (quire/who: each person with their
# cursor in every document they are in, most recent first, in our byte positions, with the file
# the document is bound to); this only moves windows.
var following = ''        # the name followed ('' when none)
var followPlace = ''      # where they were last seen: "uri line character"
var followAt: list<number> = []   # [buffer, line, column] where following last put the cursor
var followTimer = -1

# Everyone the daemon knows a cursor of ([] when it cannot say).
def People(): list<dict<any>>
  Start()
  if !ready
    return []
  endif
  var reply = Request('quire/who', {})
  return type(reply) == v:t_dict ? reply.people : []
enddef

def PlaceWords(place: dict<any>): string
  var where = get(place, 'path', '') != '' ? fnamemodify(place.path, ':~:.') : place.uri
  return where .. ':' .. (place.line + 1)
enddef

# :QuireWho: everyone here, with their role in the project they are in (read, write, owner), the
# file and line of their cursor (and how many other files they are in), on one line.
export def Who()
  var people = People()
  if empty(people)
    Say('nobody else is here' .. (ready ? '' : ' (no daemon)'))
    return
  endif
  var words = mapnew(people, (_, p) => p.name
    .. (p.self || has_key(p, 'role') ? ' (' .. join((p.self ? ['you'] : []) + (has_key(p, 'role') ? [p.role] : []), ', ') .. ')' : '')
    .. ' ' .. PlaceWords(p.at[0])
    .. (len(p.at) > 1 ? printf(' (+%d file%s)', len(p.at) - 1, len(p.at) == 2 ? '' : 's') : ''))
  Say('here: ' .. join(words, ', '))
enddef

# Completion for :QuireJump and :QuireFollow: the others' names.
export def CompletePeople(lead: string, line: string, position: number): list<string>
  var names = mapnew(filter(People(), (_, p) => !p.self), (_, p) => p.name)
  return filter(uniq(sort(names)), (_, n) => stridx(n, lead) == 0)
enddef

# The person called `name` (the only other one when `name` is ''), or {} after saying why not.
def Person(name: string): dict<any>
  var others = filter(People(), (_, p) => !p.self)
  var found = name == '' ? others : filter(copy(others), (_, p) => p.name ==# name)
  if len(found) == 1 || (name != '' && !empty(found))
    return found[0]   # two people of one name: the first listed
  endif
  var names = join(mapnew(others, (_, p) => p.name), ', ')
  Warn(empty(others) ? 'nobody else is here' : name == '' ? 'whom? ' .. names : name .. ' is not here (here: ' .. names .. ')')
  return {}
enddef

# Puts the cursor at `place`: in the buffer sharing its document, else its file opened by path
# (which joins the document: Opened, or :QuireShare's open of that document when the file is no
# project's), else the document opened by name. Whether it got there.
def GoTo(place: dict<any>): bool
  var buf = BufferOf(place.uri)
  var path = get(place, 'path', '')
  if buf < 0 && path != '' && bufloaded(path)
    buf = bufnr(path)
  endif
  try
    if buf >= 0
      var windows = win_findbuf(buf)
      if !empty(windows)
        win_gotoid(windows[0])
      else
        exe 'hide buffer ' .. buf
      endif
    elseif path != ''
      exe 'hide edit ' .. fnameescape(path)
    else
      hide enew
      setlocal noeol nofixeol
    endif
  catch
    Warn('cannot go to ' .. PlaceWords(place) .. ': ' .. v:exception)
    return false
  endtry
  if !has_key(shared, bufnr())
    ShareAs(bufnr(), place.uri, path, '')   # joins the document where they are
  endif
  if BufferOf(place.uri) != bufnr()
    return false
  endif
  cursor(place.line + 1, place.character + 1)
  return true
enddef

# :QuireJump [name]: to the person's cursor, opening its file if needed.
export def Jump(name: string)
  var person = Person(name)
  if !empty(person) && GoTo(person.at[0])
    Say('at ' .. person.name .. '''s cursor, ' .. PlaceWords(person.at[0]))
  endif
enddef

# :QuireFollow [name]: this window goes where their cursor goes, across files, until you move
# the cursor yourself or :QuireUnfollow. Their cursor notifications move it at once; a check of
# quire/who every 300 ms follows them into files this Vim has not open.
export def Follow(name: string)
  var person = Person(name)
  if empty(person)
    return
  endif
  Unfollow('')
  following = person.name
  FollowTo(person.at[0])
  followTimer = timer_start(300, (_) => FollowTick(), {repeat: -1})
  augroup quire_follow
    autocmd!
    autocmd CursorMoved,CursorMovedI * quire#FollowerMoved()
  augroup END
  Say('following ' .. following .. ' (move, or :QuireUnfollow, to stop)')
enddef

# :QuireUnfollow, or the follow ended for `why` (said when not '').
export def Unfollow(why: string = 'as asked')
  if following == ''
    if why == 'as asked'
      Say('not following anyone')
    endif
    return
  endif
  var name = following
  following = ''
  followAt = []
  followPlace = ''
  timer_stop(followTimer)
  followTimer = -1
  augroup quire_follow
    autocmd!
  augroup END
  if why != ''
    Say('stopped following ' .. name .. ' (' .. why .. ')')
  endif
enddef

# Whom this Vim follows ('' when no one), for a status line and tests.
export def Following(): string
  return following
enddef

var goingTo = false   # following is moving the window (a file being opened answers requests meanwhile)

def FollowTo(place: dict<any>)
  if goingTo
    return
  endif
  followPlace = place.uri .. ' ' .. place.line .. ' ' .. place.character
  goingTo = true
  try
    if GoTo(place)
      followAt = [bufnr(), line('.'), col('.')]
    endif
  finally
    goingTo = false
  endtry
enddef

# The cursor left where following put it: you moved, the follow ends.
export def FollowerMoved()
  if following != '' && !goingTo && !empty(followAt) && [bufnr(), line('.'), col('.')] != followAt
    Unfollow('you moved')
  endif
enddef

# A daemon edit moved the text under the cursor: that is not you moving.
def FollowedTextMoved(buf: number)
  if following != '' && !empty(followAt) && followAt[0] == buf && bufnr() == buf
    followAt = [buf, line('.'), col('.')]
  endif
enddef

# Their cursor moved in a document this Vim shows.
def FollowCursor(params: dict<any>)
  if following == '' || get(params.user, 'name', '') !=# following || empty(params.selections)
    return
  endif
  FollowerMoved()   # you moved first: the follow ended
  if following == '' || BufferOf(params.uri) < 0
    return
  endif
  var at = params.selections[-1].end
  FollowTo({uri: params.uri, line: at.line, character: at.character, path: get(shared[BufferOf(params.uri)], 'file', '')})
enddef

# Every 300 ms while following: where the daemon says they are now, which may be a file this Vim
# has not open; they left: the follow ends.
def FollowTick()
  if following == '' || goingTo
    return
  endif
  FollowerMoved()
  if following == '' || !ready
    return
  endif
  var reply = Request('quire/who', {}, 2000, true)
  if type(reply) != v:t_dict
    return
  endif
  var found = filter(reply.people, (_, p) => !p.self && p.name ==# following)
  if empty(found)
    Unfollow(following .. ' left')
    return
  endif
  var place = found[0].at[0]
  if place.uri .. ' ' .. place.line .. ' ' .. place.character != followPlace
    FollowTo(place)
  endif
enddef
