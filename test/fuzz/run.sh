#!/bin/sh
# Run the fuzz targets (see docs/fuzzing.md).
#
#   test/fuzz/run.sh [--seconds N] [--jobs J] [TARGET...]
#       libFuzzer (build/fuzz/fuzz_*, from make fuzz): each target for N
#       seconds (default 60) at nice 19, J at a time (default 1). New inputs
#       go to build/fuzz/corpus/TARGET, crashes to build/fuzz/artifacts/,
#       the log to build/fuzz/logs/TARGET.log; one summary line per target:
#       "TARGET: N execs in S s (cpu T s), cov C, ft F, corpus K, crashes X".
#   test/fuzz/run.sh --merge [TARGET...]
#       adds to the committed corpus (test/fuzz/corpus/TARGET) the inputs
#       of build/fuzz/corpus/TARGET that reach coverage it lacks (libFuzzer
#       -merge=1; inputs up to 4 KiB, to keep the repository small).
#   test/fuzz/run.sh --regress [TARGET...]
#       regression mode (make test): the gcc + ASan/UBSan build
#       (build/asan/fuzz/fuzz_*, driver.c) runs once over each target's
#       committed corpus and seeds; prints "ok   fuzz/TARGET (N inputs)" or
#       "FAIL fuzz/TARGET".
# TARGET is the name without fuzz_ (manifest_yaml, config, ...); default all.
set -u
ulimit -c 0
cd "$(dirname "$0")/../.."

# Seeds of each target: its committed corpus (test/fuzz/corpus/TARGET,
# regressions included) and the test fixtures of its kind.
seeds() {
    case "$1" in
    manifest_yaml) echo "test/fuzz/corpus/$1 examples/clusters test/fixtures test/scenarios" ;;
    manifest_json) echo "test/fuzz/corpus/$1 test/fuzz/corpus/api test/fixtures" ;;
    config) echo "test/fuzz/corpus/$1 examples/config test/fixtures/config" ;;
    *) echo "test/fuzz/corpus/$1" ;;
    esac
}
dict() {
    case "$1" in
    manifest_yaml | selector) echo test/fuzz/dict/yaml.dict ;;
    manifest_json | api | watch | remote) echo test/fuzz/dict/json.dict ;;
    config | plugin_meta) echo test/fuzz/dict/config.dict ;;
    kubeconfig) echo test/fuzz/dict/kubeconfig.dict ;;
    *) [ -f "test/fuzz/dict/$1.dict" ] && echo "test/fuzz/dict/$1.dict" ;;
    esac
}
max_len() {
    case "$1" in
    manifest_yaml | manifest_json | api | watch | pb) echo 65536 ;;
    config | plugin_meta | selector | kubeconfig | remote) echo 16384 ;;
    cel) echo 512 ;;
    *) echo 256 ;;
    esac
}

seconds=60
jobs=1
regress=0
merge=0
while [ $# -gt 0 ]; do
    case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --regress) regress=1; shift ;;
    --merge) merge=1; shift ;;
    *) break ;;
    esac
done
targets="$*"
if [ -z "$targets" ]; then
    for f in test/fuzz/fuzz_*.c; do
        t=$(basename "$f" .c)
        targets="$targets ${t#fuzz_}"
    done
fi

if [ "$regress" = 1 ]; then
    rc=0
    for t in $targets; do
        bin=build/asan/fuzz/fuzz_$t
        if [ ! -x "$bin" ]; then
            echo "FAIL fuzz/$t: $bin not built (make MODE=asan test-bins)"
            rc=1
            continue
        fi
        dirs=""
        for d in $(seeds "$t"); do [ -e "$d" ] && dirs="$dirs $d"; done
        # shellcheck disable=SC2086
        if out=$("$bin" $dirs 2>&1); then
            echo "ok   fuzz/$t ($(echo "$out" | tail -1))"
        else
            echo "FAIL fuzz/$t"
            echo "$out" | tail -30
            rc=1
        fi
    done
    exit $rc
fi

if [ "$merge" = 1 ]; then
    for t in $targets; do
        mkdir -p "test/fuzz/corpus/$t"
        before=$(ls "test/fuzz/corpus/$t" | wc -l)
        nice -n 19 "build/fuzz/fuzz_$t" -merge=1 -max_len=4096 "test/fuzz/corpus/$t" \
            "build/fuzz/corpus/$t" >"build/fuzz/logs/$t.merge.log" 2>&1 || {
            echo "$t: merge failed (build/fuzz/logs/$t.merge.log)"
            continue
        }
        echo "$t: $before -> $(ls "test/fuzz/corpus/$t" | wc -l) inputs ($(du -sh "test/fuzz/corpus/$t" | cut -f1))"
    done
    exit 0
fi

mkdir -p build/fuzz/logs build/fuzz/artifacts
one() { # target
    t=$1
    bin=build/fuzz/fuzz_$t
    if [ ! -x "$bin" ]; then
        echo "$t: $bin not built (make fuzz)"
        return 1
    fi
    mkdir -p "build/fuzz/corpus/$t"
    dirs=""
    for d in $(seeds "$t"); do [ -d "$d" ] && dirs="$dirs $d"; done
    d=$(dict "$t")
    log=build/fuzz/logs/$t.log
    # -timeout: one input taking 10 s is a hang; the first directory is the
    # one libFuzzer writes new inputs to.
    # shellcheck disable=SC2086
    # the CPU time the target had (on a shared machine, well below the
    # wall time at nice 19), by /usr/bin/time where there is one
    timer=""
    [ -x /usr/bin/time ] && timer="/usr/bin/time -f %U+%S -o build/fuzz/logs/$t.cpu"
    rm -f "build/fuzz/logs/$t.cpu"
    $timer nice -n 19 "$bin" -max_total_time="$seconds" -timeout=10 -max_len="$(max_len "$t")" \
        -print_final_stats=1 -artifact_prefix="build/fuzz/artifacts/${t}-" \
        ${d:+-dict=$d} "build/fuzz/corpus/$t" $dirs >"$log" 2>&1
    rc=$?
    cpu=$(tail -1 "build/fuzz/logs/$t.cpu" 2>/dev/null | awk -F+ '{printf "%d", $1 + $2}')
    execs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')
    secs=$(grep -E '^Done [0-9]+ runs in' "$log" | awk '{print $5}')
    last=$(grep -E '^#[0-9]+' "$log" | tail -1)
    cov=$(echo "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
    ft=$(echo "$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
    corp=$(echo "$last" | sed -n 's/.*corp: \([0-9]*\).*/\1/p')
    crashes=$(ls build/fuzz/artifacts/ 2>/dev/null | grep -c "^${t}-")
    echo "$t: ${execs:-?} execs in ${secs:-?} s (cpu ${cpu:-?} s), cov ${cov:-?}, ft ${ft:-?}, corpus ${corp:-?}, crashes $crashes (exit $rc)"
    [ "$rc" -eq 0 ]
}

rc=0
running=0
for t in $targets; do
    if [ "$jobs" -le 1 ]; then
        one "$t" || rc=1
    else
        one "$t" &
        running=$((running + 1))
        if [ "$running" -ge "$jobs" ]; then
            wait
            running=0
        fi
    fi
done
wait
exit $rc
