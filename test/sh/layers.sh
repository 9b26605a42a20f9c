#!/bin/sh
# Layering: a source file includes headers of its own directory or of a
# layer below, never above (docs/architecture.md, "Layers"):
#
#   util < cel < metrics, api < codec < config < framework < backend
#        < plugins < scheduler < sim, kube < server < cmd
#
# Internal headers (*internal*.h) are included only from their own folder.
# Directories on the same level (metrics and api, sim and kube) do not
# include each other. Two exceptions, listed below: CEL's quantity
# functions parse quantities with api/quantity.h, which includes nothing,
# and its format library checks names with api/validation.h, which
# includes only util. Prints "ok NAME" / "FAIL NAME" lines.
#   test/sh/layers.sh [ROOT]   check ROOT/src (default: this repository),
#                              then that an upward include is caught
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -gt 0 ] && root=$1

rank() {
    case "$1" in
    util) echo 0 ;;
    cel) echo 1 ;;
    metrics | api) echo 2 ;;
    codec) echo 3 ;;
    config) echo 4 ;;
    framework) echo 5 ;;
    backend) echo 6 ;;
    plugins) echo 7 ;;
    scheduler) echo 8 ;;
    sim | kube) echo 9 ;;
    server) echo 10 ;;
    cmd) echo 11 ;;
    *) echo "" ;;
    esac
}

# Prints one line per violation: "file: includes dir/header".
violations() { # $1 = root
    (cd "$1" && find src -name '*.[ch]' | sort) | while read -r f; do
        dir=${f#src/}
        dir=${dir%%/*}
        r=$(rank "$dir")
        if [ -z "$r" ]; then
            echo "$f: directory src/$dir has no layer (add it to test/sh/layers.sh and docs/architecture.md)"
            continue
        fi
        sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([a-z_]*\)\/\([^"]*\)".*/\1 \2/p' "$1/$f" |
            while read -r inc hdr; do
                [ "$inc" = "$dir" ] && continue
                [ "$dir/$inc/$hdr" = "cel/api/quantity.h" ] && continue
                [ "$dir/$inc/$hdr" = "cel/api/validation.h" ] && continue
                ri=$(rank "$inc")
                if [ -z "$ri" ] || [ "$ri" -ge "$r" ]; then
                    echo "$f: includes $inc/$hdr"
                fi
            done
    done
}

# Internal headers (*internal*.h) are their folder's own: a source file of
# another folder that includes one reaches into that folder's insides
# (what another folder needs goes into the folder's public header, as
# kt_utf8_clean went into codec/tree.h for config's YAML writer).
internal_violations() { # $1 = root
    (cd "$1" && find src -name '*.[ch]' | sort) | while read -r f; do
        dir=${f#src/}
        dir=${dir%%/*}
        sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([a-z_]*\)\/\([^"]*internal[^"]*\.h\)".*/\1 \2/p' "$1/$f" |
            while read -r inc hdr; do
                [ "$inc" = "$dir" ] && continue
                echo "$f: includes $inc/$hdr"
            done
    done
}

status=0
out=$(internal_violations "$root")
if [ -z "$out" ]; then
    echo "ok   layers: no internal header is included from another folder"
else
    echo "FAIL layers: internal headers included from another folder:"
    echo "$out" | sed 's/^/     /'
    status=1
fi
tmp=$(mktemp -d)
mkdir -p "$tmp/src/sim"
printf '#include "scheduler/scheduler_internal.h"\n' >"$tmp/src/sim/a.c"
got=$(internal_violations "$tmp")
rm -rf "$tmp"
if [ "$got" = "src/sim/a.c: includes scheduler/scheduler_internal.h" ]; then
    echo "ok   layers: an internal header included from another folder is reported"
else
    echo "FAIL layers: an internal header from another folder was not reported (got: $got)"
    status=1
fi

out=$(violations "$root")
if [ -z "$out" ]; then
    echo "ok   layers: no include goes up a layer"
else
    echo "FAIL layers: includes that go up a layer or across one:"
    echo "$out" | sed 's/^/     /'
    status=1
fi

# The check itself: a tree with one upward include.
if true; then
    tmp=$(mktemp -d)
    mkdir -p "$tmp/src/framework" "$tmp/src/scheduler"
    printf '#include "scheduler/x.h"\n' >"$tmp/src/framework/a.c"
    printf '#include "framework/a.h"\n' >"$tmp/src/scheduler/x.h"
    got=$(violations "$tmp")
    rm -rf "$tmp"
    if [ "$got" = "src/framework/a.c: includes scheduler/x.h" ]; then
        echo "ok   layers: an upward include is reported"
    else
        echo "FAIL layers: an upward include was not reported (got: $got)"
        status=1
    fi
fi
exit $status
