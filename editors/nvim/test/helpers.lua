-- What the headless Neovim client tests share: checks, waiting on conditions with a timeout,
-- and another editor on a daemon speaking line-mode JSON through `quire attach`.
local H = { errors = {} }

function H.check(ok, what)
  if not ok then table.insert(H.errors, what) end
  return ok
end

-- Points the client at the test daemon through `quire attach`, as nora, logging to the test log.
function H.attach(quire, socket)
  quire.config.command = { vim.env.QUIRE_BINARY, 'attach', socket }
  quire.config.user = 'nora'
  quire.config.log = vim.env.QUIRE_TEST_LOG
end

function H.wait_for(condition, what, timeout)
  local ok = vim.wait(timeout or 10000, condition, 10)
  H.check(ok, 'timed out waiting for ' .. what .. '; buffer: ' .. vim.inspect(vim.api.nvim_buf_get_lines(0, 0, -1, false)))
  return ok
end

-- `command`: how to reach the daemon (default: `quire attach path`).
function H.editor(path, name, command)
  local self = { replies = {}, id = 0, partial = '', edits = {} }
  self.job = vim.fn.jobstart(command or { vim.env.QUIRE_BINARY, 'attach', path }, { on_stdout = function(_, data)
    data[1] = self.partial .. data[1]
    self.partial = table.remove(data)
    for _, line in ipairs(data) do
      local ok, message = pcall(vim.fn.json_decode, line)
      if ok and type(message) == 'table' and message.id and not message.method then self.replies[message.id] = message end
      if ok and type(message) == 'table' and message.method == 'document/edit' then   -- its revision
        self.edits[message.params.uri] = (self.edits[message.params.uri] or 0) + 1
      end
    end
  end })
  function self.request(method, params)
    self.id = self.id + 1
    local id = self.id
    vim.fn.chansend(self.job, vim.fn.json_encode({ jsonrpc = '2.0', id = id, method = method, params = params or vim.empty_dict() }) .. '\n')
    vim.wait(10000, function() return self.replies[id] ~= nil end, 5)
    return self.replies[id] or {}
  end
  function self.ask(method, params)
    return self.request(method, params).result
  end
  function self.tell(method, params)
    vim.fn.chansend(self.job, vim.fn.json_encode({ jsonrpc = '2.0', method = method, params = params }) .. '\n')
  end
  self.ask('initialize', { user = { name = name, color = '#123456' }, capabilities = { general = { positionEncodings = { 'utf-8' } } } })
  return self
end

-- The current buffer's text as the daemon holds it (lines, and the final newline 'eol' stands for).
function H.buffer_text(buf)
  buf = buf or 0
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n') .. (vim.api.nvim_buf_get_option(buf, 'eol') and '\n' or '')
end

-- Keys as if typed (`flags` 't': each command is its own undo step).
function H.keys(keys, flags)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, true, true), 'x' .. (flags or ''), false)
end

-- How many times `token` occurs in `text` (plainly, not as a pattern).
function H.count(text, token)
  local n, at = 0, 1
  while text do
    local found = text:find(token, at, true)
    if not found then break end
    n, at = n + 1, found + #token
  end
  return n
end

-- Every message shown through vim.notify, from now on.
-- After a command while a partner typed: every token of `tokens` that was in `lines`, every
-- token the partner typed (`typed`: {line, column, text}) and every token of `counts` is in
-- `text` once (or `counts[token]` times), and `text` matches each pattern of `expected`.
function H.expect_tokens(name, text, tokens, lines, typed, counts, expected)
  local wanted = {}
  for _, token in ipairs(tokens) do if table.concat(lines, '\n'):find(token, 1, true) then wanted[token] = true end end
  for _, t in ipairs(typed) do wanted[vim.trim(t[3])] = true end
  for token in pairs(counts) do wanted[token] = true end
  for token in pairs(wanted) do
    local want = counts[token] or 1
    H.check(H.count(text, token) == want, name .. ': ' .. token .. ' is there ' .. H.count(text, token) .. ' times, not ' .. want .. ': ' .. vim.inspect(text))
  end
  for _, pattern in ipairs(expected) do
    H.check(text:find(pattern) ~= nil, name .. ': ' .. vim.inspect(text) .. ' does not match ' .. pattern)
  end
end

H.said = {}
local notify = vim.notify
vim.notify = function(message, level) table.insert(H.said, message); notify(message, level) end
function H.told(pattern)
  for _, message in ipairs(H.said) do if message:find(pattern) then return true end end
  return false
end

function H.finish()
  local result = io.open(vim.env.QUIRE_TEST_RESULT, 'w')
  result:write(table.concat(H.errors, '\n'))
  result:close()
  vim.cmd('qall!')
end

return H
