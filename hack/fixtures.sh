#!/usr/bin/env bash
# Usage: hack/fixtures.sh
#
# Compiles every hand-written WebAssembly text fixture (*.wat under host/ and
# abi/) with wat2wasm into a .wasm with the same basename next to it. A file is
# rewritten only when its bytes change. wat2wasm comes from Debian's wabt
# package (1.0.32 in bookworm; installed when missing); its output is
# deterministic.
#
# Besides wabt's default features (SIMD, bulk memory, reference types,
# multi-value, sign extension, saturating truncation, mutable globals), the
# tail-call and threads proposals are enabled: enabling a proposal only widens
# what parses and does not change the encoding of modules that don't use it.
# Not --enable-all: wabt 1.0.32's function-references support rejects valid
# funcref code. Override with WAT2WASM_FLAGS.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

log() { echo "fixtures: $*" >&2; }

dirs=()
for d in host abi; do [ -d "$d" ] && dirs+=("$d"); done
wats=()
if [ ${#dirs[@]} -gt 0 ]; then
  list=$(find "${dirs[@]}" -type f -name '*.wat' | LC_ALL=C sort)
  [ -z "$list" ] || mapfile -t wats <<<"$list"
fi
if [ ${#wats[@]} -eq 0 ]; then
  log "no *.wat under host/ or abi/; nothing to build"
  exit 0
fi

read -r -a flags <<<"${WAT2WASM_FLAGS---enable-tail-call --enable-threads}"

command -v wat2wasm >/dev/null 2>&1 || hack/apt.sh wabt

tmp=$(mktemp -d "${TMPDIR:-/tmp}/wasmsched-fixtures.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

log "wat2wasm ${flags[*]}: ${#wats[@]} files"
changed=0
for w in "${wats[@]}"; do
  out="${w%.wat}.wasm"
  wat2wasm "${flags[@]}" "$w" -o "$tmp/out.wasm" || { log "error: wat2wasm ${flags[*]} $w failed"; exit 1; }
  if ! cmp -s "$tmp/out.wasm" "$out"; then
    cp "$tmp/out.wasm" "$out"
    log "  wrote $out ($(stat -c %s "$out") bytes)"
    changed=$((changed + 1))
  fi
done
log "$changed of ${#wats[@]} changed"
