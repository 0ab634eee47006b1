#!/usr/bin/env bash
# Usage: hack/tinygo.sh
#
# Builds TinyGo v0.42.0 from the Go module proxy against Debian's LLVM 19 into a
# cache outside the clone, and prints the path of the tinygo binary on stdout
# (TINYGOROOT is the directory two levels up). Everything else goes to stderr.
#
# Idempotent and safe to run concurrently: the cache is reused when present and
# a flock on $CACHE_ROOT/tinygo-$VERSION.lock serialises builders. The Debian
# packages TinyGo needs (and wat2wasm from wabt) are installed with apt first.
# Facts behind each step: /work/shared/notes/toolchain.md.
set -euo pipefail

TINYGO_VERSION=v0.42.0
LLVM=19
# Bump RECIPE when the generated target files change; the cache then
# regenerates them (cheap) without rebuilding the binary.
RECIPE=1
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/wasmsched"
ROOT="$CACHE_ROOT/tinygo-$TINYGO_VERSION"
BIN="$ROOT/build/tinygo"
STAMP="$ROOT/.wasmsched-recipe"
APT_PKGS=(g++ "llvm-$LLVM-dev" "libclang-$LLVM-dev" "lld-$LLVM" "clang-$LLVM"
  "libclang-rt-$LLVM-dev-wasm32" wasi-libc binaryen wabt python3)
HACK="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

log() { echo "tinygo.sh: $*" >&2; }
die() { log "error: $*"; exit 1; }

command -v go >/dev/null 2>&1 || die "go is not on PATH (Go >= 1.25 is needed to build TinyGo $TINYGO_VERSION)"
command -v flock >/dev/null 2>&1 || die "flock is not on PATH (Debian package util-linux)"

mkdir -p "$CACHE_ROOT"
exec 9>"$CACHE_ROOT/tinygo-$TINYGO_VERSION.lock"
if ! flock -n 9; then
  log "another tinygo.sh holds $CACHE_ROOT/tinygo-$TINYGO_VERSION.lock; waiting"
  flock 9
fi

"$HACK/apt.sh" "${APT_PKGS[@]}"

# write_targets writes targets/wasmsched-*.json into the TinyGo root $1: the
# stock wasm targets want wasi-libc and compiler-rt sources (git submodules,
# absent from the module zip), so use Debian's prebuilt archives instead.
write_targets() {
  python3 - "$LLVM" "$1" <<'PY'
import json, os, sys
llvm, root = sys.argv[1], sys.argv[2]
extra_ld = ["/usr/lib/wasm32-wasi/libc.a",
            f"/usr/lib/llvm-{llvm}/lib/clang/{llvm}/lib/wasi/libclang_rt.builtins-wasm32.a"]
extra_c = ["-nostdlibinc", "-isystem", "/usr/include/wasm32-wasi"]
for name in ("wasm-unknown", "wasip1"):
    with open(f"{root}/targets/{name}.json") as f:
        t = json.load(f)
    t.pop("libc", None)
    t.pop("rtlib", None)
    t["ldflags"] = t.get("ldflags", []) + extra_ld
    t["cflags"] = t.get("cflags", []) + extra_c
    out = f"{root}/targets/wasmsched-{name}.json"
    with open(out + ".tmp", "w") as f:
        json.dump(t, f, indent=2)
    os.replace(out + ".tmp", out)  # atomic: concurrent guest builds see old or new
PY
  echo "$RECIPE" >"$1/.wasmsched-recipe.tmp"
  mv "$1/.wasmsched-recipe.tmp" "$1/.wasmsched-recipe"
}

# heartbeat CMD... runs CMD and logs the elapsed time every 15 s meanwhile.
heartbeat() {
  ( n=0; while sleep 1; do n=$((n + 1)); [ $((n % 15)) -ne 0 ] || log "  ... still running (${n} s)"; done ) &
  local hb=$!
  local rc=0
  "$@" || rc=$?
  kill "$hb" 2>/dev/null || true
  wait "$hb" 2>/dev/null || true
  return "$rc"
}

if [ -x "$BIN" ] && TINYGOROOT="$ROOT" "$BIN" version >/dev/null 2>&1; then
  if [ "$(cat "$STAMP" 2>/dev/null)" != "$RECIPE" ] ||
     [ ! -f "$ROOT/targets/wasmsched-wasm-unknown.json" ] ||
     [ ! -f "$ROOT/targets/wasmsched-wasip1.json" ]; then
    log "regenerating target files in $ROOT/targets (recipe $RECIPE)"
    write_targets "$ROOT"
  fi
  echo "$BIN"
  exit 0
fi

log "building TinyGo $TINYGO_VERSION into $ROOT (one time, ~2 minutes)"
work=$(mktemp -d "$CACHE_ROOT/tinygo-build.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
export GOWORK=off GOFLAGS=-mod=mod

# `go install tinygo@version` is refused by the proxy (403 on the version list),
# so download the module zip through a throwaway module and build from a copy.
log "[1/4] downloading github.com/tinygo-org/tinygo@$TINYGO_VERSION from the module proxy"
( cd "$work" && go mod init tinygofetch >/dev/null 2>&1 &&
  go mod download -json "github.com/tinygo-org/tinygo@$TINYGO_VERSION" ) >"$work/dl.json" ||
  die "go mod download github.com/tinygo-org/tinygo@$TINYGO_VERSION failed: $(cat "$work/dl.json")"
src=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' "$work/dl.json")
[ -d "$src" ] || die "go mod download did not produce a source directory"
cp -r "$src" "$work/tinygo"
chmod -R u+w "$work/tinygo"
cd "$work/tinygo"

log "[2/4] patching the module (espflasher v0.6.0, empty src/net)"
# espflasher v0.8.1 is refused by the proxy; v0.6.0 differs in one call (ESP32 flashing only).
go mod edit -replace tinygo.org/x/espflasher=tinygo.org/x/espflasher@v0.6.0
go mod download tinygo.org/x/espflasher
sed -i 's/flasher\.EraseFlash(progressFunc)/flasher.EraseFlash()/' main.go
# The module zip lacks TinyGo's git submodules; an empty net package is enough for guests.
mkdir -p src/net

log "[3/4] go build -tags llvm$LLVM (downloads dependencies, links against LLVM $LLVM; ~1-2 minutes)"
heartbeat go build -tags "llvm$LLVM" -o build/tinygo . >&2

log "[4/4] writing wasmsched target files"
write_targets "$work/tinygo"
TINYGOROOT="$work/tinygo" ./build/tinygo version >&2
cd /
rm -rf "$ROOT"
mv "$work/tinygo" "$ROOT"
log "done: $BIN"
echo "$BIN"
