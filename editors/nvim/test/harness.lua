-- Runs one of the client's headless tests (not a test itself): editors/nvim/test/run.sh starts
-- Neovim with this file and the test's path in $QUIRE_TEST_SCRIPT. Whatever the test does,
-- Neovim quits with a result written: an error the test did not catch ends it with that error
-- in $QUIRE_TEST_RESULT, and a test still running at $QUIRE_TEST_DEADLINE seconds (default 100,
-- under the runner's 120) is stopped the same way, so the runner reports what went wrong
-- instead of "no result".
local result, script = vim.env.QUIRE_TEST_RESULT, vim.env.QUIRE_TEST_SCRIPT

local function fail(what)
  local file = io.open(result, 'a')   -- what the test had already written stays
  file:write(what .. '\n')
  file:close()
  vim.cmd('qall!')
end

vim.defer_fn(function()
  fail('the test was still running at its deadline (' .. vim.fn.fnamemodify(script, ':t') .. '); buffer: '
    .. vim.inspect(vim.api.nvim_buf_get_lines(0, 0, 8, false)))
end, 1000 * tonumber(vim.env.QUIRE_TEST_DEADLINE or '100'))
local ok, err = xpcall(dofile, debug.traceback, script)
if not ok then fail('stopped by an error: ' .. tostring(err)) end
-- A test that returned without its result goes on in Neovim's main loop (one run as a coroutine
-- on timers, so typed keys are taken): it writes its result and quits, or meets the deadline.
