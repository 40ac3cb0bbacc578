-- Quire for Neovim (0.7 or later): shares buffers with the quire daemon, which it starts as a job
-- speaking newline-delimited JSON-RPC. Sends changed lines (nvim_buf_attach), applies the
-- daemon's edits by the revision rules of protocol/README.md without echoing them, moves the
-- cursor with others' text, shows others' cursors and names, undoes only your own edits, and
-- reopens every shared buffer after the daemon restarts (by the durable view the daemon named at
-- the open) so nothing typed meanwhile is lost. Sharing a name that holds other text asks first.
-- Across :w, :e!, unload and reload, checktime, :saveas and :bwipeout a shared buffer keeps
-- showing the shared text; changes made to its file outside Quire reach the daemon once.
local M = {}

M.config = {
  command = { 'quire' },              -- how to start (or join) the daemon
  user = nil,                         -- your name, shown to others (nil: the daemon's: git's user.name, else $USER)
  color = '#2e8b57',                  -- your cursor's colour, shown to others
  log = nil,                          -- a file to log to
}

local job, ready, stopping = nil, false, false
local next_id, waiting, replies = 0, {}, {}
local partial = ''
-- Per shared buffer: uri, file (the bound file, nil for none), named (the buffer's file when the
-- binding was chosen), fileHash (what Quire last knew the bound file to hold),
-- view (the daemon's durable record of what this buffer was sent and did, from the open's reply),
-- epoch, editor and daemon revisions, reports (changes not sent yet), attachment (the live nvim_buf_attach), away (the buffer does
-- not show the shared text: unloaded or just read from disk), closed (no view at the daemon),
-- asking (the document exists with other text and the person has not chosen yet: not shared).
local shared = {}
local applying = false
local links_up = 0      -- links to other daemons up, as the daemon last counted them
local user_name = nil   -- your name for others, as the initialize reply said it
local listen_port = nil
local reconnect_delay = 250
local edit_count = 0
local instance = string.format('nvim-%d-%d-%d', vim.fn.getpid(), os.time(), math.random(1, 1e9))
local ns = vim.api.nvim_create_namespace('quire')
local following, follow_place, follow_at, follow_timer, going_to   -- who is followed (Who is here, below)
local here

local function log(message)
  if M.config.log then
    local file = io.open(M.config.log, 'a')
    if file then
      file:write(os.date('%H:%M:%S ') .. message .. '\n')
      file:close()
    end
  end
end

-- What the person is told: one line that fits the command line, shown once the command that
-- caused it is over, so that no message scrolls into a Press ENTER prompt that eats a key.
local function say(message, level)
  message = ('quire: ' .. tostring(message)):gsub('[%c]+', ' ')
  log('said: ' .. message)
  vim.schedule(function()
    local room = vim.v.echospace > 0 and vim.v.echospace or vim.o.columns - 12
    if vim.fn.strdisplaywidth(message) > room then
      message = vim.fn.strcharpart(message, 0, math.max(room - 3, 10)) .. '...'
    end
    vim.notify(message, level or vim.log.levels.INFO)
  end)
end

local function warn(message)
  say(message, vim.log.levels.WARN)
end

-- The document's text: the buffer's lines joined by "\n", and the final "\n" that 'eol' stands for.
local function document_lines(buf)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, true)   -- a new table each call
  if vim.api.nvim_buf_get_option(buf, 'eol') then table.insert(lines, '') end
  return lines
end

local function document_text(buf)
  return table.concat(document_lines(buf), '\n')
end

-- Messages ------------------------------------------------------------------------------------

-- Sends a message; false (logged) when it cannot be encoded, e.g. text that is not UTF-8:
-- json_encode raises E474 on such bytes.
local function send(message)
  message.jsonrpc = '2.0'
  local ok, encoded = pcall(vim.fn.json_encode, message)
  if not ok then
    log('not sent, not encodable (' .. tostring(encoded) .. '): ' .. tostring(message.method))
    return false
  end
  if job then vim.fn.chansend(job, encoded .. '\n') end
  return true
end

local handlers = {}

local function on_line(line)
  if line == '' then return end
  local ok, message = pcall(vim.fn.json_decode, line)
  if not ok or type(message) ~= 'table' then return log('unreadable: ' .. line) end
  if message.method then
    local handler = handlers[message.method]
    if handler then handler(message.params or {}) end
  elseif message.id then
    local callback = waiting[message.id]
    waiting[message.id] = nil
    if callback then callback(message) else replies[message.id] = message end
  end
end

local function on_stdout(_, data)
  -- data: chunks split at newlines; the first continues the last partial line.
  data[1] = partial .. data[1]
  partial = table.remove(data)
  for _, line in ipairs(data) do on_line(line) end
end

-- A request; with a callback it returns at once, without one it waits for the reply (10 s).
local function request(method, params, callback)
  next_id = next_id + 1
  local id = next_id
  if callback then waiting[id] = callback end
  if not send({ id = id, method = method, params = params or vim.empty_dict() }) then
    waiting[id] = nil
    return false
  end
  if callback then return end
  vim.wait(10000, function() return replies[id] ~= nil or job == nil end, 5)
  local reply = replies[id]
  replies[id] = nil
  return reply
end

-- A request whose result is wanted: waits for the reply and returns the result, or nil after
-- showing the error (logging it only, when `quiet`). `on_result` runs where the reply stands
-- among the daemon's messages, before any that follows it: a daemon edit sent after a reply
-- that starts an epoch must find that epoch set.
-- The error is the second value; -32017 (Document differs) is the caller's to handle, never shown.
local DOCUMENT_DIFFERS = -32017
local function call(method, params, on_result, quiet)
  local reply
  local sent = request(method, params, function(message)
    reply = message
    if message.result ~= nil and on_result then on_result(message.result) end
  end)
  if sent == false then reply = { error = { message = 'the request could not be encoded' } } end
  vim.wait(10000, function() return reply ~= nil or job == nil end, 5)
  local failure = not reply and 'no answer' or (reply.error and reply.error.message)
  if failure then
    local differs = reply and reply.error and reply.error.code == DOCUMENT_DIFFERS
    if quiet or differs then log(method .. ' failed: ' .. failure) else warn(method .. ' failed: ' .. failure) end
    return nil, reply and reply.error or { message = failure }
  end
  return reply.result
end

-- Line models of a text (the tail of the buffer a daemon change rebuilds) ----------------------

-- Lines start..finish-1 (0-based) become new_lines.
local function splice_lines(lines, start, finish, new_lines)
  for _ = start, math.min(finish, #lines) - 1 do table.remove(lines, start + 1) end
  for i, line in ipairs(new_lines) do table.insert(lines, start + i, line) end
end

-- A range change applied to document lines (the last element is "" after a final newline).
local function apply_range(lines, change)
  local s, e = change.range.start, change.range['end']
  local first = lines[s.line + 1] or ''
  local last = lines[e.line + 1] or ''
  local text = first:sub(1, s.character) .. change.text .. last:sub(e.character + 1)
  local replacement = vim.split(text, '\n', true)
  splice_lines(lines, s.line, e.line + 1, replacement)
end

-- Buffer ------------------------------------------------------------------------------------

-- Where a position (0-based line, byte) is after a range change (as Emacs markers move).
function M.moved_position(line, character, change)
  local s, e = change.range.start, change.range['end']
  if line < s.line or (line == s.line and character <= s.character) then return line, character end
  if line < e.line or (line == e.line and character < e.character) then return s.line, s.character end
  local inserted = vim.split(change.text, '\n', true)
  local last_line = s.line + #inserted - 1
  local last_end = (#inserted == 1 and s.character or 0) + #inserted[#inserted]
  if line == e.line then return last_line, last_end + character - e.character end
  return line + last_line - e.line, character
end

-- Others' cursor marks in lines first..last (0-based), to be put back after those lines are
-- replaced (nvim_buf_set_lines would pile them at the start of the new lines).
local function marks_in(buf, first, last)
  local ok, marks = pcall(vim.api.nvim_buf_get_extmarks, buf, ns, { first, 0 }, { last + 1, 0 }, { details = true })
  return ok and marks or {}
end

local function restore_marks(buf, marks, change)
  local count = vim.api.nvim_buf_line_count(buf)
  for _, mark in ipairs(marks) do
    local id, details = mark[1], mark[4]
    local line, column = M.moved_position(mark[2], mark[3], change)
    if line < count then
      local text = vim.api.nvim_buf_get_lines(buf, line, line + 1, false)[1] or ''
      column = math.min(column, #text)
      pcall(vim.api.nvim_buf_set_extmark, buf, ns, line, column, { id = id,
        end_col = details.end_col and math.min(column + 1, #text) or nil, hl_group = details.hl_group,
        virt_text = details.virt_text, virt_text_pos = details.virt_text_pos })
    else
      pcall(vim.api.nvim_buf_del_extmark, buf, ns, id)
    end
  end
end

-- Read-only documents (below): the daemon's changes go into a read-only buffer too.
local thaw, refreeze, read_only_from

-- Neovim's own undo history holds nothing another person typed (protocol/client-contract.md,
-- section 4): its undo is line-based, so whatever reaches it (U, g-, :undo N, :undo 0, :earlier
-- and :later with any count or unit, a plugin's normal! u, an undo file read with the buffer)
-- would put back old lines over a partner's text and send that as your edit. The daemon's
-- changes are applied with 'undolevels' at -1, which makes them no undo block and drops the
-- whole history before them, and the history is dropped again whenever the buffer starts an
-- epoch (an open, reopen or resync, after an undo file was read). What remains is your own edits
-- since another's last one, which only your own text is in. Your blocks keep their changenr()
-- (Neovim keeps counting), so undoGroup still tells one command from the next. In Insert mode
-- (and CTRL-O from it) the history is kept until the insert ends (InsertLeave, ModeChanged, or
-- the next flush out of it): dropping it there would cut the insert into two undo blocks, two
-- steps of the daemon's undo, and leave the insert without its undo record.
local function inserting(buf)
  if vim.api.nvim_get_current_buf() ~= buf then return false end
  local mode = vim.api.nvim_get_mode().mode
  return mode:match('^[iR]') ~= nil or mode:match('^ni') ~= nil
end

-- Before a daemon change to `buf`: 'undolevels' -1 (returns the value to give back to
-- restore_undo), or, in Insert mode (unless `force`), nothing but a note that the history holds
-- others' text now.
local function without_undo(buf, force)
  local state = shared[buf]
  if not state then return nil end
  if not force and inserting(buf) then
    state.undo_kept = true
    return nil
  end
  local undolevels = vim.api.nvim_buf_get_option(buf, 'undolevels')
  vim.api.nvim_buf_set_option(buf, 'undolevels', -1)
  return undolevels
end

-- After the change: 'undolevels' back; `changed`: the history is gone.
local function restore_undo(buf, undolevels, changed)
  if not undolevels then return end
  vim.api.nvim_buf_set_option(buf, 'undolevels', undolevels)
  if changed and shared[buf] then shared[buf].undo_kept = false end
end

-- Drops Neovim's undo history of `buf` (in Insert mode, unless `force`, once the insert ends).
-- It goes at the first change made with 'undolevels' -1: nothing inserted at the start of the
-- last line, without a place in the change list ('. and g;), reported to nobody, 'modified'
-- unchanged. The last line, not the first: in Neovim 0.7.2 an nvim_buf_set_text across lines
-- that starts in the line changed last (a plugin's, right after) reads that line freed and writes
-- bytes nobody typed; none can start in the last line and reach past it.
local function forget_undo(buf, force)
  if not shared[buf] or not vim.api.nvim_buf_is_loaded(buf) then return end
  if vim.api.nvim_get_current_buf() == buf and #vim.fn.undotree().entries == 0 then
    return   -- nothing to drop, and no change made ('readonly' would warn of it: W10)
  end
  local modified = vim.api.nvim_buf_get_option(buf, 'modified')
  applying = true
  local frozen = thaw(buf)
  local undolevels = without_undo(buf, force)
  local ok, failure = pcall(function()
    if not undolevels then return end
    local last = vim.api.nvim_buf_line_count(buf) - 1
    vim.cmd(string.format('keepjumps call nvim_buf_set_text(%d, %d, 0, %d, 0, [""])', buf, last, last))
  end)
  restore_undo(buf, undolevels, ok)
  refreeze(buf, frozen)
  applying = false
  vim.api.nvim_buf_set_option(buf, 'modified', modified)
  if not ok then log('could not drop the undo history: ' .. tostring(failure)) end
end

-- Applies daemon changes in order; cursors of windows showing the buffer move with the text.
-- A change within one line is applied with nvim_buf_set_text; one that spans a line break (or
-- inserts one) replaces the affected whole lines with nvim_buf_set_lines, because in Neovim 0.7.2
-- an nvim_buf_set_text that deletes from after the insert-mode cursor across a line break fills
-- the cursor line with bytes nobody typed (use of freed memory).
local function apply_changes(buf, changes)
  applying = true
  local frozen = thaw(buf)
  local undolevels = without_undo(buf)
  local ok, failure = pcall(function()
    for _, change in ipairs(changes) do
      local count = vim.api.nvim_buf_line_count(buf)
      local eol = vim.api.nvim_buf_get_option(buf, 'eol')
      local cursors = {}
      for _, win in ipairs(vim.fn.win_findbuf(buf)) do
        local pos = vim.api.nvim_win_get_cursor(win)
        cursors[win] = { M.moved_position(pos[1] - 1, pos[2], change) }
      end
      local s, e = change.range.start, change.range['end']
      local one_line = s.line == e.line and not change.text:find('\n', 1, true)
      if e.line < count - 1 and one_line then
        vim.api.nvim_buf_set_text(buf, s.line, s.character, e.line, e.character, { change.text })
      elseif e.line < count - 1 then
        local marks = marks_in(buf, s.line, e.line)
        local lines = vim.api.nvim_buf_get_lines(buf, s.line, e.line + 1, true)
        local first, last = lines[1], lines[#lines]
        local text = first:sub(1, s.character) .. change.text .. last:sub(e.character + 1)
        vim.api.nvim_buf_set_lines(buf, s.line, e.line + 1, true, vim.split(text, '\n', true))
        restore_marks(buf, marks, change)
      else
        -- The change reaches the last line: rebuild the tail, so that a text ending in a line
        -- break is shown with 'eol' and never as an extra empty line.
        local from = math.min(s.line, count)
        local marks = marks_in(buf, from, count)
        local lines = document_lines(buf)
        apply_range(lines, change)
        local new_eol = #lines > 1 and lines[#lines] == ''
        if new_eol then table.remove(lines) end
        vim.api.nvim_buf_set_lines(buf, from, -1, false, vim.list_slice(lines, from + 1))
        if new_eol ~= eol then vim.api.nvim_buf_set_option(buf, 'eol', new_eol) end
        restore_marks(buf, marks, change)
      end
      for win, pos in pairs(cursors) do
        local line = math.min(pos[1], vim.api.nvim_buf_line_count(buf) - 1)
        pcall(vim.api.nvim_win_set_cursor, win, { line + 1, pos[2] })
      end
    end
  end)
  restore_undo(buf, undolevels, #changes > 0)
  refreeze(buf, frozen)
  applying = false
  if shared[buf] then shared[buf].eol = vim.api.nvim_buf_get_option(buf, 'eol') end   -- as the daemon has it
  if following and follow_at and vim.api.nvim_get_current_buf() == buf and follow_at:match('^(%d+):') == tostring(buf) then
    follow_at = here()   -- the text moved under the cursor: not you moving
  end
  if not ok then error(failure) end
end

-- The names of a request's params, sorted and joined (for the log: what a reopen or resync sent).
local function sorted_keys(params)
  local keys = vim.tbl_keys(params)
  table.sort(keys)
  return table.concat(keys, ',')
end

local function replace_text(buf, text)
  applying = true
  local lines = vim.split(text, '\n', true)
  local eol = #lines > 1 and lines[#lines] == ''
  if eol then table.remove(lines) end
  local frozen = thaw(buf)
  local undolevels = without_undo(buf)
  local ok, failure = pcall(function()
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    vim.api.nvim_buf_set_option(buf, 'eol', eol)
  end)
  restore_undo(buf, undolevels, ok)
  refreeze(buf, frozen)
  applying = false
  if not ok then error(failure) end
end

-- The lines a series of nvim_buf_attach reports changed, as {first, old end, new end} (0-based,
-- ends exclusive), each report in the line numbers of its own moment.
function M.changed_region(reports)
  local top, old_end, new_end = reports[1][1], reports[1][2], reports[1][3]
  for i = 2, #reports do
    local first, last, new_last = reports[i][1], reports[i][2], reports[i][3]
    if last > new_end then
      old_end = old_end + last - new_end   -- lines below the region so far are unchanged old lines
      new_end = last
    end
    top = math.min(top, first)
    new_end = new_end + new_last - last
  end
  return top, old_end, new_end
end

-- Local changes: the lines a command changed go to the daemon as one `lines` change once the
-- command is over, with where the cursor ended up, which places typed text where it was typed
-- (`o` reports its new line before the cursor moves there; typing then fills it). Whatever must
-- see the buffer as the daemon does (a daemon edit, a cursor update, undo) sends it first.
-- While the daemon is away nothing is sent; the reopen sends the whole text.
-- 'eol' set by hand (:set noeol nofixeol, :set eol) changes the text's final newline, which no
-- on_lines report says: sent after the lines, as the break after the last line removed or added
-- (`state.eol` is 'eol' as the daemon has it, taken at each open and daemon edit).
local function flush(buf)
  local state = shared[buf]
  if not state then return end
  if state.undo_kept and not applying and not inserting(buf) then
    forget_undo(buf)   -- the insert a daemon change came in ended, and nothing said so yet
  end
  local eol = vim.api.nvim_buf_get_option(buf, 'eol')
  local eol_changed = state.eol ~= nil and eol ~= state.eol
  if (not state.reports or #state.reports == 0) and not eol_changed then return end
  local reports = state.reports or {}
  state.reports = {}
  if not ready or state.away or state.closed then return end
  local changes = {}
  if #reports > 0 then
    local top, old_end, new_end = M.changed_region(reports)
    changes[1] = { lines = { start = top, ['end'] = old_end }, newLines = vim.api.nvim_buf_get_lines(buf, top, new_end, false) }
  end
  if eol_changed then
    local count = vim.api.nvim_buf_line_count(buf)
    local after_last = { line = count - 1, character = #(vim.api.nvim_buf_get_lines(buf, count - 1, count, false)[1] or '') }
    table.insert(changes, eol and { range = { start = after_last, ['end'] = after_last }, text = '\n' }
      or { range = { start = after_last, ['end'] = { line = count, character = 0 } }, text = '' })
  end
  edit_count = edit_count + 1
  local current = vim.api.nvim_get_current_buf() == buf
  -- The undo block of the buffer the change belongs to, which need not be the current one (a
  -- command run in another buffer, a change made through the API).
  local group = current and vim.fn.changenr() or vim.api.nvim_buf_call(buf, vim.fn.changenr)
  local params = { uri = state.uri, epoch = state.epoch, revision = state.daemon, changes = changes,
    editId = instance .. '-' .. edit_count, undoGroup = group }
  if state.break_revision then   -- for the client's own tests (M._break_revision)
    state.break_revision, params.revision = nil, params.revision + 100
  end
  if current then
    local pos = vim.api.nvim_win_get_cursor(0)
    params.cursor = { line = pos[1] - 1, character = pos[2] }
  end
  local encodable, encoded = pcall(vim.fn.json_encode, params)
  if not encodable then
    -- Bytes that are not UTF-8: nothing is sent; the lines stay unsent (retried with the next
    -- change) and the caller's message (a cursor update) is skipped rather than raising.
    state.reports = reports
    edit_count = edit_count - 1
    log('edit not sent, the changed lines are not encodable: ' .. tostring(encoded))
    return false
  end
  state.eol = eol
  local epoch = state.epoch
  state.editor = state.editor + 1
  request('document/edit', params, function(reply) M._on_edit_reply(buf, epoch, reply) end)
  log('sent edit ' .. state.editor .. ': ' .. encoded)
  return true
end

local function on_lines(buf, first, last, new_last)
  local state = shared[buf]
  if applying or not ready or state.away then return end
  state.reports = state.reports or {}
  table.insert(state.reports, { first, last, new_last })
  if #state.reports == 1 then vim.schedule(function() flush(buf) end) end
end

function M._on_edit_reply(buf, epoch, reply)
  local state = shared[buf]
  if not state or state.epoch ~= epoch or reply.lost then return end   -- lost: the reopen sends it
  -- Accepted: nothing to keep (the daemon knows what this editor saw). Refused: resync.
  if reply.error and M._read_only_refused(buf, reply.error) then return end
  if reply.error and not state.resyncing then
    state.resyncing = true
    warn('the daemon refused an edit (' .. (reply.error and reply.error.message or 'no reason') .. '); resyncing, your text is kept')
    vim.schedule(function() M.resync_keeping_text(buf) end)
  end
end

-- A reply that starts an epoch (document/open, document/resync) brings the buffer to the text
-- the daemon has for this editor; runs where the reply stands among the daemon's messages.
local function opened(buf, result)
  local state = shared[buf]
  if not state then return end
  if result.text then
    if result.text ~= document_text(buf) then replace_text(buf, result.text) end
  else
    apply_changes(buf, result.changes)
  end
  -- A file opened with no uri: the daemon named it; every later open sends that name.
  if result.uri and result.uri ~= '' then state.uri = result.uri end
  state.epoch, state.editor, state.daemon, state.reports = result.epoch, 0, 0, {}
  state.eol = vim.api.nvim_buf_get_option(buf, 'eol')
  state.away, state.closed = false, false
  state.opens = (state.opens or 0) + 1   -- revisions start again: a hash check from before is moot
  if result.view then state.view = result.view end   -- a resync's reply keeps the view
  forget_undo(buf)   -- and an undo file read with the buffer
  if not result.text then read_only_from(buf, result) end   -- an open's reply says it
end

-- After a refused edit: the daemon resolves what the buffer shows against what it had sent this
-- buffer at its epoch and daemon revision (by identity, as an edit), so what was typed and what
-- others typed meanwhile are both kept; no base is needed.
function M.resync_keeping_text(buf)
  local state = shared[buf]
  if not state or not ready or state.away or state.closed then return end
  state.reports = {}   -- the text below holds them
  local params = { uri = state.uri, text = document_text(buf), epoch = state.epoch, revision = state.daemon }
  log('resyncing ' .. state.uri .. ' keeping the buffer text, sending ' .. sorted_keys(params))
  call('document/resync', params, function(result) opened(buf, result) end)
  state.resyncing = false
end

-- The escape hatch: the daemon's text replaces the buffer, and a new epoch starts.
local function resync(buf)
  local state = shared[buf]
  if not state or not ready or state.away or state.closed then return end
  state.reports = {}
  call('document/resync', { uri = state.uri }, function(result) opened(buf, result) end)
end

-- Self-healing: once daemon edits pause, and only if nothing was sent or applied since the last
-- one (`check` holds its hash and the revisions after it), the buffer must have its hash; if it
-- does not, document/resync brings it to the daemon's text. Not while the daemon is away or the
-- buffer is being read again, unloaded or asked about, nor after a reopen or resync since.
local function check_hash(buf, check)
  local state = shared[buf]
  if not state or state.hash_check ~= check or not ready or state.away or state.closed or state.asking then return end
  flush(buf)
  if state.editor == check.editor and state.daemon == check.daemon and state.opens == check.opens
      and vim.fn.sha256(document_text(buf)) ~= check.hash then
    log('hash mismatch in ' .. state.uri .. ': resyncing')
    resync(buf)
  end
end

local function buffer_of(uri)
  for buf, state in pairs(shared) do
    if state.uri == uri then return buf end
  end
end

handlers['document/edit'] = function(params)
  local buf = buffer_of(params.uri)
  if not buf then return end
  local state = shared[buf]
  if state.away or state.closed then
    return log('dropped a daemon edit of ' .. params.uri .. ': the buffer is being read again or is unloaded')
  end
  flush(buf)   -- our unsent changes first: the edit applies only if it saw them
  if params.epoch ~= state.epoch or params.revision ~= state.editor then
    return log('dropped a daemon edit based on ' .. params.revision .. ', we are at ' .. state.editor)
  end
  apply_changes(buf, params.changes)
  state.daemon = state.daemon + 1
  if state.jump and #params.changes > 0 and vim.api.nvim_get_current_buf() == buf then
    state.jump = false
    local at = params.changes[#params.changes].range.start
    pcall(vim.api.nvim_win_set_cursor, 0, { at.line + 1, at.character })
  end
  log('applied daemon edit ' .. state.daemon .. ': ' .. vim.fn.json_encode(params.changes))
  if state.savedHash and params.hash == state.savedHash then
    state.savedHash = nil   -- the buffer now shows what :QuireSave wrote
    M._mark_file_read(buf)
  end
  if params.hash then
    -- Hashing a long buffer costs milliseconds: checked once edits pause, not per keystroke.
    local check = { hash = params.hash, editor = state.editor, daemon = state.daemon, opens = state.opens }
    state.hash_check = check
    vim.defer_fn(function() check_hash(buf, check) end, 100)
  end
end

-- Read-only documents (protocol/decisions/roles.md) --------------------------------------------
-- Where this daemon's role in a document's project does not allow changing it, the buffer is
-- 'nomodifiable' (the daemon's changes still go in: thaw), and the person is told why once: the
-- first time they try to type (Neovim's E21, seen after the key) or the daemon refuses an edit.
-- document/readOnly makes the buffer writable again, or read-only.

local watching_keys = false

-- Says once why `buf` cannot change.
local function tell_read_only(buf)
  local state = shared[buf]
  if state and state.read_only and not state.told_read_only then
    state.told_read_only = true
    warn(state.read_only_reason or 'this document is read-only here')
  end
end

-- After a key in a read-only buffer: Neovim refused it with E21; say why, once.
local function tried_to_type()
  local buf = vim.api.nvim_get_current_buf()
  local state = shared[buf]
  if state and state.read_only and not state.told_read_only and vim.v.errmsg:match('^E21:') then
    vim.v.errmsg = ''
    tell_read_only(buf)
  end
end
M._tried_to_type = tried_to_type

-- Makes `buf` read-only (its 'modifiable' kept to give back) or writable again; `reason` is the
-- daemon's sentence ("you can read notes but not change it (role read)").
local function set_read_only(buf, read_only, reason)
  local state = shared[buf]
  if not state or not vim.api.nvim_buf_is_valid(buf) then return end
  state.read_only_reason = reason
  if read_only and not state.read_only then
    state.read_only, state.told_read_only = true, false
    state.modifiable = vim.api.nvim_buf_get_option(buf, 'modifiable')
    vim.api.nvim_buf_set_option(buf, 'modifiable', false)
    if not watching_keys then
      watching_keys = true
      vim.on_key(function() vim.schedule(tried_to_type) end, vim.api.nvim_create_namespace('quire_read_only'))
    end
    log(state.uri .. ' is read-only: ' .. tostring(reason))
  elseif not read_only and state.read_only then
    M._unfreeze(buf, state)
    if reason then say(reason) end
  end
end

-- `buf` is writable again (its own 'modifiable' back): its role allows it, or it is no longer shared.
function M._unfreeze(buf, state)
  if state and state.read_only then
    state.read_only = false
    if vim.api.nvim_buf_is_valid(buf) then vim.api.nvim_buf_set_option(buf, 'modifiable', state.modifiable ~= false) end
  end
end

-- Lets the daemon's changes into a read-only buffer; what to give back to refreeze.
thaw = function(buf)
  local state = shared[buf]
  local frozen = state and state.read_only and not vim.api.nvim_buf_get_option(buf, 'modifiable')
  if frozen then vim.api.nvim_buf_set_option(buf, 'modifiable', true) end
  return frozen
end

refreeze = function(buf, frozen)
  if frozen then vim.api.nvim_buf_set_option(buf, 'modifiable', false) end
end

read_only_from = function(buf, result)
  set_read_only(buf, result.readOnly == true, result.readOnlyReason)
end

handlers['document/readOnly'] = function(params)
  local buf = buffer_of(params.uri)
  if buf then set_read_only(buf, params.readOnly == true, params.reason) end
end

-- The daemon refused an edit of `buf` because it is read-only here (-32019): the buffer becomes
-- read-only, the person is told once, and the shared text comes back (what was typed cannot go
-- in). False for any other error.
function M._read_only_refused(buf, err)
  if type(err) ~= 'table' or err.code ~= -32019 or not buf or not shared[buf] then return false end
  local data = type(err.data) == 'table' and err.data or {}
  set_read_only(buf, true, data.reason or shared[buf].read_only_reason)
  tell_read_only(buf)
  local state = shared[buf]
  if not state.resyncing then
    state.resyncing = true
    vim.schedule(function()
      if shared[buf] then
        shared[buf].resyncing = false
        flush(buf)
        resync(buf)
      end
    end)
  end
  return true
end

-- Others' cursors: a highlighted character and their name after it.
handlers['cursor/update'] = function(params)
  local buf = buffer_of(params.uri)
  if not buf then return end
  local state = shared[buf]
  if state.away or state.closed then return end
  state.marks = state.marks or {}
  for _, id in ipairs(state.marks[params.session] or {}) do pcall(vim.api.nvim_buf_del_extmark, buf, ns, id) end
  state.marks[params.session] = {}
  local user = params.user or {}
  local group = 'QuireCursor' .. params.session
  if user.color and user.color:match('^#%x%x%x%x%x%x$') then
    vim.cmd(string.format('highlight default %s guibg=%s ctermbg=magenta ctermfg=white', group, user.color))
  else
    vim.cmd(string.format('highlight default %s ctermbg=magenta ctermfg=white guibg=#d7005f', group))
  end
  local count = vim.api.nvim_buf_line_count(buf)
  for _, selection in ipairs(params.selections or {}) do
    local at = selection['end']
    if at.line < count then
      local text = vim.api.nvim_buf_get_lines(buf, at.line, at.line + 1, false)[1] or ''
      local column = math.min(at.character, #text)
      local id = vim.api.nvim_buf_set_extmark(buf, ns, at.line, column, {
        end_col = math.min(column + 1, #text), hl_group = group,
        virt_text = { { ' ' .. (user.name or '?') .. ' ', group } }, virt_text_pos = 'eol',
      })
      table.insert(state.marks[params.session], id)
    end
  end
end

-- Others' names and cursors in a buffer, for the tests and the status: {name = {line, character}}.
function M.remote_cursors(buf)
  local found = {}
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
    local name = mark[4].virt_text and mark[4].virt_text[1][1]:match('^ (.*) $')
    if name then found[name] = { mark[2], mark[3] } end
  end
  return found
end

handlers['window/showMessage'] = function(params) warn(params.message) end

handlers['document/editRefused'] = function(params)
  if M._read_only_refused(buffer_of(params.uri), params.error) then return end
  local err = type(params.error) == 'table' and params.error.message or 'no reason'
  warn('the daemon refused an edit of ' .. tostring(params.uri) .. ' (' .. tostring(err) .. ')')
end

-- The person behind a peer link: the user name its daemon took from its editor. A daemon no
-- editor has named yet calls itself "quire"; that names no one, so the link's address stands in.
function M.peer_name(params)
  local user = params.user
  if type(user) == 'string' and user ~= '' and user ~= 'quire' then return user end
  local address = params.address
  return (type(address) == 'string' and address ~= '') and ('someone (' .. address .. ')') or 'someone'
end

handlers['peer/changed'] = function(params)
  local who = M.peer_name(params)
  if type(params.linksUp) == 'number' then links_up = params.linksUp end   -- the daemon counts
  if params.event == 'joined' then
    say(who .. ' joined')
  else
    if params.event == 'failed' then
      warn((params.link == 0 and '' or who .. ': ') .. (params.reason or 'failed'))
    else
      say(who .. ' left' .. (params.reason and (' (' .. params.reason .. ')') or ''))
    end
  end
  vim.cmd('redrawstatus!')
end

-- A peer's document of the same name, made apart from ours, kept whole as `copy`: say how to see
-- it and how to merge it.
handlers['document/forked'] = function(params)
  warn(M.peer_name(params) .. ' has another document named "' .. tostring(params.uri) .. '", created separately from yours. '
    .. 'Both are kept whole: theirs as "' .. tostring(params.copy) .. '". :QuireOpen ' .. tostring(params.copy)
    .. ' shows it, :QuireMerge ' .. tostring(params.copy) .. ' merges its text into yours')
end

-- The daemon ----------------------------------------------------------------------------------

local reconnect

-- Only the current job's end counts: one stopped by :QuireStop may end after :QuireShare started
-- the next, and taking that for the daemon going away failed the new initialize.
local function on_exit(ended, status)
  if ended ~= job then return log('an earlier daemon job exited with ' .. status) end
  ready, job, links_up = false, nil, 0
  for id, callback in pairs(waiting) do
    waiting[id] = nil
    callback({ error = { message = 'the daemon went away' }, lost = true })
  end
  log('daemon exited with ' .. status)
  if not stopping and next(shared) then
    vim.defer_fn(reconnect, reconnect_delay)
    reconnect_delay = math.min(reconnect_delay * 2, 5000)
  end
end

-- Starts the daemon (or joins it) unless it runs. `quiet`: a failure is logged, not shown (the
-- reconnect tries again by itself while the daemon restarts).
function M.start(quiet)
  if ready then return true end
  partial = ''
  local ok, id = pcall(vim.fn.jobstart, M.config.command, { on_stdout = on_stdout, on_exit = on_exit, stderr_buffered = false })
  if not ok or id <= 0 then
    local failure = 'cannot start ' .. table.concat(M.config.command, ' ')
    if quiet then log(failure) else warn(failure) end
    return false
  end
  job = id
  local result = call('initialize', { protocolVersion = 1, clientInfo = { name = 'quire.nvim', version = '1' },
    -- A name only when the person gave one: otherwise the daemon names them and says it.
    user = { name = M.config.user, color = M.config.color },
    capabilities = { general = { positionEncodings = { 'utf-8' } } } }, nil, quiet)
  if not result or result.capabilities.positionEncoding ~= 'utf-8' then
    if job then vim.fn.jobstop(job) end
    return false
  end
  user_name = (type(result.user) == 'table' and result.user.name) or M.config.user
  send({ method = 'initialized', params = vim.empty_dict() })
  ready = true
  -- Links already up (another editor's, or ones that came back before we did): the daemon counts.
  local status = call('quire/status', vim.empty_dict(), nil, true)
  links_up = status and status.summary and status.summary.linksUp or 0
  if listen_port then request('peer/listen', { port = listen_port }) end
  return true
end

-- Your name for others, as the daemon said it (M.config.user, or the daemon's).
function M.user_name() return user_name or M.config.user or '' end

-- The name of the document `buf` (default: the current buffer) is shared as, nil when it is not
-- shared: for a file, the name the daemon gave it.
function M.shared_name(buf)
  local state = shared[(buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf]
  return state and state.uri or nil
end

-- Buffer lifecycle ------------------------------------------------------------------------------

-- A file's bytes as text (nil: no such file), to tell whether it changed since Quire saw it.
local function file_text(path)
  if not path or vim.fn.filereadable(path) == 0 then return nil end
  return table.concat(vim.fn.readfile(path, 'b'), '\n')
end

-- What a file's bytes show as text, compared with `text` (nil: no such file), as the daemon
-- decodes them (protocol/README.md, Files): a leading BOM is not text, a file whose every "\n"
-- follows a "\r" has CRLF line endings, and a final line break that the file has and `text`
-- lacks is the file's format.
local function file_shows(path, text)
  local content = file_text(path)
  if not content then return nil end
  if content:sub(1, 3) == '\239\187\191' then content = content:sub(4) end
  local _, feeds = content:gsub('\n', '')
  local _, crlfs = content:gsub('\r\n', '')
  if feeds > 0 and crlfs == feeds then content = content:gsub('\r\n', '\n') end
  if content:sub(-1) == '\n' and text:sub(-1) ~= '\n' then content = content:sub(1, -2) end
  return content
end

local function file_hash(path)
  local text = file_text(path)
  return text and vim.fn.sha256(text)
end

-- The buffer shows what its file holds (after :QuireSave, or once read again): not modified,
-- and checktime lets Neovim take the file as read (it reads the same text again), so that :w
-- does not ask whether to overwrite a file changed since it was read.
function M._mark_file_read(buf)
  local state = shared[buf]
  if not state or not state.file then return end
  local text = document_text(buf)
  if text ~= file_shows(state.file, text) then return end
  vim.api.nvim_buf_set_option(buf, 'modified', false)
  state.fileHash = file_hash(state.file)
  vim.cmd('silent! checktime ' .. buf)
end

-- Closes the document's view at the daemon (the buffer is unloaded or wiped); others stop
-- seeing this editor's cursor there.
local function close_view(buf)
  local state = shared[buf]
  if not state.closed and ready then request('document/close', { uri = state.uri }, function() end) end
  state.closed, state.marks, state.view = true, {}, nil   -- the daemon drops a closed view
end

-- Opens the document again with what the buffer shows and the bound file: a change made to the
-- file outside Quire is merged in once by the daemon, from what the file held when Quire last
-- read or wrote it (so a partner's unsaved text stays), and the reply brings the buffer to the
-- shared text. Not while the person is asked what to do with other text of the same name.
local open_document
local function reopen(buf)
  local state = shared[buf]
  if state.asking then return end
  if not state.closed then
    call('document/close', { uri = state.uri }, nil, true)
    state.closed, state.view = true, nil
  end
  local params = { uri = state.uri, text = document_text(buf), file = state.file }
  if open_document(buf, params) then
    state.fileHash = file_hash(state.file)
    log('reopened ' .. state.uri .. ' after reading it again')
  end
end

local attachments = 0

-- Change tracking: on_lines reports what each command changed; a reload (the whole text read
-- again) brings the buffer back to the shared text; a detach (unload, :e!) ends this attachment,
-- and the buffer is attached again once it is read.
local schedule_sync
local function attach(buf)
  attachments = attachments + 1
  local token = attachments
  shared[buf].attachment = token
  local function mine() return shared[buf] and shared[buf].attachment == token end
  vim.api.nvim_buf_attach(buf, false, {
    on_lines = function(_, _, _, first, last, new_last)
      if not mine() then return true end
      on_lines(buf, first, last, new_last)
    end,
    on_reload = function()
      if mine() then schedule_sync(buf) end
    end,
    on_detach = function()
      if mine() then shared[buf].attachment = nil end
    end,
  })
end

-- A reload keeps the buffer's 'fileformat' (checktime, 'autoread'): a file rewritten outside
-- with CRLF and read into a 'ff=unix' buffer shows a \r at the end of every line, which no text
-- sent to the daemon may hold (client-contract.md, section 7). Takes it as Neovim's own detection
-- would have, as a dos file: its lines without the \r (while away: nothing is recorded).
local function as_dos_if_crlf(buf)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  if vim.bo[buf].fileformat ~= 'unix' or not vim.o.fileformats:find('dos') or #lines == 0 then return end
  for _, line in ipairs(lines) do
    if line:sub(-1) ~= '\r' then return end
  end
  for i, line in ipairs(lines) do lines[i] = line:sub(1, -2) end
  vim.bo[buf].fileformat = 'dos'
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modified = false
  log('read ' .. shared[buf].uri .. ' again as a dos file (every line ended in CR LF)')
end

-- The buffer's text was read from its file again (:e!, :e after an unload, a reload): it shows
-- the file, not the shared text. If the file still holds what Quire knew, the daemon's text
-- replaces it (document/resync; the undo history stays); if it changed, the document is opened
-- again with the file, which merges the change in once.
local function sync(buf)
  local state = shared[buf]
  if not state then return end
  state.syncing = false
  if not vim.api.nvim_buf_is_loaded(buf) or state.asking then return end
  as_dos_if_crlf(buf)
  state.reports = {}
  if not state.attachment then attach(buf) end
  if not ready then
    state.away, state.closed = false, true   -- the reconnect opens it, and the daemon's text wins
    return
  end
  if state.closed or (state.file and file_hash(state.file) ~= state.fileHash) then
    reopen(buf)
  else
    call('document/resync', { uri = state.uri }, function(result) opened(buf, result) end)
  end
  M._mark_file_read(buf)
end

schedule_sync = function(buf)
  local state = shared[buf]
  state.away = true
  if state.syncing then return end
  state.syncing = true
  vim.schedule(function() sync(buf) end)
end

-- Before the buffer's text goes (unload, :e!, wipe): what was typed goes to the daemon first.
-- Still unloaded once the command is over (:e other without 'hidden', :bdelete): the view is
-- closed; :e back opens it again.
local function unloading(buf)
  local state = shared[buf]
  flush(buf)
  state.away = true
  vim.schedule(function()
    if shared[buf] == state and not vim.api.nvim_buf_is_loaded(buf) then close_view(buf) end
  end)
end

-- Before the file is read into the buffer: no modeline of the text takes effect (shared text
-- is anyone's), and nothing it reports is an edit.
local function reading(buf)
  local state = shared[buf]
  state.away, state.reports = true, {}
  vim.api.nvim_buf_set_option(buf, 'modeline', false)
end

-- checktime found the file changed: never a prompt. What was typed goes to the daemon, and the
-- file is read again (so Neovim knows it as read, and :w does not ask); the reload brings the
-- buffer back to the shared text, with the file's change merged in once when there is one.
local function file_changed(buf)
  local state = shared[buf]
  if vim.v.fcs_reason == 'deleted' then
    vim.v.fcs_choice = ''
    return warn(vim.api.nvim_buf_get_name(buf) .. ' was deleted; the shared text is kept')
  end
  flush(buf)
  vim.v.fcs_choice = 'reload'
end

-- A rebind (:saveas, :w after :file): the close keeps the view (`keepView`) and the open names
-- it with the epoch and daemon revision the buffer is at, as a reopen after a restart does, so
-- the daemon resolves what the buffer shows against exactly what it was sent: a partner's edit
-- in flight merges, nothing is asked, and the undo history goes on. The new file holds what the
-- buffer shows (this runs after the write), which the daemon takes as this editor's.
local function rebind(buf)
  local state = shared[buf]
  local closed = call('document/close', { uri = state.uri, keepView = true }, nil, true)
  local params = { uri = state.uri, text = document_text(buf), file = state.file }
  if closed ~= nil and state.view then
    params.view, params.epoch, params.revision = state.view, state.epoch, state.daemon
  end
  state.closed, state.reports = true, {}
  log('rebinding ' .. state.uri .. ' to ' .. state.file .. ', sending ' .. sorted_keys(params))
  if open_document(buf, params) then
    state.fileHash = file_hash(state.file)
  end
end

-- After :w: the daemon learns that the file holds this editor's text at its present revision
-- (document/saved), so it never merges that text in again as a change made outside Quire.
-- :saveas (or :w after :file) binds the document to the new file; :w to another file is a copy,
-- and so is :w of a buffer whose text is kept apart (bound to no file), to the file it shows.
local function written(buf, path)
  local state = shared[buf]
  flush(buf)
  if path == state.file then
    if ready and not state.closed and not state.away then
      send({ method = 'document/saved', params = { uri = state.uri, epoch = state.epoch, revision = state.daemon } })
    end
    state.fileHash = file_hash(path)
  elseif path == vim.fn.fnamemodify(vim.api.nvim_buf_get_name(buf), ':p') and path ~= state.named then
    state.file, state.named = path, path
    if ready and not state.away and not state.closed and not state.asking then
      rebind(buf)
    elseif not ready then
      -- the reconnect opens it with its view and the new file
    else
      state.closed = true
    end
  end
end

-- The buffer is wiped out: the document is closed, the buffer forgotten.
local function forget(buf)
  if not shared[buf] then return end
  close_view(buf)
  M._unfreeze(buf, shared[buf])
  shared[buf] = nil
  pcall(vim.api.nvim_del_augroup_by_name, 'quire_' .. buf)
end

local function watch(buf)
  local group = vim.api.nvim_create_augroup('quire_' .. buf, { clear = true })
  local function on(events, callback)
    vim.api.nvim_create_autocmd(events, { group = group, buffer = buf, callback = function(event)
      if shared[buf] then callback(event) end
    end })
  end
  on({ 'CursorMoved', 'CursorMovedI' }, function() M.send_cursor(buf) end)
  on('BufWritePost', function(event) written(buf, vim.fn.fnamemodify(event.file, ':p')) end)
  on('BufUnload', function() unloading(buf) end)
  on('BufReadPre', function() reading(buf) end)
  on('BufReadPost', function() schedule_sync(buf) end)
  on('FileChangedShell', function() file_changed(buf) end)
  -- The insert ended (Esc, or CTRL-O before its command): what was typed goes to the daemon,
  -- then the history the insert kept goes.
  on('InsertLeave', function()
    flush(buf)
    if shared[buf].undo_kept then forget_undo(buf, true) end
  end)
  -- Back in Normal mode from Insert or Replace mode (CTRL-C has no InsertLeave): a pattern of
  -- modes, so not a buffer's autocommand; the current buffer's history goes.
  vim.api.nvim_create_autocmd('ModeChanged', { group = vim.api.nvim_create_augroup('quire_modes', { clear = true }),
    pattern = '[iR]*:n', callback = function()
      local current = vim.api.nvim_get_current_buf()
      if shared[current] and shared[current].undo_kept then forget_undo(current, true) end
    end })
  on('BufWipeout', function() forget(buf) end)
end

-- The keys of Neovim's own undo and redo, in a shared buffer the daemon's (M.undo).
local undo_keys = { u = 'document/undo', U = 'document/undo', ['g-'] = 'document/undo',
  ['<C-R>'] = 'document/redo', ['g+'] = 'document/redo' }

-- What a shared buffer has once its document is open: no modeline of the shared text takes
-- effect (it is anyone's), changes are tracked, its life is watched, and u, U and g- undo (CTRL-R
-- and g+ redo) only your own edits (the daemon reverts yours and leaves others'; a count repeats
-- it). What else reaches Neovim's own history (:undo, :earlier, :later, a plugin's normal! u)
-- finds only your edits since another's last one (forget_undo).
local function begin_sharing(buf)
  vim.api.nvim_buf_set_option(buf, 'modeline', false)
  if not shared[buf].attachment then attach(buf) end
  watch(buf)
  for key, method in pairs(undo_keys) do
    vim.api.nvim_buf_set_keymap(buf, 'n', key, '<Cmd>lua require("quire").undo("' .. method .. '", vim.v.count1)<CR>', { noremap = true })
  end
end

-- The buffer is no longer shared (the client stops, or the person chose nothing): its change
-- tracking ends at its next change, and its own settings and keys come back.
local function unshare(buf)
  local state = shared[buf]
  if not state then return end
  shared[buf] = nil
  M._unfreeze(buf, state)
  pcall(vim.api.nvim_buf_clear_namespace, buf, ns, 0, -1)
  pcall(vim.api.nvim_del_augroup_by_name, 'quire_' .. buf)
  for key in pairs(undo_keys) do pcall(vim.api.nvim_buf_del_keymap, buf, 'n', key) end
  if vim.api.nvim_buf_is_valid(buf) and state.modeline ~= nil then
    vim.api.nvim_buf_set_option(buf, 'modeline', state.modeline)
  end
end

-- Open never destroys text: when the document exists with other text and nothing says what the
-- two have in common, the daemon changes nothing (-32017) and the person chooses. Until then the
-- buffer is not shared (nothing is sent, nothing applied) and the message and status line say so.
local choices = {
  { choice = 'take', label = 'Take the shared text (what this buffer shows is replaced)' },
  { choice = 'merge', label = 'Merge both (this buffer\'s text is added after the shared text)' },
  { choice = 'apart', label = 'Keep mine apart (share this buffer under another name)' },
}

local answer
local function ask(buf, params, data)
  local state = shared[buf]
  if not state then return end
  state.closed, state.asking, state.view = true, true, nil
  local apart = params.uri .. '~' .. M.user_name()
  warn(string.format('not shared until you choose: "%s" holds other text (%s characters)',
    params.uri, tostring(data.characters or '?')))
  vim.schedule(function()
    if shared[buf] ~= state or not state.asking then return end
    pcall(vim.cmd, 'redrawstatus!')
    vim.ui.select(choices, {
      prompt = string.format('"%s" holds other text than this buffer:', params.uri),
      format_item = function(item)
        return item.choice == 'apart' and string.format('Keep mine apart (share it as "%s")', apart) or item.label
      end,
    }, function(item) answer(buf, state, params, item and item.choice) end)
  end)
end

-- The person chose: take the shared text or merge (open again saying so), or keep theirs apart
-- (share the buffer's text as `<uri>~<user>`); nothing chosen leaves the buffer unshared.
answer = function(buf, state, params, choice)
  if shared[buf] ~= state or not state.asking then return end
  state.asking = false
  if not choice then
    unshare(buf)
    return say(string.format('not shared: nothing chosen for "%s"', params.uri))
  end
  if not vim.api.nvim_buf_is_loaded(buf) or not M.start() then
    unshare(buf)
    return warn(string.format('not shared: "%s" could not be opened', params.uri))
  end
  local again = { uri = params.uri, text = document_text(buf), file = params.file }
  if choice == 'apart' then
    -- A copy bound to no file: the file stays the document of its name's, which binds it on any
    -- open with it; two documents bound to one file would each write it and import the other's
    -- saves as changes made outside.
    again.uri, again.file, state.file = params.uri .. '~' .. M.user_name(), nil, nil
  else
    again.conflict = choice
  end
  state.uri, state.reports = again.uri, {}
  local result = open_document(buf, again)
  if not result then
    if not state.asking then unshare(buf) end   -- asked again (the other name is taken too) or failed
    return
  end
  state.fileHash = file_hash(state.file)
  begin_sharing(buf)
  pcall(vim.cmd, 'redrawstatus!')
  if choice == 'take' then
    say(string.format('joined "%s": this buffer shows the shared text', again.uri))
  elseif choice == 'merge' then
    say(string.format('joined "%s": your text is added after the shared text', again.uri))
  else
    say(string.format('sharing your text apart as "%s"; "%s" is left as it was', again.uri, params.uri))
  end
end

-- Opens the buffer's document (the reply brings the buffer to the shared text and names the
-- view); returns the result, or nil: failed (shown unless `quiet`), or the person is asked.
open_document = function(buf, params, quiet)
  local result, failure = call('document/open', params, function(result) opened(buf, result) end, quiet)
  if not result and failure and failure.code == DOCUMENT_DIFFERS then
    -- Left to the daemon, the name is in the refusal's data: the question and the answer use it.
    if not params.uri and failure.data and failure.data.uri then
      params.uri = failure.data.uri
      if shared[buf] then shared[buf].uri = params.uri end
    end
    ask(buf, params, failure.data or {})
  end
  return result
end

-- The daemon went away: start it again and reopen every shared buffer with what it shows now
-- (what was typed meanwhile and any edit in flight included), its view, epoch and the daemon
-- revision it had applied, so the daemon resolves the text against exactly what this buffer was
-- shown, by identity (an edit in flight that reached it is in that view already), and the file,
-- so a :w done meanwhile is known as this editor's. No base: a daemon with no such view (its
-- data directory lost) applies the open rules, and -32017 asks the person. Unloaded buffers open when read again; a buffer whose
-- person is still asked what to do with other text stays unshared.
reconnect = function()
  if ready or stopping then return end
  if not M.start(true) then return end
  reconnect_delay = 250
  for buf, state in pairs(shared) do
    local was_closed = state.closed
    state.closed = true   -- not open in this connection yet
    if vim.api.nvim_buf_is_loaded(buf) and not state.away and not state.asking then
      state.reports = {}   -- the text below holds them
      local params = { uri = state.uri, text = document_text(buf), file = state.file }
      if not was_closed then   -- it shows the shared text and what was typed since
        if state.view then
          params.view, params.epoch, params.revision = state.view, state.epoch, state.daemon
        end
      end
      log('reopening ' .. state.uri .. ' with ' .. vim.fn.json_encode({ view = params.view, epoch = params.epoch,
        revision = params.revision }) .. ', sending ' .. sorted_keys(params))
      if open_document(buf, params, true) then
        state.fileHash = file_hash(state.file)
        log('reopened ' .. state.uri .. ' after a daemon restart')
      end
    end
  end
end

-- Commands ----------------------------------------------------------------------------------

function M.share(name)
  stopping = false
  if not M.start() then return end
  local buf = vim.api.nvim_get_current_buf()
  if shared[buf] and shared[buf].asking then return say('choose first what to do with "' .. shared[buf].uri .. '"') end
  if shared[buf] then return say('this buffer is already shared as "' .. shared[buf].uri .. '"') end
  local file = vim.api.nvim_buf_get_name(buf)
  -- A file with no name given: the daemon names it (its path from the project root,
  -- protocol/README.md, "Naming rule for files") and says the name in the reply's uri.
  local uri = (name and name ~= '') and name or (file == '' and ('buffer' .. buf) or nil)
  local params = { uri = uri, text = document_text(buf) }
  if file ~= '' then params.file = vim.fn.fnamemodify(file, ':p') end
  -- named: the buffer's file when its binding was chosen; a :w there after the name changed
  -- (:saveas, :file) binds the document to the new name.
  shared[buf] = { uri = uri, file = params.file, named = params.file, fileHash = file_hash(params.file), closed = true,
    modeline = vim.api.nvim_buf_get_option(buf, 'modeline') }
  local result = open_document(buf, params)
  if not result then
    if not shared[buf].asking then shared[buf] = nil end   -- asked: shared once the person chooses
    return
  end
  begin_sharing(buf)
  say(string.format('%s "%s"', result.created and 'sharing' or 'joined', shared[buf].uri))
end

-- A new buffer showing document `name`: it starts as no text at all (not one empty line with a
-- final newline), so it joins the document rather than bringing a text of its own.
function M.open(name)
  vim.cmd('enew')
  vim.bo.eol = false
  vim.bo.fixeol = false
  M.share(name)
end

function M.send_cursor(buf)
  local state = shared[buf]
  if not state or not ready or state.away or state.closed then return end
  if flush(buf) == false then return end   -- unsent lines: a cursor the daemon cannot place
  local pos = vim.api.nvim_win_get_cursor(0)
  local at = { line = pos[1] - 1, character = pos[2] }
  send({ method = 'cursor/update', params = { uri = state.uri, epoch = state.epoch, revision = state.daemon,
    selections = { { start = at, ['end'] = at } } } })
end

-- u and CTRL-R: the daemon reverts (or reapplies) this editor's own last steps, `count` times,
-- leaving others' edits alone; the change comes back as a daemon edit and the cursor goes to it.
function M.undo(method, count)
  local buf = vim.api.nvim_get_current_buf()
  local state = shared[buf]
  if not state or not ready or state.away or state.closed then return end
  flush(buf)
  for _ = 1, math.max(count or 1, 1) do
    local result = call(method, { uri = state.uri })
    if not result then return end
    if not result.done then
      return say(method == 'document/undo' and 'nothing of yours to undo' or 'nothing to redo')
    end
    state.jump = true
  end
end

-- :QuireSave: the daemon writes the shared text to the bound file (atomically), merging first
-- what changed in the file outside Quire.
function M.save()
  local buf = vim.api.nvim_get_current_buf()
  local state = shared[buf]
  if not state then return warn('this buffer is not shared') end
  if not ready or state.away or state.closed then return warn('not connected to the daemon; nothing saved') end
  flush(buf)
  local result = call('document/save', { uri = state.uri })
  if not result then return end
  -- What Quire knows the file to hold: the bytes the daemon just wrote (the reply's hash is the
  -- text's, which differs from the bytes' in a CRLF file or one with a BOM).
  if result.path == state.file then state.fileHash = file_hash(state.file) end
  if result.hash == vim.fn.sha256(document_text(buf)) then
    M._mark_file_read(buf)
  else
    state.savedHash = result.hash   -- the change merged in from the file is on its way
  end
  say('saved ' .. result.path .. (result.importedEdits > 0 and string.format(' (with %d change(s) made to the file outside Quire)', result.importedEdits) or ''))
end

function M.listen(port)
  if not M.start() then return end
  local result = call('peer/listen', { port = tonumber(port) or 0 })
  if result then
    listen_port = result.port
    say('listening for peers on port ' .. result.port)
  end
end

function M.connect(arguments)
  if not M.start() then return end
  local address, fingerprint = unpack(vim.split(arguments, ' ', true))
  local host, port = address:match('^(.*):(%d+)$')
  local params = { host = host ~= '' and host or '127.0.0.1', port = tonumber(port) }
  if fingerprint and fingerprint ~= '' then params.fingerprint = fingerprint end
  if call('peer/connect', params) ~= nil then
    say('connecting to ' .. address .. '; you are told when it is up')
  end
end

-- :QuireConnectRelay host:port [fingerprint]: dial a `quire relay` until it pairs this daemon
-- with another of the same secret (both behind NAT); dialed again whenever the link drops.
function M.connect_relay(arguments)
  if not M.start() then return end
  local address, fingerprint = unpack(vim.split(arguments, ' ', true))
  local host, port = address:match('^(.*):(%d+)$')
  local params = { host = host ~= '' and host or '127.0.0.1', port = tonumber(port), relay = true }
  if fingerprint and fingerprint ~= '' then params.fingerprint = fingerprint end
  if call('peer/connect', params) ~= nil then
    say('dialing the relay ' .. address .. ' to be paired')
  end
end

function M.connect_command(command)
  if not M.start() then return end
  if call('peer/connect', { command = command }) ~= nil then
    say('peering over: ' .. command .. '; you are told when it is up')
  end
end

function M.disconnect(link)
  if not M.start() then return end
  local status = call('peer/status', vim.empty_dict())
  if not status then return end
  local links = {}
  if link and link ~= '' then links = { tonumber(link) } else
    for _, l in ipairs(status.links) do table.insert(links, l.link) end
  end
  for _, id in ipairs(links) do
    local reply = request('peer/disconnect', { link = id })
    if reply and not reply.error then say('disconnected link ' .. id) end
  end
end

function M.merge(from)
  local buf = vim.api.nvim_get_current_buf()
  local state = shared[buf]
  if not state then return warn('this buffer is not shared') end
  local result = call('document/merge', { uri = state.uri, from = from })
  if result then
    state.jump = true
    say('merged ' .. result.merged .. ' characters of ' .. from)
  end
end

-- One line from a quire/status result. The daemon counts (its `summary`: editors, documents,
-- links up, what peers do not have yet, removed characters kept for peers, who is in which
-- document); this only words it.
function M.status_summary(status)
  local s = status.summary
  local storage = type(status.storage) == 'table'
    and ('kept in ' .. status.storage.dataDir .. (type(status.storage.failure) == 'string' and (' (FAILED: ' .. status.storage.failure .. ')') or ''))
    or 'in memory only'
  local peers = s.links == 0 and 'no peer links' or string.format('%d of %d peer link(s) up', s.linksUp, s.links)
  if s.linksUp > 0 then
    peers = peers .. (s.notYetSent == 0 and ', in sync' or string.format(', %d character(s) not yet with peers', s.notYetSent))
  end
  if s.removedKept > 0 then peers = peers .. string.format(', %d removed character(s) kept for peers', s.removedKept) end
  local people = {}
  for _, p in ipairs(s.people) do table.insert(people, p.name .. ' (' .. table.concat(p.documents, ', ') .. ')') end
  local links = {}
  for _, l in ipairs(status.peers.links) do
    table.insert(links, string.format('; %s %s, %s%s', M.peer_name(l), l.state,
      l.encrypted == true and 'encrypted' or 'NOT encrypted', type(l.fingerprint) == 'string' and (', key ' .. l.fingerprint) or ''))
  end
  return string.format('quire: %d editor(s), %d document(s), %s%s; documents %s; your key %s%s', s.editors, s.documents, peers,
    #people > 0 and ('; with ' .. table.concat(people, ', ')) or '', storage, status.peers.fingerprint or '?', table.concat(links))
end

function M.status()
  if not M.start() then return end
  local status = call('quire/status', vim.empty_dict())
  if not status then return end
  local summary = M.status_summary(status)
  vim.notify(summary)
  return summary
end

function M.resync()
  resync(vim.api.nvim_get_current_buf())
end

function M.document_names()
  if not M.start() then return {} end
  local names = {}
  for _, d in ipairs(call('document/list', vim.empty_dict()) or {}) do table.insert(names, d.uri) end
  return names
end

function M.statusline()
  local state = shared[vim.api.nvim_get_current_buf()]
  if not state then return '' end
  if state.asking then return '[quire: not shared, choose]' end
  if not ready then return '[quire: reconnecting]' end
  if state.read_only then return '[quire: read-only]' end
  local count = links_up
  if count == 0 then return '[quire]' end
  return string.format('[quire %d peer%s]', count, count == 1 and '' or 's')
end

function M.stop()
  stopping, listen_port = true, nil
  if ready then
    request('shutdown', nil)
    send({ method = 'exit' })
  end
  for buf in pairs(shared) do unshare(buf) end
  ready = false
end

-- Joining by opening a file ------------------------------------------------------------------

-- Whether a daemon runs for this user: the editor socket of the data directory, where the daemon
-- puts it (EditorSocketLocation), exists.
local function daemon_running()
  local xdg, home = vim.env.XDG_DATA_HOME, vim.env.HOME
  local data = (xdg and xdg:sub(1, 1) == '/') and (xdg .. '/quire') or (home and home ~= '' and (home .. '/.local/share/quire')) or nil
  if not data or vim.fn.isdirectory(data) == 0 then return false end
  local runtime = vim.env.XDG_RUNTIME_DIR
  if runtime and runtime:sub(1, 1) == '/' and vim.fn.isdirectory(runtime) == 1 then
    local real = vim.fn.resolve(vim.fn.fnamemodify(data, ':p')):gsub('/$', '')
    return vim.fn.getftype(runtime:gsub('/$', '') .. '/quire/editors-' .. vim.fn.sha256(real):sub(1, 32) .. '.sock') == 'socket'
  end
  return vim.fn.getftype(data .. '/editors.sock') == 'socket'
end

-- A file was read or created (BufReadPost, BufNewFile): when a daemon runs (this Neovim started
-- one, or its editor socket is there: `quire` attaches to it), ask it to open the file only if it
-- lies in a shared or joined project (`ifShared`). `{shared: false}` leaves the buffer alone; an
-- open shares it as :QuireShare does, so opening a file of the project joins its document.
local function join_if_shared(buf)
  if shared[buf] or not vim.api.nvim_buf_is_loaded(buf) or vim.bo[buf].buftype ~= '' then return end
  local name = vim.api.nvim_buf_get_name(buf)
  if name == '' or name:match('^%a+://') then return end
  if not ready and (stopping or not daemon_running()) then return end
  if not M.start(true) then return end
  local file = vim.fn.resolve(vim.fn.fnamemodify(name, ':p'))
  local state = { file = file, named = file, fileHash = file_hash(file), closed = true,
    modeline = vim.api.nvim_buf_get_option(buf, 'modeline') }
  shared[buf] = state
  local params = { file = file, ifShared = true, text = document_text(buf) }
  local result, failure = call('document/open', params, function(result)
    if result.shared == true then opened(buf, result) end
  end, true)
  if not result then
    if failure and failure.code == DOCUMENT_DIFFERS and failure.data and failure.data.uri then
      params.ifShared, params.uri = nil, failure.data.uri
      state.uri = params.uri
      return ask(buf, params, failure.data)   -- in the project, with other text: the person decides
    end
    shared[buf] = nil
    return
  end
  if result.shared ~= true then
    shared[buf] = nil
    -- A daemon that does not know ifShared opened it as an ordinary open: leave it alone.
    if result.uri then request('document/close', { uri = result.uri }, function() end) end
    return
  end
  begin_sharing(buf)
  say(string.format('joined "%s"', state.uri))
end

function M.opened(buf)
  local ok, failure = pcall(join_if_shared, buf)
  if not ok then log('joining ' .. vim.api.nvim_buf_get_name(buf) .. ' failed: ' .. tostring(failure)) end
end

-- Who is here, jump and follow ------------------------------------------------------------------
-- The daemon says who is where (quire/who: each person with their cursor in every document they
-- are in, most recent first, in our byte positions, with the file the document is bound to);
-- this only moves windows.

going_to = false

-- Everyone the daemon knows a cursor of ({} when it cannot say).
local function people(quiet)
  if not ready and not M.start() then return {} end
  local result = call('quire/who', vim.empty_dict(), nil, quiet)
  return result and result.people or {}
end

local function place_words(place)
  local where = (type(place.path) == 'string' and place.path ~= '') and vim.fn.fnamemodify(place.path, ':~:.') or place.uri
  return where .. ':' .. (place.line + 1)
end

-- :QuireWho: everyone here, with their role in the project they are in (read, write, owner), the
-- file and line of their cursor, on one line.
function M.who()
  local words = {}
  for _, p in ipairs(people()) do
    local tags = {}
    if p.self then table.insert(tags, 'you') end
    if type(p.role) == 'string' then table.insert(tags, p.role) end
    table.insert(words, p.name .. (#tags > 0 and (' (' .. table.concat(tags, ', ') .. ')') or '') .. ' ' .. place_words(p.at[1])
      .. (#p.at > 1 and string.format(' (+%d file%s)', #p.at - 1, #p.at == 2 and '' or 's') or ''))
  end
  local line = #words == 0 and 'nobody else is here' or ('here: ' .. table.concat(words, ', '))
  say(line)
  return line
end

-- The others' names, for completing :QuireJump and :QuireFollow.
function M.people_names()
  local names = {}
  for _, p in ipairs(people(true)) do if not p.self then table.insert(names, p.name) end end
  return names
end

-- The person called `name` (the only other one when `name` is empty), or nil after saying why not.
local function person(name)
  local others, found = {}, {}
  for _, p in ipairs(people()) do
    if not p.self then
      table.insert(others, p.name)
      if name == nil or name == '' or p.name == name then table.insert(found, p) end
    end
  end
  if #found == 1 or (name and name ~= '' and #found > 0) then return found[1] end   -- two of one name: the first listed
  local names = table.concat(others, ', ')
  warn(#others == 0 and 'nobody else is here' or ((name == nil or name == '') and ('whom? ' .. names)
    or (name .. ' is not here (here: ' .. names .. ')')))
end

-- Puts the cursor at `place`: in the buffer sharing its document, else its file opened by path
-- (which joins the document: M.opened, or :QuireShare's open of that document when the file is
-- in no project), else the document opened by name. Whether it got there.
local function go_to(place)
  local buf = buffer_of(place.uri)
  local path = type(place.path) == 'string' and place.path ~= '' and place.path or nil
  if not buf and path and vim.fn.bufloaded(path) == 1 then buf = vim.fn.bufnr(path) end
  local ok, failure = pcall(function()
    if buf then
      local windows = vim.fn.win_findbuf(buf)
      if #windows > 0 then vim.api.nvim_set_current_win(windows[1]) else vim.cmd('hide buffer ' .. buf) end
    elseif path then
      vim.cmd('hide edit ' .. vim.fn.fnameescape(path))
    else
      vim.cmd('hide enew')
      vim.bo.eol, vim.bo.fixeol = false, false
    end
  end)
  if not ok then
    warn('cannot go to ' .. place_words(place) .. ': ' .. tostring(failure))
    return false
  end
  if not shared[vim.api.nvim_get_current_buf()] then M.share(place.uri) end   -- joins the document where they are
  if buffer_of(place.uri) ~= vim.api.nvim_get_current_buf() then return false end
  local count = vim.api.nvim_buf_line_count(0)
  pcall(vim.api.nvim_win_set_cursor, 0, { math.min(place.line + 1, count), place.character })
  return true
end

-- :QuireJump [name]: to the person's cursor, opening its file if needed.
function M.jump(name)
  local p = person(name)
  if p and go_to(p.at[1]) then say('at ' .. p.name .. "'s cursor, " .. place_words(p.at[1])) end
end

-- Whom this Neovim follows (nil when no one).
function M.following() return following end

here = function()
  local pos = vim.api.nvim_win_get_cursor(0)
  return vim.api.nvim_get_current_buf() .. ':' .. pos[1] .. ':' .. pos[2]
end

local function follow_to(place)
  if going_to then return end
  follow_place = place.uri .. ' ' .. place.line .. ' ' .. place.character
  going_to = true
  local ok, arrived = pcall(go_to, place)
  going_to = false
  if ok and arrived then follow_at = here() end
end

-- :QuireUnfollow, or the follow ended for `why` (said when given).
function M.unfollow(why)
  if not following then
    if why == nil then say('not following anyone') end
    return
  end
  local name = following
  following, follow_place, follow_at = nil, nil, nil
  if follow_timer then follow_timer:stop(); follow_timer:close(); follow_timer = nil end
  pcall(vim.api.nvim_del_augroup_by_name, 'quire_follow')
  if why ~= false then say('stopped following ' .. name .. ' (' .. (why or 'as asked') .. ')') end
end

-- The cursor left where following put it: you moved, the follow ends.
function M.follower_moved()
  if following and not going_to and follow_at and here() ~= follow_at then M.unfollow('you moved') end
end

-- Every 300 ms while following: where the daemon says they are now, which may be a file this
-- Neovim has not open; they left: the follow ends.
local function follow_tick()
  if not following or going_to then return end
  M.follower_moved()
  if not following or not ready then return end
  local found
  for _, p in ipairs(people(true)) do if not p.self and p.name == following then found = p end end
  if not found then return M.unfollow(following .. ' left') end
  local place = found.at[1]
  if place.uri .. ' ' .. place.line .. ' ' .. place.character ~= follow_place then follow_to(place) end
end

-- :QuireFollow [name]: this window goes where their cursor goes, across files, until you move the
-- cursor yourself or :QuireUnfollow. Their cursor notifications move it at once; quire/who every
-- 300 ms follows them into files this Neovim has not open.
function M.follow(name)
  local p = person(name)
  if not p then return end
  M.unfollow(false)
  following = p.name
  follow_to(p.at[1])
  follow_timer = vim.loop.new_timer()
  follow_timer:start(300, 300, vim.schedule_wrap(follow_tick))
  local group = vim.api.nvim_create_augroup('quire_follow', { clear = true })
  vim.api.nvim_create_autocmd({ 'CursorMoved', 'CursorMovedI' }, { group = group, callback = function() M.follower_moved() end })
  say('following ' .. following .. ' (move, or :QuireUnfollow, to stop)')
end

-- Their cursor moved in a document this Neovim shows.
local function follow_cursor(params)
  if not following or not params.user or params.user.name ~= following or #(params.selections or {}) == 0 then return end
  M.follower_moved()
  if not following or not buffer_of(params.uri) then return end
  local at = params.selections[#params.selections]['end']
  -- Moved after the command in progress, never inside another request's wait.
  vim.schedule(function()
    if following then follow_to({ uri = params.uri, line = at.line, character = at.character }) end
  end)
end

local draw_cursor = handlers['cursor/update']
handlers['cursor/update'] = function(params)
  draw_cursor(params)
  follow_cursor(params)
end

-- For the tests.
local function resolve(buf) return buf == 0 and vim.api.nvim_get_current_buf() or buf end
function M._epoch(buf) return shared[resolve(buf)] and shared[resolve(buf)].epoch end
-- A client bug, for the client's own tests: the next edit only carries a revision the daemon never
-- sent, so it is refused (-32012) and the resync that follows is a correct one.
function M._break_revision(buf) shared[resolve(buf)].break_revision = true end
function M._state(buf) return shared[resolve(buf)] end

return M
