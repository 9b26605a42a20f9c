#!/bin/sh
# No function of the command front-ends (src/cmd) is longer than about 80
# lines (docs/CONTRIBUTING-helpers.md, "Adding a command or a flag"): a
# command is a struct of options, parse(), run() and small steps. A
# function starts at a line ending in ") {" outside any function and ends
# at the next "}" in column 0. Prints "ok NAME" / "FAIL NAME" lines.
#   test/sh/cmd_functions.sh [ROOT]   check ROOT/src/cmd (default: this
#                                     repository), then that a long
#                                     function is caught
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -gt 0 ] && root=$1
max=${KS_MAX_FUNCTION_LINES:-80}

# Prints "file:line: NAME is N lines" for each function over $max.
long_functions() { # files...
    awk -v max="$max" '
        FNR == 1 { infn = 0 }
        !infn && /\) *\{ *$/ && !/^[ \t]*(if|for|while|switch|else)[ (]/ {
            infn = 1; start = FNR; name = $0
            sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
            if (name == "") name = prev
            next
        }
        !infn && /\($/ { prev = $0; sub(/\(.*/, "", prev); sub(/.*[ *]/, "", prev) }
        infn && /^}/ {
            infn = 0
            n = FNR - start + 1
            if (n > max) printf "%s:%d: %s is %d lines\n", FILENAME, start, name, n
        }
    ' "$@"
}

out=$(long_functions "$root"/src/cmd/*.c)
if [ -z "$out" ]; then
    echo "ok   cmd_functions: no function in src/cmd over $max lines"
else
    echo "$out" | sed 's/^/    /'
    echo "FAIL cmd_functions: functions in src/cmd over $max lines"
fi

# The check can fail: a generated 100-line function is caught.
t=${TMPDIR:-/tmp}/ks-cmdfn.$$
mkdir -p "$t"
{
    echo "static int long_one(int a) {"
    i=0
    while [ $i -lt 100 ]; do echo "    a += $i;"; i=$((i + 1)); done
    echo "    return a;"
    echo "}"
} >"$t/x.c"
if long_functions "$t/x.c" | grep -q "long_one is 103 lines"; then
    echo "ok   cmd_functions: a long function is caught"
else
    echo "FAIL cmd_functions: a long function is not caught"
fi
rm -rf "$t"
