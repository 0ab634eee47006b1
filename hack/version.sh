#!/usr/bin/env bash
# Usage: hack/version.sh version|commit|epoch
#
# The build's identity, from git, for everything that stamps it: the ldflags of
# bin/wasmsched (Makefile), the image's labels and timestamps (make image,
# hack/image) and the image test. One script, so that `wasmsched version` and
# the image's labels cannot disagree.
#
#   version  the Go module version go build would stamp from git: the tag
#            vX.Y.Z on HEAD, else a pseudo-version vX.Y.(Z+1)-0.TIME-HASH after
#            the newest tag or v0.0.0-TIME-HASH without one (TIME is the commit
#            time in UTC, HASH 12 hex digits of the commit); "+dirty" when the
#            tracked files differ from HEAD
#   commit   the full commit hash of HEAD
#   epoch    SOURCE_DATE_EPOCH if set, else the commit time in Unix seconds:
#            the time stamped in the image, so that a rebuild of a commit is
#            identical
#
# go build does not stamp these itself here: it skips git in a worktree (.git
# is a file there) and under GOFLAGS=-buildvcs=false.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

die() { echo "version.sh: $*" >&2; exit 1; }
command -v git >/dev/null 2>&1 || die "git is not installed (the version comes from the repository's history)"
git rev-parse --verify -q HEAD >/dev/null || die "$(pwd) is not a git checkout with a commit"

case "${1:-}" in
commit)
  git rev-parse HEAD
  ;;
epoch)
  if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
    [[ "$SOURCE_DATE_EPOCH" =~ ^[0-9]+$ ]] || die "SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH is not a number of seconds"
    echo "$SOURCE_DATE_EPOCH"
  else
    git log -1 --format=%ct HEAD
  fi
  ;;
version)
  dirty=""
  git diff --quiet HEAD -- 2>/dev/null || dirty="+dirty"
  if tag=$(git describe --tags --exact-match --match 'v[0-9]*' HEAD 2>/dev/null); then
    echo "$tag$dirty"
    exit 0
  fi
  stamp=$(TZ=UTC git log -1 --date=format-local:%Y%m%d%H%M%S --format=%cd HEAD)
  hash=$(git rev-parse --short=12 HEAD)
  if last=$(git describe --tags --abbrev=0 --match 'v[0-9]*' HEAD 2>/dev/null) &&
    [[ "$last" =~ ^v([0-9]+)\.([0-9]+)\.([0-9]+)$ ]]; then
    echo "v${BASH_REMATCH[1]}.${BASH_REMATCH[2]}.$((BASH_REMATCH[3] + 1))-0.$stamp-$hash$dirty"
  else
    echo "v0.0.0-$stamp-$hash$dirty"
  fi
  ;;
*)
  die "usage: hack/version.sh version|commit|epoch"
  ;;
esac
