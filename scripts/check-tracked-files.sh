#!/bin/sh
# Fail, naming the files, when the repository tracks a file larger than
# 2 MB, a core dump, an ELF executable or object file, or an ar archive,
# unless the file is listed with a reason in the allow-list
# (.tracked-files-allow: "path  reason", one per line, # comments).
#   scripts/check-tracked-files.sh [REPO_DIR]
set -u
repo=${1:-.}
cd "$repo" || exit 2
limit=2097152
allow=.tracked-files-allow
bad=0
allowed() {
    [ -f "$allow" ] || return 1
    # a line is "path<space>reason"; a path without a reason does not count
    awk -v p="$1" '$1 == p && NF >= 2 { found = 1 } END { exit !found }' "$allow"
}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
git ls-files -z | tr '\0' '\n' >"$tmp"
while IFS= read -r f; do
    [ -f "$f" ] || continue
    why=""
    size=$(stat -c %s "$f")
    if [ "$size" -gt "$limit" ]; then
        why="larger than 2 MB ($size bytes)"
    else
        case "$(basename "$f")" in
        core|core.[0-9]*|vgcore.*) why="core dump by name" ;;
        esac
        if [ -z "$why" ] && [ "$size" -ge 4 ]; then
            magic=$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')
            case "$magic" in
            7f454c46*) why="ELF file (executable, object, shared library or core dump)" ;;
            213c617263683e0a) why="ar archive (static library)" ;;
            esac
        fi
    fi
    [ -z "$why" ] && continue
    allowed "$f" && continue
    echo "tracked file not allowed: $f: $why (remove it, or list it with a reason in $allow)"
    bad=$((bad + 1))
done <"$tmp"
[ "$bad" -eq 0 ] || exit 1
exit 0
