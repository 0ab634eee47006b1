#!/usr/bin/env bash
# Usage: hack/guests.sh
#
# Lists the guest directories of the repository, one per line, relative to the
# repository root and sorted bytewise (the build order). A guest directory is
# one whose main.go has the marker line `//wasmsched:guest` among its first 20
# lines. hack/, bin/, build/ and hidden directories are not searched.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

find . \( -path ./hack -o -path ./bin -o -path ./build -o -name '.?*' \) -prune \
  -o -type f -name main.go -print |
  while IFS= read -r f; do
    if head -n 20 -- "$f" | grep -Eq '^//wasmsched:guest[[:space:]]*$'; then
      d=$(dirname -- "$f")
      echo "${d#./}"
    fi
  done | LC_ALL=C sort
