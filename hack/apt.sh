#!/usr/bin/env bash
# Usage: hack/apt.sh PACKAGE...
#
# Installs the Debian packages that are not installed yet (as root, or through
# sudo otherwise) and does nothing when all are present. Progress goes to
# stderr. Waits for a concurrent apt/dpkg run instead of failing on its lock.
set -euo pipefail

log() { echo "apt.sh: $*" >&2; }

[ $# -gt 0 ] || { log "usage: hack/apt.sh PACKAGE..."; exit 2; }

missing=()
for p in "$@"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-query >/dev/null 2>&1; then
  log "missing packages: ${missing[*]}"
  log "apt-get is not available: this build expects Debian 12 (bookworm) or a derivative."
  log "Install the packages above with your package manager (LLVM 19 for TinyGo), then re-run."
  exit 1
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    log "missing packages: ${missing[*]}"
    log "not running as root and sudo is not installed: install them as root, then re-run."
    exit 1
  fi
  sudo=(sudo)
fi

log "installing Debian packages: ${missing[*]}"
# Wait up to 10 minutes for another apt/dpkg process instead of failing.
apt_opts=(-o DPkg::Lock::Timeout=600 -qq)
"${sudo[@]}" apt-get "${apt_opts[@]}" update >&2
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get "${apt_opts[@]}" install -y --no-install-recommends "${missing[@]}" >&2
