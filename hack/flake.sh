#!/usr/bin/env bash
# Usage: [FLAKE_COUNT=20] [FLAKE_LOAD=2] [FLAKE_PKGS="./host/wasm/... ./host/policy/... ./host/queue"]
#        [FLAKE_RUN=regexp] [FLAKE_TIMEOUT=3h] hack/flake.sh [go test flags...]
#
# Looks for flaky tests: runs `go test -race -count=$FLAKE_COUNT` over the
# timing-sensitive packages ($FLAKE_PKGS: the Wasm runtime and its watchdog,
# the policy adapters, the queue) while $FLAKE_LOAD busy loops compete for the
# CPUs, as on a loaded CI machine, then prints per package ok or FAIL and the
# failing tests with how many of the runs each failed. FLAKE_RUN is passed as
# -run; extra arguments go to go test. The whole output is kept in
# build/flake.log. Exits non-zero if any test failed.
#
# A test that passes here is not proven free of timing assumptions, but one
# that fails here has one. The busy loops are stopped on exit, by PID.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

GO=${GO:-go}
count=${FLAKE_COUNT:-20}
load=${FLAKE_LOAD:-2}
pkgs=${FLAKE_PKGS:-./host/wasm/... ./host/policy/... ./host/queue}
timeout=${FLAKE_TIMEOUT:-3h}
log=build/flake.log

log() { echo "flake: $*" >&2; }
die() { echo "flake: error: $*" >&2; exit 2; }

[[ $count =~ ^[1-9][0-9]*$ ]] || die "FLAKE_COUNT=$count: set a positive number of runs"
[[ $load =~ ^[0-9]+$ ]] || die "FLAKE_LOAD=$load: set a number of busy loops (0 for none)"

busy=()
stop_load() {
  local pid
  for pid in ${busy[@]+"${busy[@]}"}; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in ${busy[@]+"${busy[@]}"}; do
    wait "$pid" 2>/dev/null || true
  done
  busy=()
}
trap stop_load EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

args=(-race -count="$count" -timeout="$timeout")
[ -z "${FLAKE_RUN:-}" ] || args+=(-run "$FLAKE_RUN")
args+=("$@")

mkdir -p build
# Build the test binaries first, without the load, so that the runs compete
# with the busy loops and not a cold compile with them.
log "building the tests of $pkgs with -race"
# shellcheck disable=SC2086 # FLAKE_PKGS may hold several patterns
CGO_ENABLED=1 "$GO" test -race -count=1 -run '^$' $pkgs >/dev/null

for ((i = 0; i < load; i++)); do
  (while :; do :; done) &
  busy+=("$!")
done
log "$load busy loop(s) on $(nproc) CPU(s): PIDs ${busy[*]:-none}"
log "go test ${args[*]} $pkgs (output in $log)"
start=$SECONDS
status=0
# shellcheck disable=SC2086
CGO_ENABLED=1 "$GO" test "${args[@]}" $pkgs >"$log" 2>&1 || status=$?
stop_load
elapsed=$((SECONDS - start))

echo
echo "flake: $count run(s) of each test under -race beside $load busy loop(s), in $((elapsed / 60))m$((elapsed % 60))s:"
# Package lines: "ok  	pkg	12.3s", "FAIL	pkg	4.5s", "FAIL	pkg [build failed]"
# (a lone "FAIL" line ends a failed package's output; "?" ones have no tests).
grep -E '^(ok|FAIL)[[:space:]]+[^[:space:]]' "$log" | awk '{ printf "  %-4s %s\n", $1, $2 }' || true
fails=$(grep -E -- '--- FAIL: ' "$log" | sed -E 's/^[[:space:]]*--- FAIL: ([^ ]+).*/\1/' | LC_ALL=C sort | uniq -c || true)
if [ -n "$fails" ]; then
  echo "flake: failing tests (subtests listed with their parents):"
  awk -v n="$count" '{ printf "  %s: failed %d of %d runs\n", $2, $1, n }' <<<"$fails"
fi
if [ "$status" -ne 0 ]; then
  [ -n "$fails" ] || echo "flake: go test failed without a failing test (build error, panic or timeout?): see $log"
  echo "flake: FAIL (go test exit status $status); full output in $log"
  exit 1
fi
echo "flake: ok, no failures; full output in $log"
