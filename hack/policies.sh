#!/usr/bin/env bash
# Usage: hack/policies.sh [GUEST_DIR...]
#
# Builds every guest directory listed by hack/guests.sh (or only the ones
# given) with TinyGo into <dir>/<dirname>.wasm. A file is rewritten only when
# its bytes change, so unchanged modules keep their mtime. TinyGo comes from
# hack/tinygo.sh (built once, cached outside the clone) unless $TINYGO names a
# tinygo binary inside its TINYGOROOT (<root>/build/tinygo).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

log() { echo "policies: $*" >&2; }

if [ $# -gt 0 ]; then
  guests=("${@%/}")
else
  guests=()
  list=$(hack/guests.sh)
  [ -z "$list" ] || mapfile -t guests <<<"$list"
fi
if [ ${#guests[@]} -eq 0 ]; then
  log "no guest directories (a main.go with the line //wasmsched:guest); nothing to build"
  exit 0
fi

tinygo=${TINYGO:-$(hack/tinygo.sh)}
root=$(dirname "$(dirname "$tinygo")")
target="$root/targets/wasmsched-wasm-unknown.json"
[ -f "$target" ] || { log "error: $target is missing; run hack/tinygo.sh"; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/wasmsched-policies.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

for d in "${guests[@]}"; do
  [ -f "$d/main.go" ] || { log "error: $d/main.go does not exist"; exit 1; }
  name=$(basename "$d")
  out="$d/$name.wasm"
  log "tinygo build ./$d -> $out"
  TINYGOROOT="$root" "$tinygo" build -target="$target" -buildmode=c-shared \
    -no-debug -scheduler=none -gc=leaking -opt=2 -o "$tmp/$name.wasm" "./$d"
  if cmp -s "$tmp/$name.wasm" "$out"; then
    log "  unchanged ($(stat -c %s "$out") bytes)"
  else
    cp "$tmp/$name.wasm" "$out"
    log "  wrote $(stat -c %s "$out") bytes"
  fi
done
