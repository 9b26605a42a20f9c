#!/bin/sh
# scripts/check-tracked-files.sh on this repository, and on temporary
# repositories that show it fails (naming the file) when it should.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
check=$here/scripts/check-tracked-files.sh
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }

# This repository itself.
if out=$("$check" "$here"); then ok "repository clean"; else bad "repository: $out"; fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
new_repo() {
    rm -rf "$tmp/r" && mkdir "$tmp/r" && git -C "$tmp/r" init -q &&
        echo small >"$tmp/r/README" && git -C "$tmp/r" add README
}
expect_fail() { # $1 = case, $2 = file the message must name
    if out=$("$check" "$tmp/r"); then
        bad "$1: check passed"
    elif echo "$out" | grep -q "^tracked file not allowed: $2:"; then
        ok "$1"
    else
        bad "$1: message does not name $2: $out"
    fi
}

new_repo
if "$check" "$tmp/r" >/dev/null; then ok "small files pass"; else bad "small files rejected"; fi

new_repo
head -c 3000000 /dev/zero >"$tmp/r/big.bin" && git -C "$tmp/r" add big.bin
expect_fail "file over 2 MB" big.bin

new_repo
echo "not really a dump" >"$tmp/r/core" && git -C "$tmp/r" add core
expect_fail "core dump by name" core

new_repo
cp "$(command -v sh)" "$tmp/r/tool" && git -C "$tmp/r" add tool
expect_fail "ELF executable" tool

new_repo
echo 'int x;' >"$tmp/r/x.c" && cc -c -o "$tmp/r/x.o" "$tmp/r/x.c" && git -C "$tmp/r" add -f x.o
expect_fail "object file" x.o

new_repo
head -c 3000000 /dev/zero >"$tmp/r/big.bin" && git -C "$tmp/r" add big.bin
echo "big.bin" >"$tmp/r/.tracked-files-allow"
expect_fail "allow-list entry without a reason" big.bin
echo "big.bin  test fixture that must be large" >"$tmp/r/.tracked-files-allow"
if "$check" "$tmp/r" >/dev/null; then ok "allow-listed with a reason"; else bad "allow-listed file rejected"; fi

exit $fail
