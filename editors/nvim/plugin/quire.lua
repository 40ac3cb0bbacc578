-- Quire: collaborative editing through the quire daemon (Neovim 0.7 or later). See editors/nvim/README.md.
if vim.g.loaded_quire then return end
vim.g.loaded_quire = true

local function quire() return require('quire') end
local function names(lead)
  return vim.tbl_filter(function(name) return name:sub(1, #lead) == lead end, quire().document_names())
end
local command = vim.api.nvim_create_user_command

command('QuireShare', function(o) quire().share(o.args) end, { nargs = '?' })
command('QuireOpen', function(o) quire().open(o.args) end, { nargs = 1, complete = names })
command('QuireListen', function(o) quire().listen(o.args) end, { nargs = '?' })
command('QuireConnect', function(o) quire().connect(o.args) end, { nargs = '+' })
command('QuireConnectCommand', function(o) quire().connect_command(o.args) end, { nargs = 1 })
command('QuireConnectRelay', function(o) quire().connect_relay(o.args) end, { nargs = '+' })
command('QuireDisconnect', function(o) quire().disconnect(o.args) end, { nargs = '?' })
command('QuireMerge', function(o) quire().merge(o.args) end, { nargs = 1, complete = names })
command('QuireSave', function() quire().save() end, {})
command('QuireStatus', function() quire().status() end, {})
command('QuireResync', function() quire().resync() end, {})
command('QuireStop', function() quire().stop() end, {})

local function people(lead)
  return vim.tbl_filter(function(name) return name:sub(1, #lead) == lead end, quire().people_names())
end
command('QuireWho', function() quire().who() end, {})
command('QuireJump', function(o) quire().jump(o.args) end, { nargs = '?', complete = people })
command('QuireFollow', function(o) quire().follow(o.args) end, { nargs = '?', complete = people })
command('QuireUnfollow', function() quire().unfollow() end, {})

-- Opening a file of a shared or joined project joins its document (when a daemon runs).
vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
  group = vim.api.nvim_create_augroup('quire_open', { clear = true }),
  callback = function(event) quire().opened(event.buf) end,
})
