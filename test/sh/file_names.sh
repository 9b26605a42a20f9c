#!/bin/sh
# No two files in src/ outside the plugin folders (which keep upstream's
# file names) share a name: the file for a name is found in one look
# (issue #30). Prints "ok NAME" / "FAIL NAME" lines.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

dups() { # $1 = src dir
    find "$1" -type f \( -name '*.c' -o -name '*.h' \) -not -path "$1/plugins/*" | sed 's#.*/##' | sort | uniq -d
}

d=$(dups "$root/src")
if [ -z "$d" ]; then
    echo "ok   file_names: no two files in src outside plugins share a name"
else
    echo "FAIL file_names: shared names in src: $(echo $d)"
fi

# The check can fail: two snapshot.c in a copy are caught.
t=${TMPDIR:-/tmp}/ks-names.$$
mkdir -p "$t/src/a" "$t/src/b" "$t/src/plugins/x"
touch "$t/src/a/snapshot.c" "$t/src/b/snapshot.c" "$t/src/plugins/x/snapshot.h" "$t/src/plugins/x/args.c" "$t/src/a/args.c"
if [ "$(dups "$t/src")" = "snapshot.c" ]; then
    echo "ok   file_names: a shared name is caught (plugins left out)"
else
    echo "FAIL file_names: a shared name is not caught: $(dups "$t/src")"
fi
rm -rf "$t"
