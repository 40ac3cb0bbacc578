-- editors/test/three.sh, Nora in Neovim on daemon C (linked only to B): opens plan.txt by name,
-- types her line once she sees the plan, and waits to see everyone's line and Vera's and Emma's
-- cursors with their names.
local quire = require('quire')
local work = vim.env.QUIRE_WORK
quire.config.command = { vim.env.QUIRE_BINARY, 'attach', vim.env.QUIRE_SOCKET }
quire.config.user = 'nora'
quire.config.log = work .. '/nora.log'

local function has(text)
  for _, line in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do
    if line == text then return true end
  end
  return false
end

vim.cmd('QuireOpen plan.txt')
-- She types at once, while Vera's line may still be on its way to the same place.
vim.wait(60000, function() return has('The plan') end, 20)
vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('Gofrom nora<Esc>', true, false, true), 'x', false)
vim.wait(60000, function()
  return has('from vera') and has('from emma')
end, 20)
vim.api.nvim_win_set_cursor(0, { 1, 0 })
quire.send_cursor(vim.api.nvim_get_current_buf())
vim.wait(60000, function()
  local seen = quire.remote_cursors(0)
  return seen.vera ~= nil and seen.emma ~= nil
end, 20)
local names = vim.tbl_keys(quire.remote_cursors(0))
local file = io.open(work .. '/nora.names', 'w'); file:write(table.concat(names, '\n')); file:close()
-- Everyone stays until all have seen the others (leaving clears one's cursor).
vim.wait(60000, function()
  return vim.fn.filereadable(work .. '/vera.names') == 1 and vim.fn.filereadable(work .. '/emma.names') == 1
end, 20)
vim.wait(1000, function() return false end, 50)
local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n') .. (vim.bo.eol and '\n' or '')
file = io.open(work .. '/nora.text', 'w'); file:write(text); file:close()
quire.stop()
vim.cmd('qall!')
