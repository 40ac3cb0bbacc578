-- Quire for Neovim (0.7 or later): shares buffers with the quire daemon, which it starts as a job
-- speaking newline-delimited JSON-RPC. Sends changed lines (nvim_buf_attach), applies the
-- daemon's edits by the revision rules of protocol/README.md without echoing them, moves the
-- cursor with others' text, shows others' cursors and names, undoes only your own edits, and
-- reopens every shared buffer after the daemon restarts so nothing typed meanwhile is lost.
local M = {}

M.config = {
  command = { 'quire' },              -- how to start (or join) the daemon
  user = vim.env.USER or 'nvim',      -- your name, shown to others
  color = '#2e8b57',                  -- your cursor's colour, shown to others
  log = nil,                          -- a file to log to
}

local job, ready, stopping = nil, false, false
local next_id, waiting, replies = 0, {}, {}
local partial = ''
local shared = {}                     -- per buffer: uri, epoch, editor, daemon, acknowledged, pending
local applying = false
local peer_links = {}
local listen_port = nil
local reconnect_delay = 250
local edit_count = 0
local instance = string.format('nvim-%d-%d-%d', vim.fn.getpid(), os.time(), math.random(1, 1e9))
local ns = vim.api.nvim_create_namespace('quire')

local function log(message)
  if M.config.log then
    local file = io.open(M.config.log, 'a')
    if file then
      file:write(os.date('%H:%M:%S ') .. message .. '\n')
      file:close()
    end
  end
end

local function warn(message)
  vim.notify('quire: ' .. message, vim.log.levels.WARN)
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

local function send(message)
  message.jsonrpc = '2.0'
  if job then vim.fn.chansend(job, vim.fn.json_encode(message) .. '\n') end
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
  send({ id = id, method = method, params = params or vim.empty_dict() })
  if callback then return end
  vim.wait(10000, function() return replies[id] ~= nil or job == nil end, 5)
  local reply = replies[id]
  replies[id] = nil
  return reply
end

-- A request whose result is wanted: the result, or nil after showing the error.
local function call(method, params)
  local reply = request(method, params)
  if not reply then warn(method .. ' failed: no answer'); return nil end
  if reply.error then warn(method .. ' failed: ' .. reply.error.message); return nil end
  return reply.result
end

-- Line models of a text (the acknowledged text a reopen merges from) --------------------------

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

-- Applies daemon changes in order; cursors of windows showing the buffer move with the text.
local function apply_changes(buf, changes)
  applying = true
  local ok, failure = pcall(function()
    for _, change in ipairs(changes) do
      local count = vim.api.nvim_buf_line_count(buf)
      local eol = vim.api.nvim_buf_get_option(buf, 'eol')
      local cursors = {}
      for _, win in ipairs(vim.fn.win_findbuf(buf)) do
        local pos = vim.api.nvim_win_get_cursor(win)
        cursors[win] = { M.moved_position(pos[1] - 1, pos[2], change) }
      end
      local e = change.range['end']
      if e.line < count - 1 then
        vim.api.nvim_buf_set_text(buf, change.range.start.line, change.range.start.character, e.line, e.character,
          vim.split(change.text, '\n', true))
      else
        -- The change reaches the last line: rebuild the tail, so that a text ending in a line
        -- break is shown with 'eol' and never as an extra empty line.
        local lines = document_lines(buf)
        apply_range(lines, change)
        local new_eol = #lines > 1 and lines[#lines] == ''
        if new_eol then table.remove(lines) end
        local from = math.min(change.range.start.line, count)
        vim.api.nvim_buf_set_lines(buf, from, -1, false, vim.list_slice(lines, from + 1))
        if new_eol ~= eol then vim.api.nvim_buf_set_option(buf, 'eol', new_eol) end
      end
      for win, pos in pairs(cursors) do
        local line = math.min(pos[1], vim.api.nvim_buf_line_count(buf) - 1)
        pcall(vim.api.nvim_win_set_cursor, win, { line + 1, pos[2] })
      end
    end
  end)
  applying = false
  if not ok then error(failure) end
end

local function acknowledged_text(state)
  return table.concat(state.acknowledged, '\n')
end

local function replace_text(buf, text)
  applying = true
  local lines = vim.split(text, '\n', true)
  local eol = #lines > 1 and lines[#lines] == ''
  if eol then table.remove(lines) end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.api.nvim_buf_set_option(buf, 'eol', eol)
  applying = false
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
local function flush(buf)
  local state = shared[buf]
  if not state or not state.reports or #state.reports == 0 then return end
  local top, old_end, new_end = M.changed_region(state.reports)
  state.reports = {}
  if not ready then return end
  local change = { lines = { start = top, ['end'] = old_end }, newLines = vim.api.nvim_buf_get_lines(buf, top, new_end, false) }
  edit_count = edit_count + 1
  local params = { uri = state.uri, epoch = state.epoch, revision = state.daemon, changes = { change },
    editId = instance .. '-' .. edit_count, undoGroup = vim.fn.changenr() }
  if vim.api.nvim_get_current_buf() == buf then
    local pos = vim.api.nvim_win_get_cursor(0)
    params.cursor = { line = pos[1] - 1, character = pos[2] }
  end
  local epoch = state.epoch
  table.insert(state.pending, { editId = params.editId, changes = { change } })
  state.editor = state.editor + 1
  request('document/edit', params, function(reply) M._on_edit_reply(buf, epoch, reply) end)
  log('sent edit ' .. state.editor .. ': ' .. vim.fn.json_encode(params))
end

local function on_lines(_, buf, _, first, last, new_last)
  local state = shared[buf]
  if not state then return true end   -- detach
  if applying or not ready then return end
  state.reports = state.reports or {}
  table.insert(state.reports, { first, last, new_last })
  if #state.reports == 1 then vim.schedule(function() flush(buf) end) end
end

function M._on_edit_reply(buf, epoch, reply)
  local state = shared[buf]
  if not state or state.epoch ~= epoch then return end
  if reply.result then
    local done = table.remove(state.pending, 1)
    if done then
      local change = done.changes[1]
      splice_lines(state.acknowledged, change.lines.start, change.lines['end'], change.newLines)
    end
  elseif not state.resyncing then
    state.resyncing = true
    warn('the daemon refused an edit (' .. (reply.error and reply.error.message or 'no reason') .. '); resyncing, your text is kept')
    vim.schedule(function() M.resync_keeping_text(buf) end)
  end
end

local function acknowledge(buf)
  shared[buf].acknowledged = document_lines(buf)
end

-- After a refused edit: the daemon merges what the buffer shows since the acknowledged text.
function M.resync_keeping_text(buf)
  local state = shared[buf]
  if not state or not ready then return end
  state.reports = {}   -- the text below holds them
  local result = call('document/resync', { uri = state.uri, text = document_text(buf), base = acknowledged_text(state) })
  state.resyncing = false
  if not result then return end
  if result.text ~= document_text(buf) then replace_text(buf, result.text) end
  state.epoch, state.editor, state.daemon, state.pending = result.epoch, 0, 0, {}
  acknowledge(buf)
end

local function buffer_of(uri)
  for buf, state in pairs(shared) do
    if state.uri == uri then return buf end
  end
end

handlers['document/edit'] = function(params)
  local buf = buffer_of(params.uri)
  if not buf then return end
  flush(buf)   -- our unsent changes first: the edit applies only if it saw them
  local state = shared[buf]
  if params.epoch ~= state.epoch or params.revision ~= state.editor then
    return log('dropped a daemon edit based on ' .. params.revision .. ', we are at ' .. state.editor)
  end
  apply_changes(buf, params.changes)
  for _, change in ipairs(params.changes) do apply_range(state.acknowledged, change) end
  state.daemon = state.daemon + 1
  if state.jump and #params.changes > 0 and vim.api.nvim_get_current_buf() == buf then
    state.jump = false
    local at = params.changes[#params.changes].range.start
    pcall(vim.api.nvim_win_set_cursor, 0, { at.line + 1, at.character })
  end
  log('applied daemon edit ' .. state.daemon .. ': ' .. vim.fn.json_encode(params.changes))
end

-- Others' cursors: a highlighted character and their name after it.
handlers['cursor/update'] = function(params)
  local buf = buffer_of(params.uri)
  if not buf then return end
  local state = shared[buf]
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

handlers['peer/changed'] = function(params)
  local who = (params.user ~= nil and params.user ~= '') and params.user or params.address
  local key = tostring(params.link)
  if params.event == 'joined' then
    peer_links[key] = true
    vim.notify('quire: ' .. who .. ' joined')
  else
    peer_links[key] = nil
    if params.event == 'failed' then
      warn((params.link == 0 and '' or who .. ': ') .. (params.reason or 'failed'))
    else
      vim.notify('quire: ' .. who .. ' left' .. (params.reason and (' (' .. params.reason .. ')') or ''))
    end
  end
  vim.cmd('redrawstatus!')
end

-- The daemon ----------------------------------------------------------------------------------

local reconnect

local function on_exit(_, status)
  ready, job, peer_links = false, nil, {}
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

function M.start()
  if ready then return true end
  partial = ''
  local ok, id = pcall(vim.fn.jobstart, M.config.command, { on_stdout = on_stdout, on_exit = on_exit, stderr_buffered = false })
  if not ok or id <= 0 then warn('cannot start ' .. table.concat(M.config.command, ' ')); return false end
  job = id
  local result = call('initialize', { protocolVersion = 1, clientInfo = { name = 'quire.nvim', version = '1' },
    user = { name = M.config.user, color = M.config.color },
    capabilities = { general = { positionEncodings = { 'utf-8' } } } })
  if not result or result.capabilities.positionEncoding ~= 'utf-8' then return false end
  send({ method = 'initialized', params = vim.empty_dict() })
  ready = true
  local status = call('peer/status', vim.empty_dict())
  for _, link in ipairs(status and status.links or {}) do
    if link.state == 'established' then peer_links[tostring(link.link)] = true end
  end
  if listen_port then request('peer/listen', { port = listen_port }) end
  return true
end

-- The daemon went away: start it again and reopen every shared buffer with its text, the text
-- the daemon acknowledged, and the edits in flight, so what was typed meanwhile merges in.
reconnect = function()
  if ready or stopping then return end
  if not M.start() then return end
  reconnect_delay = 250
  for buf, state in pairs(shared) do
    state.reports = {}   -- the text below holds them
    local params = { uri = state.uri, text = document_text(buf), base = acknowledged_text(state) }
    if #state.pending > 0 then params.pending = state.pending end
    local result = call('document/open', params)
    if result then
      state.epoch, state.editor, state.daemon, state.pending = result.epoch, 0, 0, {}
      apply_changes(buf, result.changes)
      acknowledge(buf)
      log('reopened ' .. state.uri .. ' after a daemon restart')
    end
  end
end

-- The document name of a file: its path from the project root (nearest .git or .quire-root).
function M.document_name(path)
  local full = vim.fn.fnamemodify(path, ':p')
  local dir = vim.fn.fnamemodify(full, ':h')
  local root = dir
  while true do
    if vim.fn.isdirectory(dir .. '/.git') == 1 or vim.fn.filereadable(dir .. '/.git') == 1
        or vim.fn.filereadable(dir .. '/.quire-root') == 1 then
      root = dir
      break
    end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir then break end
    dir = parent
  end
  return full:sub(#root + 2)
end

-- Commands ----------------------------------------------------------------------------------

function M.share(name)
  stopping = false
  if not M.start() then return end
  local buf = vim.api.nvim_get_current_buf()
  local file = vim.api.nvim_buf_get_name(buf)
  local uri = (name and name ~= '') and name or (file ~= '' and M.document_name(file) or ('buffer' .. buf))
  local params = { uri = uri, text = document_text(buf) }
  if file ~= '' then params.file = vim.fn.fnamemodify(file, ':p') end
  local result = call('document/open', params)
  if not result then return end
  shared[buf] = { uri = uri, epoch = result.epoch, editor = 0, daemon = 0, pending = {} }
  apply_changes(buf, result.changes)
  acknowledge(buf)
  vim.api.nvim_buf_attach(buf, false, { on_lines = on_lines })
  vim.cmd(string.format([[
    augroup quire_%d
      autocmd!
      autocmd CursorMoved,CursorMovedI <buffer=%d> lua require('quire').send_cursor(%d)
    augroup END]], buf, buf, buf))
  -- Your own undo only: the daemon reverts your edits and leaves others'.
  vim.api.nvim_buf_set_keymap(buf, 'n', 'u', '<Cmd>lua require("quire").undo("document/undo")<CR>', { noremap = true })
  vim.api.nvim_buf_set_keymap(buf, 'n', '<C-R>', '<Cmd>lua require("quire").undo("document/redo")<CR>', { noremap = true })
  vim.notify(string.format('quire: %s "%s"', result.created and 'sharing' or 'joined', uri))
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
  if not state or not ready then return end
  flush(buf)
  local pos = vim.api.nvim_win_get_cursor(0)
  local at = { line = pos[1] - 1, character = pos[2] }
  send({ method = 'cursor/update', params = { uri = state.uri, epoch = state.epoch, revision = state.daemon,
    selections = { { start = at, ['end'] = at } } } })
end

function M.undo(method)
  local buf = vim.api.nvim_get_current_buf()
  local state = shared[buf]
  if not state or not ready then return end
  flush(buf)
  local result = call(method, { uri = state.uri })
  if result and not result.done then
    vim.notify(method == 'document/undo' and 'quire: nothing of yours to undo' or 'quire: nothing to redo')
  elseif result then
    state.jump = true
  end
end

function M.listen(port)
  if not M.start() then return end
  local result = call('peer/listen', { port = tonumber(port) or 0 })
  if result then
    listen_port = result.port
    vim.notify('quire: listening for peers on port ' .. result.port)
  end
end

function M.connect(arguments)
  if not M.start() then return end
  local address, fingerprint = unpack(vim.split(arguments, ' ', true))
  local host, port = address:match('^(.*):(%d+)$')
  local params = { host = host ~= '' and host or '127.0.0.1', port = tonumber(port) }
  if fingerprint and fingerprint ~= '' then params.fingerprint = fingerprint end
  if call('peer/connect', params) ~= nil then
    vim.notify('quire: connecting to ' .. address .. '; you are told when it is up')
  end
end

function M.connect_command(command)
  if not M.start() then return end
  if call('peer/connect', { command = command }) ~= nil then
    vim.notify('quire: peering over: ' .. command .. '; you are told when it is up')
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
    if reply and not reply.error then vim.notify('quire: disconnected link ' .. id) end
  end
end

function M.merge(from)
  local buf = vim.api.nvim_get_current_buf()
  local state = shared[buf]
  if not state then return warn('this buffer is not shared') end
  local result = call('document/merge', { uri = state.uri, from = from })
  if result then
    state.jump = true
    vim.notify('quire: merged ' .. result.merged .. ' characters of ' .. from)
  end
end

function M.status()
  if not M.start() then return end
  local status = call('quire/status', vim.empty_dict())
  if not status then return end
  local parts = {}
  for _, l in ipairs(status.peers.links) do
    table.insert(parts, string.format('; %s %s, %s%s', l.user ~= '' and l.user or l.address, l.state,
      l.encrypted and 'encrypted' or 'NOT encrypted', type(l.fingerprint) == 'string' and (', key ' .. l.fingerprint) or ''))
  end
  local summary = string.format('quire: %d editor(s), %d document(s), %d peer link(s); your key %s%s', status.sessions,
    #status.documents, #status.peers.links, status.peers.fingerprint or '?', table.concat(parts))
  vim.notify(summary)
  return summary
end

function M.resync()
  local buf = vim.api.nvim_get_current_buf()
  local state = shared[buf]
  if not state or not ready then return end
  local result = call('document/resync', { uri = state.uri })
  if not result then return end
  replace_text(buf, result.text)
  state.epoch, state.editor, state.daemon, state.pending = result.epoch, 0, 0, {}
  acknowledge(buf)
end

function M.document_names()
  if not M.start() then return {} end
  local names = {}
  for _, d in ipairs(call('document/list', vim.empty_dict()) or {}) do table.insert(names, d.uri) end
  return names
end

function M.statusline()
  if not shared[vim.api.nvim_get_current_buf()] then return '' end
  if not ready then return '[quire: reconnecting]' end
  local count = vim.tbl_count(peer_links)
  if count == 0 then return '[quire]' end
  return string.format('[quire %d peer%s]', count, count == 1 and '' or 's')
end

function M.stop()
  stopping, listen_port = true, nil
  if ready then
    request('shutdown', nil)
    send({ method = 'exit' })
  end
  for buf in pairs(shared) do
    pcall(vim.api.nvim_buf_clear_namespace, buf, ns, 0, -1)
    shared[buf] = nil   -- on_lines detaches at the next change
  end
  ready = false
end

-- For the tests.
local function resolve(buf) return buf == 0 and vim.api.nvim_get_current_buf() or buf end
function M._epoch(buf) return shared[resolve(buf)] and shared[resolve(buf)].epoch end
function M._break_revision(buf) shared[resolve(buf)].daemon = shared[resolve(buf)].daemon + 100 end

return M
