#!/usr/bin/env bash
# Usage: STATICCHECK="go run honnef.co/go/tools/cmd/staticcheck@vX" hack/staticcheck.sh
#
# Runs staticcheck over every package of the module. staticcheck's unused check
# (U1000) does not know that a `//go:wasmexport` function is called by the
# host, so it reports every export of a guest, and whatever only they use, as
# unused. Packages with a //go:wasmexport line are therefore checked with
# U1000 off (for guests that is the main.go glue; their logic lives in pure-Go
# packages that get every check); all other packages get every check. Test
# files do not count: their //go:wasmexport lines are guest sources in strings.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

GO=${GO:-go}
read -r -a staticcheck <<<"${STATICCHECK:?set STATICCHECK to the pinned staticcheck command}"

all=$("$GO" list -e ./...)
exporting=""
dirs=$(grep -rlE --include='*.go' --exclude='*_test.go' '^//go:wasmexport[[:space:]]' . |
  grep -vE '^\./(\.|hack/)' | xargs -r -n1 dirname | LC_ALL=C sort -u)
if [ -n "$dirs" ]; then
  # shellcheck disable=SC2086 # one directory per word
  exporting=$("$GO" list -e $dirs 2>/dev/null | LC_ALL=C sort -u)
  # Directories outside ./... (testdata, nested modules) are not linted.
  exporting=$(LC_ALL=C comm -12 <(LC_ALL=C sort <<<"$all") <(echo "$exporting"))
fi
rest=$(LC_ALL=C comm -23 <(LC_ALL=C sort <<<"$all") <(echo "$exporting") | sed '/^$/d')

rc=0
if [ -n "$rest" ]; then
  echo "staticcheck: $(wc -l <<<"$rest") packages" >&2
  # shellcheck disable=SC2086
  "${staticcheck[@]}" $rest || rc=1
fi
if [ -n "$exporting" ]; then
  echo "staticcheck: $(wc -l <<<"$exporting") packages with //go:wasmexport, without U1000:" "${exporting//$'\n'/ }" >&2
  # shellcheck disable=SC2086
  "${staticcheck[@]}" -checks inherit,-U1000 $exporting || rc=1
fi
exit "$rc"
