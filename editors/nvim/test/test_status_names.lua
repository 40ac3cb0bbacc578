-- Names and the status line (run by editors/nvim/test/run.sh): with no name configured the client
-- sends none and takes the one the daemon gives (git's user.name, else $USER, else the login),
-- which others see; :QuireStatus words the daemon's summary (who is where, links up, in sync).
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/helpers.lua')
local quire = require('quire')
local check, wait_for = H.check, H.wait_for
local socket = vim.env.QUIRE_TEST_SOCKET

H.attach(quire, socket)
quire.config.user = nil   -- nothing configured: the daemon names this person

local function run()
  vim.cmd('enew')
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'named <N1>' })
  vim.cmd('QuireShare names.txt')
  local name = quire.user_name()
  check(name ~= '' and name ~= 'nvim', 'the name the daemon gave: ' .. vim.inspect(name))
  local otto = H.editor(socket, 'otto')
  otto.ask('document/open', { uri = 'names.txt', text = '' })
  -- Otto's daemon names this person as the reply did, in the document they are in.
  local status = otto.ask('quire/status', vim.empty_dict()) or {}
  local people = (status.summary or {}).people or {}
  local found = false
  for _, person in ipairs(people) do
    if person.name == name and vim.deep_equal(person.documents, { 'names.txt' }) then found = true end
  end
  check(found, 'otto does not see ' .. name .. ' in names.txt: ' .. vim.inspect(people))
  -- :QuireStatus words the summary: otto is here, no peer links.
  local line = quire.status() or ''
  check(line:find('no peer links; with otto (names.txt); documents ', 1, true) ~= nil, 'QuireStatus said ' .. line)
  -- Only wording: every count comes from the daemon's summary.
  check(quire.status_summary({ storage = vim.NIL, summary = { editors = 3, documents = 2, links = 2, linksUp = 1, notYetSent = 0,
      removedKept = 7, people = { { name = 'otto', documents = { 'a', 'b' } } } },
      peers = { fingerprint = 'aaaa', links = { { link = 1, user = 'bob', address = 'x', state = 'established', encrypted = true, fingerprint = 'k' } } } })
    == 'quire: 3 editor(s), 2 document(s), 1 of 2 peer link(s) up, in sync, 7 removed character(s) kept for peers; with otto (a, b); documents in memory only; your key aaaa; bob established, encrypted, key k',
    'status summary wording')
  check(quire.status_summary({ storage = vim.NIL, summary = { editors = 1, documents = 0, links = 1, linksUp = 1, notYetSent = 12,
      removedKept = 0, people = {} }, peers = { fingerprint = 'aaaa', links = {} } })
    == 'quire: 1 editor(s), 0 document(s), 1 of 1 peer link(s) up, 12 character(s) not yet with peers; documents in memory only; your key aaaa',
    'status summary wording while behind')
  vim.fn.jobstop(otto.job)
  quire.stop()
end

local ok, failure = pcall(run)
check(ok, 'the test stopped: ' .. tostring(failure))
H.finish()
