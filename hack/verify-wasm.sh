#!/usr/bin/env bash
# Usage: hack/verify-wasm.sh
#
# Fails when the .wasm files in the work tree differ from the ones in git (the
# index, which is HEAD in a fresh clone) or when a .wasm is not tracked. Run it
# after `make policies fixtures`: committed modules must be exactly what the
# pinned toolchain builds from the committed sources.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

die() { echo "verify-wasm: error: $*" >&2; exit 1; }

command -v git >/dev/null 2>&1 || die "git is not installed; it is needed to compare the .wasm files with the commit"
git rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
  die "$(pwd) is not a git work tree (or git refuses it: $(git rev-parse 2>&1 | head -n 1)); cannot compare the .wasm files with the commit"

changed=$(git diff --name-only -- '*.wasm')
untracked=$(git ls-files --others --exclude-standard -- '*.wasm')
if [ -z "$changed" ] && [ -z "$untracked" ]; then
  echo "verify-wasm: every .wasm matches git" >&2
  exit 0
fi

{
  echo
  echo "verify-wasm: the rebuilt WebAssembly modules differ from what is committed."
  if [ -n "$changed" ]; then
    echo "Changed (rebuilt bytes differ from git):"
    git diff --stat=120 -- '*.wasm' | sed '$d; s/^/  /'
  fi
  if [ -n "$untracked" ]; then
    echo "Not in git:"
    # shellcheck disable=SC2001 # indent every line
    sed 's/^/  /' <<<"$untracked"
  fi
  echo
  echo "Run 'make policies fixtures', then commit the .wasm files with their sources."
  echo "If you did and they still differ, your toolchain is not the pinned one:"
  echo "  $(go version 2>/dev/null || echo 'go: not found')"
  echo "  $(TINYGOROOT="${XDG_CACHE_HOME:-$HOME/.cache}/wasmsched/tinygo-v0.42.0" \
      "${XDG_CACHE_HOME:-$HOME/.cache}/wasmsched/tinygo-v0.42.0/build/tinygo" version 2>/dev/null || echo 'tinygo: not built')"
  echo "  wat2wasm $(wat2wasm --version 2>/dev/null || echo 'not found')"
  echo "(pinned: TinyGo v0.42.0 with LLVM 19 from hack/tinygo.sh, wat2wasm 1.0.32 from Debian 12)"
} >&2
exit 1
