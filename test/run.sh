#!/bin/sh
# Run every test suite and end with one line: "N passed, N failed".
#   unit       cmocka binaries, in the release and the asan build, and the
#              threaded ones in the tsan build
#   scenarios  test/scenarios/*/cmd: run ksched, compare with expected output
#   shell      test/sh/*.sh: each prints "ok   NAME" / "FAIL NAME" lines;
#              exit 77 means skipped (a tool it needs is missing)
#   reference  differential tests against upstream (test/reference/run.sh)
# Exit status is non-zero when anything failed. Core dumps are off: a
# crashing test is reported as failed, it does not leave a core in the tree.
set -u
ulimit -c 0
cd "$(dirname "$0")/.."
passed=0
failed=0
skipped=0
failures=""
log=build/test-logs
mkdir -p "$log"

count_cmocka() { # $1 = output file; prints "pass fail"
    p=$(grep -c '^\[       OK \]' "$1")
    f=$(grep -c '^\[  FAILED  \] [^0-9]' "$1")
    echo "$p $f"
}

# KS_TEST_MODES: the unit flavours to run (make tsan: tsan only, with
# KS_TEST_UNIT_ONLY set to skip the other suites). The tsan build has only
# the threaded tests.
# KS_TEST_SUITES: the suites to run (default all: unit scenarios shell
# reference); KS_TEST_SCENARIO_MODES: the builds the scenarios run with
# (make coverage: coverage only, scripts/coverage.sh).
suites=${KS_TEST_SUITES:-unit scenarios shell reference}
want() { case " $suites " in *" $1 "*) return 0 ;; esac; return 1; }
want unit && for mode in ${KS_TEST_MODES:-release asan tsan}; do
    for t in $(find build/$mode/test/unit -type f -name 'test_*' 2>/dev/null | sort); do
        [ -x "$t" ] || continue
        name="$mode/${t#build/$mode/test/unit/}"
        out="$log/$(echo "$name" | tr / _).log"
        CMOCKA_MESSAGE_OUTPUT=stdout "$t" >"$out" 2>&1
        rc=$?
        set -- $(count_cmocka "$out")
        passed=$((passed + $1))
        failed=$((failed + $2))
        if [ "$rc" -ne 0 ] && [ "$2" -eq 0 ]; then
            # crashed or a sanitizer fired outside a test's accounting
            failed=$((failed + 1))
        fi
        if [ "$rc" -ne 0 ]; then
            failures="$failures $name"
            echo "FAIL $name (see $out)"
            grep -E '^\[  (FAILED|ERROR)|ERROR: |runtime error|error:' "$out" | head -20
        else
            echo "ok   $name ($1 tests)"
        fi
    done
done

if [ -n "${KS_TEST_UNIT_ONLY:-}" ]; then
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit
fi

# Scenario tests: each directory has `cmd` (a shell line run from the repo
# root with $KSCHED set) and `expected` (stdout) and optionally `exit` (the
# expected exit status, default 0).
want scenarios && for mode in ${KS_TEST_SCENARIO_MODES:-release asan}; do
    KSCHED=$(pwd)/build/$mode/ksched
    export KSCHED
    for d in test/scenarios/*/; do
        [ -f "$d/cmd" ] || continue
        name="scenario/$mode/$(basename "$d")"
        out="$log/$(echo "$name" | tr / _).out"
        sh "$d/cmd" >"$out" 2>"$out.err"
        rc=$?
        want=0
        [ -f "$d/exit" ] && want=$(cat "$d/exit")
        if [ "$rc" -eq "$want" ] && cmp -s "$out" "$d/expected"; then
            passed=$((passed + 1))
            echo "ok   $name"
        else
            failed=$((failed + 1))
            failures="$failures $name"
            echo "FAIL $name (exit $rc, want $want)"
            diff -u "$d/expected" "$out" | head -30
            head -5 "$out.err"
        fi
    done
done

# Shell suites (repository checks, end-to-end suites that skip without Go).
want shell && for t in test/sh/*.sh; do
    [ -x "$t" ] || continue
    name="sh/$(basename "$t" .sh)"
    out="$log/$(echo "$name" | tr / _).log"
    "$t" >"$out" 2>&1
    rc=$?
    if [ "$rc" -eq 77 ]; then
        skipped=$((skipped + 1))
        echo "skip $name: $(tail -1 "$out")"
        continue
    fi
    p=$(grep -c '^ok ' "$out")
    f=$(grep -c '^FAIL ' "$out")
    passed=$((passed + p))
    failed=$((failed + f))
    if [ "$rc" -ne 0 ] || [ "$f" -ne 0 ] || [ "$p" -eq 0 ]; then
        [ "$f" -eq 0 ] && failed=$((failed + 1))
        failures="$failures $name"
        echo "FAIL $name (see $out)"
        grep -E '^FAIL ' "$out" | head -20
    else
        echo "ok   $name ($p checks)"
    fi
done

# Differential tests against upstream kube-scheduler (needs Go).
if want reference && [ -x test/reference/run.sh ]; then
    if command -v go >/dev/null 2>&1; then
        out="$log/reference.log"
        test/reference/run.sh --seeds "${REFERENCE_SEEDS:-50}" --ksched "$(pwd)/build/release/ksched" >"$out" 2>&1
        rc=$?
        line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -1)
        if [ -n "$line" ]; then
            p=${line%% passed*}
            f=${line#*passed, }
            f=${f%% failed*}
            passed=$((passed + p))
            failed=$((failed + f))
        fi
        if [ "$rc" -ne 0 ] || [ -z "$line" ]; then
            [ -z "$line" ] && failed=$((failed + 1))
            failures="$failures reference"
            echo "FAIL reference (see $out)"
            grep -E '^FAIL' "$out" | head -20
        else
            echo "ok   reference: $line"
        fi
    else
        skipped=$((skipped + 1))
        echo "skip reference: go not found"
    fi
fi

[ -n "$failures" ] && echo "failed:$failures"
[ "$skipped" -gt 0 ] && echo "$skipped suites skipped"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
