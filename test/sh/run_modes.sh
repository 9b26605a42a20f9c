#!/bin/sh
# The run mode is chosen once (docs/architecture.md, "Run modes"): below
# src/sim and src/cmd no file learns whether it steps or runs threads, or
# whether its clock is simulated, by reading a flag or a pointer. Caught:
# a `simulated` or `deterministic` field read or declared, the binders
# touched outside threaded.c (and the struct that holds them), a worker
# count read outside the dispatcher's own start and free. Prints
# "ok NAME" / "FAIL NAME" lines.
#   test/sh/run_modes.sh [ROOT]   check ROOT/src (default: this repository),
#                                 then that a mode read is caught
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -gt 0 ] && root=$1

# Prints "file:line: text" for each mode read under $1/src.
mode_reads() { # $1 = root
    core=$(cd "$1" && find src -name '*.[ch]' -not -path 'src/sim/*' -not -path 'src/cmd/*' | sort)
    for f in $core; do
        # comments do not count: drop /* ... */ on one line and comment lines
        sed -e 's|/\*.*\*/||g' -e 's|^ *\*.*||' -e 's|^ */\*.*||' "$1/$f" |
            grep -n -E '(->|\.)(simulated|deterministic)\b|\bbool (simulated|deterministic);' |
            sed "s|^|$f:|"
        case "$f" in
        src/scheduler/threaded.c | src/scheduler/scheduler_internal.h) ;;
        *) grep -n -E '(->|\.)binders\b' "$1/$f" | sed "s|^|$f:|" ;;
        esac
        case "$f" in
        src/backend/api_dispatcher.c)
            # only ks_api_dispatcher_start, _free and spawn_worker count their threads
            awk '/^[a-z].*\(.*\) \{$/ { fn = $0 } /->nworkers/ && fn !~ /(ks_api_dispatcher_(start|free)|spawn_worker)\(/ { print FNR ": " $0 }' \
                "$1/$f" | sed "s|^|$f:|" ;;
        esac
    done
}

out=$(mode_reads "$root")
if [ -z "$out" ]; then
    echo "ok   run_modes: no mode read below src/sim and src/cmd"
else
    echo "$out" | sed 's/^/    /'
    echo "FAIL run_modes: the run mode read from a flag or a pointer (use the executor, the clock, ks_tie_rules)"
fi

# The check can fail: a copy of the tree with a flag read added.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/run_modes.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/backend"
printf 'static int f(const struct c *clock) {\n    return clock->simulated;\n}\n' >"$tmp/src/backend/x.c"
if [ -n "$(mode_reads "$tmp")" ]; then
    echo "ok   run_modes_selftest: a clock->simulated read is caught"
else
    echo "FAIL run_modes_selftest: a clock->simulated read went unnoticed"
fi
[ -z "$out" ]
