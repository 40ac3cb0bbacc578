# Sourced by the editor clients' test runners: stopping their daemons and removing their work
# folder at exit, without ever failing a run that passed. The runner sets `work` and names its
# daemons' process ids in `daemon` (and `peer`, if any), then calls `trap runner_cleanup EXIT`.

# Waits up to 5 s for a signalled child to exit (it writes its last snapshot) and reaps it; then
# kills it.
stop_within_5s() {
  local state
  for _ in $(seq 1 50); do
    state="$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null || true)"
    if [ -z "$state" ] || [ "$state" = Z ]; then wait "$1" 2>/dev/null || true; return 0; fi
    sleep 0.1
  done
  kill -9 "$1" 2>/dev/null || true
}

runner_cleanup() {
  local p
  for p in "${daemon:-}" "${peer:-}"; do if [ -n "$p" ]; then kill "$p" 2>/dev/null || true; fi; done
  for p in "${daemon:-}" "${peer:-}"; do if [ -n "$p" ]; then stop_within_5s "$p"; fi; done
  # A daemon still writing its last files would make rm -rf fail: try once more, never fail.
  rm -rf "$work" 2>/dev/null || { sleep 0.5; rm -rf "$work" 2>/dev/null || true; }
}
