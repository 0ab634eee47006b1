#!/usr/bin/env bash
# Usage: hack/imports.sh    (make lint runs it)
#
# Checks which packages of the module may import which, from `go list`:
#
#   guest      guest-sdk/... and policies/... never import host/... (they are
#              compiled into guests; the host is not there). Exempt: the
#              bridges that run guest logic in the host's process and are
#              never compiled into a guest: guest-sdk/native (the native
#              policy mode), guest-sdk/policytest (runs a table natively and
#              against the .wasm in the host runtime) and policies itself
#              (embeds the built-in modules, wires the native ones).
#   abi        abi/... imports only the standard library and abi/...: the
#              ABI is written once and builds under TinyGo.
#   plugins    a package under host/framework/plugins/<x>/ imports no
#              host/framework/plugins/<y>/ of another plugin, and none of
#              host/cycle, host/preempt, host/app, host/queue: a plugin is
#              listed in the registry (host/framework/plugins itself, which is
#              exempt), not wired by hand into its neighbours or callers;
#              plugins/helper holds what several plugins share and imports none.
#   config     config/... imports nothing under host/framework/plugins.
#   cmd        cmd/... imports of the module are host/app and packages under
#              host/app/ only (direct imports of non-test files): a main is
#              signals around a Run.
#
# The first four rules follow every dependency, direct or not (a forbidden
# package reached through another is still linked); the cmd rule looks at
# direct imports. Each violation prints the importing package, the forbidden
# import and the rule; the exit status is 1 if there is any.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

GO=${GO:-go}
mod=$("$GO" list -m)

rc=0
violation() { # importer, import, rule, why, direct|indirect
  local via=""
  [ "$5" = direct ] || via=" (through its dependencies)"
  echo "imports: ${1#"$mod"/} imports ${2#"$mod"/}$via: rule $3: $4" >&2
  rc=1
}

# scope prints the dependency rule that applies to the package (path relative
# to the module), if any: guest, abi, plugin:<x>, config.
scope() {
  case $1 in
  guest-sdk/native | guest-sdk/policytest | policies) ;;
  guest-sdk/* | policies/*) echo guest ;;
  abi | abi/*) echo abi ;;
  host/framework/plugins/*)
    local x=${1#host/framework/plugins/}
    echo "plugin:${x%%/*}"
    ;;
  config | config/*) echo config ;;
  esac
}

# forbidden prints why the rule forbids the module's package d (relative
# path), or nothing.
forbidden() {
  case $1 in
  guest)
    case $2 in host | host/*) echo "guest-side code never imports the host" ;; esac ;;
  abi)
    case $2 in abi | abi/*) ;; *) echo "abi imports only the standard library and abi/..." ;; esac ;;
  plugin:*)
    local x=${1#plugin:}
    case $2 in
    host/framework/plugins/"$x" | host/framework/plugins/"$x"/* | host/framework/plugins/helper | host/framework/plugins/helper/*) ;;
    host/framework/plugins/*) echo "a plugin imports no other plugin's package" ;;
    host/cycle | host/cycle/* | host/preempt | host/preempt/* | host/app | host/app/* | host/queue | host/queue/*)
      echo "a plugin imports none of host/cycle, host/preempt, host/app, host/queue" ;;
    esac
    ;;
  config)
    case $2 in host/framework/plugins | host/framework/plugins/*) echo "config imports nothing under host/framework/plugins" ;; esac ;;
  esac
}

# One line per package of the module: import path | direct imports | every
# dependency.
listing=$("$GO" list -e -f '{{.ImportPath}}|{{join .Imports " "}}|{{join .Deps " "}}' ./...)
declare -A depsOf=()
while IFS='|' read -r pkg _ deps; do depsOf[$pkg]=" $deps "; done <<<"$listing"

while IFS='|' read -r pkg imports deps; do
  rel=${pkg#"$mod"}
  rel=${rel#/}
  read -r -a imports <<<"$imports"
  rule=$(scope "$rel")
  if [ -n "$rule" ]; then
    read -r -a deps <<<"$deps"
    for dep in "${deps[@]}"; do
      d=${dep#"$mod"/}
      if [ "$dep" = "$d" ]; then
        # Outside the module: abi allows the standard library only (a
        # third-party package is reported where it is imported, not with
        # everything it brings).
        if [ "$rule" = abi ] && [[ ${dep%%/*} == *.* ]] && [[ " ${imports[*]} " == *" $dep "* ]]; then
          violation "$pkg" "$dep" abi "abi imports only the standard library (it builds under TinyGo)" direct
        fi
        continue
      fi
      why=$(forbidden "$rule" "$d")
      [ -n "$why" ] || continue
      if [[ " ${imports[*]} " == *" $dep "* ]]; then
        violation "$pkg" "$dep" "${rule%%:*}" "$why" direct
        continue
      fi
      # Not reported again when it comes with a direct import that is
      # reported itself: one forbidden under this rule, or one whose own
      # rule forbids dep.
      seen=false
      for imp in "${imports[@]}"; do
        [[ ${depsOf[$imp]:-} == *" $dep "* ]] || continue
        i=${imp#"$mod"/}
        if [ -n "$(forbidden "$rule" "$i")" ] || [ -n "$(forbidden "$(scope "$i")" "$d")" ]; then
          seen=true
          break
        fi
      done
      $seen || violation "$pkg" "$dep" "${rule%%:*}" "$why" indirect
    done
  fi
  case $rel in
  cmd/*)
    for imp in "${imports[@]}"; do
      d=${imp#"$mod"/}
      [ "$imp" = "$d" ] && continue
      case $d in host/app | host/app/*) ;; *) violation "$pkg" "$imp" cmd "cmd imports only host/app and packages under host/app/" direct ;; esac
    done
    ;;
  esac
done <<<"$listing"

if [ "$rc" = 0 ]; then
  echo "imports: $(wc -l <<<"$listing") packages, no forbidden import" >&2
fi
exit "$rc"
