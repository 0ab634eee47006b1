#!/usr/bin/env bash
# Usage: hack/gotest.sh [go test flags...]
#
# Runs `go test -count=1` over every package of the module: the packages under
# $RACE_PKGS (default ./host/..., the concurrent ones) with -race, the others
# without it; then every package of each nested module in $NESTED_MODULES
# (directories with their own go.mod). Extra arguments are passed to every
# run. Patterns that match no package are fine.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

GO=${GO:-go}
# The e2e package runs every scenario against upstream kube-scheduler too
# (with kube-controller-manager where controllers matter): beyond go test's
# default 10 minutes on 2 cores.
timeout=${TEST_TIMEOUT:-30m}
race_pattern=${RACE_PKGS:-./host/...}

all=$("$GO" list -e ./...)
# shellcheck disable=SC2086 # RACE_PKGS may hold several patterns
race=$("$GO" list -e $race_pattern 2>/dev/null || true)
# Keep only real packages of ./... (-e lists a pattern that matched nothing).
race=$(LC_ALL=C comm -12 <(LC_ALL=C sort <<<"$all") <(LC_ALL=C sort <<<"$race") | sed '/^$/d')
plain=$(LC_ALL=C comm -23 <(LC_ALL=C sort <<<"$all") <(LC_ALL=C sort <<<"$race") | sed '/^$/d')

if [ -n "$plain" ]; then
  echo "gotest: go test -count=1 ($(wc -l <<<"$plain") packages)" >&2
  # shellcheck disable=SC2086 # one package per word
  "$GO" test -count=1 -timeout "$timeout" "$@" $plain
fi
if [ -n "$race" ]; then
  echo "gotest: go test -count=1 -race $race_pattern ($(wc -l <<<"$race") packages)" >&2
  # shellcheck disable=SC2086
  CGO_ENABLED=1 "$GO" test -count=1 -timeout "$timeout" -race "$@" $race
fi
# The queue's memory regression tests run their full length (10,000 scale
# cycles) only without the race detector, which would make them take minutes;
# under -race above they run a tenth of it.
if grep -q 'github.com/wasmsched/wasmsched/host/queue$' <<<"$race"; then
  echo "gotest: go test -count=1 -run 'TestScaleCycles|TestGangCycles' ./host/queue (full length, without -race)" >&2
  "$GO" test -count=1 -run 'TestScaleCycles|TestGangCycles' "$@" ./host/queue
fi
if [ -z "$plain$race" ]; then
  echo "gotest: no packages to test" >&2
fi
# Nested modules (NESTED_MODULES, e.g. hack/image: make image's builder and
# its test, which builds the image twice) are outside ./... of the main module.
for m in ${NESTED_MODULES:-}; do
  echo "gotest: go test -count=1 ./... in $m (nested module)" >&2
  "$GO" -C "$m" test -count=1 -timeout "$timeout" "$@" ./...
done
