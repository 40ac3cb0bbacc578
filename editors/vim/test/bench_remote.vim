vim9script
# Figures, not a test: the cost in Vim of a remote edit in a 10,000-line buffer, and the time
# from another editor's keystroke (sent to the daemon) to the character showing in this Vim's
# buffer. Run by `editors/vim/test/run.sh --bench`; writes its figures to QUIRE_TEST_RESULT.
runtime plugin/quire.vim

var quire = $QUIRE_BINARY
var socket = $QUIRE_TEST_SOCKET
g:quire_command = [quire, 'attach', socket]
var figures: list<string> = []

enew
setline(1, mapnew(range(10000), (i, _) => printf('line %d of a long buffer, with some text on it', i)))
QuireShare bench.txt

# Cost of applying one change, without the daemon: 1000 single characters at spread-out lines.
var start = reltime()
for i in range(1000)
  quire#ApplyChangesForTest(bufnr(), [{range: {start: {line: (i * 7919) % 10000, character: 5}, end: {line: (i * 7919) % 10000, character: 5}}, text: 'x'}])
endfor
var applyMicros = reltimefloat(reltime(start)) * 1000000.0 / 1000.0
add(figures, printf('apply one remote change in a 10,000-line buffer: %.0f µs', applyMicros))
quire#Resync(bufnr())

# Keystroke latency: the other editor types, this buffer shows it. With QUIRE_TEST_PEER_SOCKET
# the other editor is on a second daemon paired with this one over loopback TCP.
var otherSocket = $QUIRE_TEST_PEER_SOCKET != '' ? $QUIRE_TEST_PEER_SOCKET : socket
var across = otherSocket != socket ? 'across two daemons paired over loopback TCP' : 'through one daemon'
var other = job_start([quire, 'attach', otherSocket], {in_mode: 'lsp', out_mode: 'lsp', err_io: 'null', timeout: 10000})
var channel = job_getchannel(other)
ch_evalexpr(channel, {method: 'initialize', params: {capabilities: {general: {positionEncodings: ['utf-8']}}}})
var tries = 0
while tries < 500 && index(mapnew(get(ch_evalexpr(channel, {method: 'document/list', params: {}}), 'result', []), (_, d) => d.uri), 'bench.txt') < 0
  sleep 10m
  tries += 1
endwhile
ch_evalexpr(channel, {method: 'document/open', params: {uri: 'bench.txt', text: ''}})
var latencies: list<float> = []
for i in range(300)
  var lnum = (i * 131) % 10000
  var before = getline(lnum + 1)
  var sent = reltime()
  ch_sendexpr(channel, {method: 'document/edit', params: {uri: 'bench.txt', revision: 0,
    changes: [{range: {start: {line: lnum, character: 0}, end: {line: lnum, character: 0}}, text: 'k'}]}})
  var waited = 0
  while getline(lnum + 1) == before && waited < 5000
    sleep 1m
    waited += 1
  endwhile
  add(latencies, reltimefloat(reltime(sent)) * 1000.0)
endfor
sort(latencies, 'f')
add(figures, printf('keystroke in another editor to this 10,000-line buffer, %s: p50 %.2f ms, p99 %.2f ms, worst %.2f ms over %d',
  across, latencies[len(latencies) / 2], latencies[len(latencies) * 99 / 100], latencies[-1], len(latencies)))
quire#Stop()
job_stop(other)
writefile(figures, $QUIRE_TEST_RESULT)
qall!
