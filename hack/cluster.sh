#!/usr/bin/env bash
# Usage: hack/cluster.sh build [COMPONENT...]   build what is missing, print the bin dir
#        hack/cluster.sh bindir                  print the bin dir (no build)
#
# Builds the test control plane from the Go module proxy into a versioned cache
# outside the clone: kube-apiserver, kube-scheduler and kube-controller-manager
# v1.37.1, kubectl, etcd v3.6.16 and KWOK v0.8.0. COMPONENT is one of
# kube-apiserver, kube-scheduler, kube-controller-manager, kubectl, etcd, kwok;
# none means kube-apiserver, etcd and kwok (what every e2e test and the demo
# need). Binaries already in the cache are not rebuilt.
#
# A cold build is long (see typical() below), so before building it checks
# that the disks and memory suffice, and while a step runs it prints a progress
# line every 30 s (hack/buildwatch).
#
# k8s.io/kubernetes and etcd cannot be `go install`ed (their go.mod files
# replace staging modules with local paths), so each is built from a small
# wrapper module written here that requires the published versions instead.
# Facts behind each step: /work/shared/notes/cluster.md.
#
# Progress goes to stderr, the bin dir to stdout. A flock serialises builders.
set -euo pipefail

K8S_VERSION=v1.37.1
STAGING_VERSION=v0.37.1
ETCD_VERSION=v3.6.16
KWOK_VERSION=v0.8.0
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/wasmsched"
ROOT="$CACHE_ROOT/cluster-k8s$K8S_VERSION-etcd$ETCD_VERSION-kwok$KWOK_VERSION"
BIN="$ROOT/bin"
GO=${GO:-go}

HACK=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

log() { echo "cluster.sh: $*" >&2; }
die() { log "error: $*"; exit 1; }

usage() { sed -n '2,4p' "${BASH_SOURCE[0]}" | sed 's/^# //' >&2; exit 2; }

# typical COMPONENT: how long its cold build takes on a 2-core machine,
# measured with this script's own progress lines from empty Go caches, in the
# order `make cluster` builds them (kube-scheduler, kube-controller-manager
# and kubectl after kube-apiserver, whose packages they mostly share).
typical() {
  case "$1" in
  modules) echo "under 1 min" ;;
  kube-apiserver) echo "6-9 min" ;;
  kube-scheduler) echo "1-5 min" ;;
  kube-controller-manager) echo "2-5 min" ;; # 2m0s after kube-apiserver and kube-scheduler
  kubectl) echo "2-3 min" ;;
  etcd) echo "1-2 min" ;;
  etcd-modules) echo "under 1 min" ;;
  kwok) echo "2-3 min" ;;
  esac
}

# watch WHAT COMPONENT CMD...: runs CMD with a progress line every 30 s that
# names what comes after it (NEXT, set by the build loop).
watch() {
  local what=$1 component=$2
  shift 2
  "$WATCH" run -what "$what" -typical "$(typical "$component")" -next "${NEXT:-}" -- "$@"
}

# k8s_tools_go: the wrapper module's tools.go, importing every component
# built from it, so that one `go mod tidy` resolves the modules of all.
k8s_tools_go() {
  cat <<'EOF'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
EOF
}

build_k8s() { # $1 = component under k8s.io/kubernetes/cmd
  local src="$ROOT/src/kubernetes"
  if [ -f "$src/go.sum" ] && ! grep -q "\"k8s.io/kubernetes/cmd/$1\"" "$src/tools.go"; then
    # A wrapper written before $1 was added here: import it too and tidy
    # again. go.mod gains the modules of $1 at the versions k8s.io/kubernetes
    # pins, the others stay; binaries already built are not rebuilt for it.
    log "adding $1 to the k8s.io/kubernetes $K8S_VERSION wrapper module"
    k8s_tools_go >"$src/tools.go"
    (cd "$src" && NEXT="$1${NEXT:+, $NEXT}" watch "the Go modules of $1 $K8S_VERSION (downloading)" modules "$GO" mod tidy -e) || {
      rm -f "$src/go.sum"
      die "go mod tidy failed in $src"
    }
  fi
  if [ ! -f "$src/go.sum" ]; then
    log "writing the k8s.io/kubernetes $K8S_VERSION wrapper module"
    rm -rf "$src" && mkdir -p "$src"
    local gomod
    gomod=$(cd "$ROOT" && GOFLAGS=-mod=mod "$GO" mod download -json "k8s.io/kubernetes@$K8S_VERSION" |
      sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')
    [ -f "$gomod" ] || die "could not download k8s.io/kubernetes@$K8S_VERSION from the Go module proxy"
    {
      echo "module wasmsched.local/cluster-kubernetes"
      echo
      echo "go 1.26.0"
      echo
      echo "require k8s.io/kubernetes $K8S_VERSION"
      echo
      # Every staging module k8s.io/kubernetes replaces with ./staging/... is
      # published at the matching v0.x version.
      sed -n 's|^[[:space:]]*\(k8s.io/[A-Za-z0-9._/-]*\) => ./staging/.*$|replace \1 => \1 '"$STAGING_VERSION"'|p' "$gomod"
    } >"$src/go.mod"
    k8s_tools_go >"$src/tools.go"
    (cd "$src" && NEXT="$1${NEXT:+, $NEXT}" watch "the Go modules of k8s.io/kubernetes $K8S_VERSION (downloading)" modules "$GO" mod tidy -e) ||
      die "go mod tidy failed in $src"
  fi
  local ld="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION"
  ld+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37"
  ld+=" -X k8s.io/component-base/version.gitTreeState=clean"
  if ! (cd "$src" && CGO_ENABLED=0 watch "$1 $K8S_VERSION" "$1" "$GO" build -tags tools -trimpath -ldflags "$ld" -o "$BIN/$1.tmp" "k8s.io/kubernetes/cmd/$1"); then
    rm -f "$src/go.sum" "$BIN/$1.tmp" # `go mod tidy -e` may have left it incomplete: redo the wrapper next time
    die "building $1 failed"
  fi
  mv "$BIN/$1.tmp" "$BIN/$1"
}

build_etcd() {
  local src="$ROOT/src/etcd"
  if [ ! -f "$src/go.sum" ]; then
    log "writing the etcd $ETCD_VERSION wrapper module"
    rm -rf "$src" && mkdir -p "$src"
    cat >"$src/go.mod" <<EOF
module wasmsched.local/cluster-etcd

go 1.26.0

require (
	go.etcd.io/etcd/api/v3 $ETCD_VERSION
	go.etcd.io/etcd/client/pkg/v3 $ETCD_VERSION
	go.etcd.io/etcd/client/v3 $ETCD_VERSION
	go.etcd.io/etcd/pkg/v3 $ETCD_VERSION
	go.etcd.io/etcd/server/v3 $ETCD_VERSION
)
EOF
    cat >"$src/tools.go" <<'EOF'
//go:build tools

package tools

import _ "go.etcd.io/etcd/server/v3"
EOF
    (cd "$src" && NEXT="etcd${NEXT:+, $NEXT}" watch "the Go modules of etcd $ETCD_VERSION (downloading)" etcd-modules "$GO" mod tidy -e) ||
      die "go mod tidy failed in $src"
  fi
  if ! (cd "$src" && CGO_ENABLED=0 watch "etcd $ETCD_VERSION" etcd "$GO" build -tags tools -trimpath -ldflags "-s -w" -o "$BIN/etcd.tmp" go.etcd.io/etcd/server/v3); then
    rm -f "$src/go.sum" "$BIN/etcd.tmp"
    die "building etcd failed"
  fi
  mv "$BIN/etcd.tmp" "$BIN/etcd"
}

build_kwok() {
  # Outside any module: the caller's working directory may be a module whose
  # go.mod must not be consulted or touched.
  (cd "$ROOT" && GOBIN="$BIN/.kwok" CGO_ENABLED=0 watch "kwok $KWOK_VERSION" kwok "$GO" install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION") ||
    die "building kwok failed"
  mv "$BIN/.kwok/kwok" "$BIN/kwok"
  rmdir "$BIN/.kwok"
  # Standalone kwok needs Stage objects in its --config to move nodes and
  # pods along. These are the stages kwokctl configures by default
  # (pkg/kwokctl/runtime/cluster.go: node-initialize, pod-ready, pod-complete,
  # pod-delete), taken from the module, minus the node heartbeat: no node
  # lifecycle controller runs here to miss it, and it would update every Node
  # every 20 s, which a scheduler under test sees as Node events.
  local mod
  mod=$(cd "$ROOT" && GOFLAGS=-mod=mod "$GO" mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')
  local out="$BIN/kwok-stages.yaml.tmp"
  echo "# KWOK $KWOK_VERSION stages, written by hack/cluster.sh from sigs.k8s.io/kwok/kustomize/stage" >"$out"
  local f
  for f in node/fast/node-initialize.yaml pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
    [ -f "$mod/kustomize/stage/$f" ] || die "sigs.k8s.io/kwok@$KWOK_VERSION has no kustomize/stage/$f"
    echo "---" >>"$out"
    cat "$mod/kustomize/stage/$f" >>"$out"
  done
  mv "$out" "$BIN/kwok-stages.yaml"
}

cmd=${1:-}
[ -n "$cmd" ] || usage
shift
case "$cmd" in
bindir)
  echo "$BIN"
  exit 0
  ;;
build) ;;
*) usage ;;
esac

components=("$@")
[ ${#components[@]} -gt 0 ] || components=(kube-apiserver etcd kwok)
have() { # $1 = component: its binary (and kwok's stages) is in place
  case "$1" in
  kwok) [ -x "$BIN/kwok" ] && [ -f "$BIN/kwok-stages.yaml" ] ;;
  *) [ -x "$BIN/$1" ] ;;
  esac
}
for c in "${components[@]}"; do
  case "$c" in
  kube-apiserver | kube-scheduler | kube-controller-manager | kubectl | etcd | kwok) ;;
  *) die "unknown component $c (want kube-apiserver, kube-scheduler, kube-controller-manager, kubectl, etcd or kwok)" ;;
  esac
done
# Fast path without the lock: binaries are moved into place only when
# complete, so present means usable, even while another build runs.
missing=()
for c in "${components[@]}"; do have "$c" || missing+=("$c"); done
if [ ${#missing[@]} -eq 0 ]; then
  echo "$BIN"
  exit 0
fi
command -v "$GO" >/dev/null 2>&1 || die "go is not on PATH"
command -v flock >/dev/null 2>&1 || die "flock is not on PATH (Debian package util-linux)"
mkdir -p "$BIN"
exec 9>"$ROOT.lock"
if ! flock -n 9; then
  log "another cluster.sh holds $ROOT.lock; waiting"
  flock 9
fi

todo=()
for c in "${missing[@]}"; do have "$c" || todo+=("$c"); done # others may have built some meanwhile
if [ ${#todo[@]} -eq 0 ]; then
  echo "$BIN"
  exit 0
fi

start=$SECONDS
WATCH="$ROOT/buildwatch"
(cd "$HACK/.." && CGO_ENABLED=0 "$GO" build -o "$WATCH" ./hack/buildwatch) || die "building hack/buildwatch failed"
# The disk estimate is what a cold build of everything left in the caches
# (Go modules, Go build cache, binaries) on this kind of machine, plus a margin.
disk=3GiB
for c in "${todo[@]}"; do case "$c" in kube-*) disk=9GiB ;; esac; done
"$WATCH" check -disk "$disk" -mem 2GiB "$CACHE_ROOT" "$("$GO" env GOCACHE)" "$("$GO" env GOMODCACHE)" ||
  die "not building ${todo[*]}"
log "building ${todo[*]} from the Go module proxy into $BIN; a cold build takes a while on 2 cores (progress every 30 s)"
for i in "${!todo[@]}"; do
  c=${todo[$i]}
  rest=("${todo[@]:$((i + 1))}")
  NEXT=$(IFS=,; echo "${rest[*]}" | sed 's/,/, /g')
  case "$c" in
  kube-apiserver | kube-scheduler | kube-controller-manager | kubectl) build_k8s "$c" ;;
  etcd) build_etcd ;;
  kwok) build_kwok ;;
  esac
done
elapsed=$((SECONDS - start))
log "done: ${todo[*]} built in $((elapsed / 60))m$((elapsed % 60))s, cached in $BIN; later runs reuse them and start in seconds"
echo "$BIN"
