#!/usr/bin/env bash
# Differential tests against upstream kube-scheduler v1.34 (kschedref).
#
#   test/reference/run.sh [--seeds N] [--from S] [--nodes K] [--ksched PATH] [--jobs J]
#                         [--replay-seeds "S1 S2 ..."]
#
# Builds kschedref into build/reference/ (rebuilt only when its sources
# change), writes N generated scenarios (default 50; seeds S.. with --from S,
# default 1) and the fixed ones into
# build/reference/scenarios/ (--nodes K: every generated cluster has K nodes),
# runs kschedref on each and, when PATH is a ksched
# binary whose `simulate --help` offers --tie-break, runs
#   PATH simulate --explain -o trace --tie-break=name \
#        --percentage-of-nodes-to-score=100 [--config F] DIR
# and compares the two traces.  A scenario directory with a file
# `feature-gates` (one line, K=V,...) runs both with --feature-gates set
# to it.  Then the event replays (docs/reference-harness.md, "Event
# replay"): for each replay seed (default: the committed list in
# test/reference/replay-seeds) replaygen.py writes a cluster and an events
# file, kschedref --replay and `ksched simulate --replay` run them and
# compare_replay.py compares the queues' moves step by step.  One line per
# scenario (ok NAME / FAIL NAME: first difference), plus one for the
# feature gate table (src/config/feature_gates_table.c against kschedref
# --feature-gate-table), then "N passed, N failed".  Without Go it prints
# "reference: skipped (go not found)" and exits 0.
# A crashing binary must not leave a core dump in the working tree.
ulimit -c 0
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
seeds=50
first=1
ksched=""
jobs=1
nodes=()
replay_seeds=$(grep -v '^#' "$here/replay-seeds" 2>/dev/null | tr '\n' ' ')
while [ $# -gt 0 ]; do
    case "$1" in
    --seeds) seeds=$2; shift 2 ;;
    --seeds=*) seeds=${1#--seeds=}; shift ;;
    --from) first=$2; shift 2 ;;
    --from=*) first=${1#--from=}; shift ;;
    --ksched) ksched=$2; shift 2 ;;
    --ksched=*) ksched=${1#--ksched=}; shift ;;
    --nodes) nodes=(--nodes "$2"); shift 2 ;;
    --nodes=*) nodes=(--nodes "${1#--nodes=}"); shift ;;
    --replay-seeds) replay_seeds=$2; shift 2 ;;
    --replay-seeds=*) replay_seeds=${1#--replay-seeds=}; shift ;;
    --jobs) jobs=$2; shift 2 ;;
    --jobs=*) jobs=${1#--jobs=}; shift ;;
    -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument: $1" >&2; exit 2 ;;
    esac
done

if ! command -v go >/dev/null 2>&1; then
    echo "reference: skipped (go not found)"
    exit 0
fi
python=$(command -v python3 || true)
if [ -z "$python" ]; then
    echo "reference: skipped (python3 not found)"
    exit 0
fi

out="$root/build/reference"
bin="$out/kschedref"
mkdir -p "$out"

# ---- build (cached) ----
stale=1
if [ -x "$bin" ]; then
    stale=0
    for f in "$here"/*.go "$here/go.mod" "$here/go.sum"; do
        if [ "$f" -nt "$bin" ]; then stale=1; break; fi
    done
fi
if [ $stale = 1 ]; then
    echo "reference: building kschedref (first build downloads modules and takes minutes)" >&2
    start=$(date +%s)
    if ! (cd "$here" && GOFLAGS=-mod=mod go build -o "$bin.tmp" .) >"$out/build.log" 2>&1; then
        cat "$out/build.log" >&2
        echo "reference: build of kschedref failed"
        echo "0 passed, 1 failed"
        exit 1
    fi
    mv "$bin.tmp" "$bin"
    echo "reference: built kschedref in $(( $(date +%s) - start ))s" >&2
fi

# ---- ksched trace mode? ----
compare_ksched=0
compare_replay=0
if [ -n "$ksched" ]; then
    if [ ! -x "$ksched" ]; then
        echo "run.sh: $ksched is not executable" >&2
        exit 2
    fi
    if "$ksched" simulate --help 2>&1 | grep -q -- '--tie-break'; then
        compare_ksched=1
    else
        echo "reference: $ksched has no trace mode yet; checking reference traces only" >&2
    fi
    if "$ksched" simulate --help 2>&1 | grep -q -- '--replay'; then
        compare_replay=1
    fi
fi

# ---- scenarios ----
scen="$out/scenarios"
rm -rf "$scen"
mkdir -p "$scen"
names=()
for ((s = first; s < first + seeds; s++)); do
    name=$(printf 'seed-%04d' "$s")
    "$python" "$root/test/scenarios/gen.py" --seed "$s" "${nodes[@]}" -o "$scen/$name" || { echo "FAIL $name: gen.py failed"; exit 1; }
    names+=("$name")
done
if [ -d "$root/test/scenarios/fixed" ]; then
    for d in "$root"/test/scenarios/fixed/*/; do
        [ -d "$d" ] || continue
        name="fixed-$(basename "$d")"
        mkdir -p "$scen/$name"
        cp "$d"/*.yaml "$scen/$name/" 2>/dev/null
        [ -f "$d/feature-gates" ] && cp "$d/feature-gates" "$scen/$name/"
        names+=("$name")
    done
fi

for s in $replay_seeds; do
    name=$(printf 'replay-%04d' "$s")
    "$python" "$here/replaygen.py" --seed "$s" -o "$scen/$name" || { echo "FAIL $name: replaygen.py failed"; exit 1; }
    names+=("$name")
done

# ---- one event replay: prints one result line ----
run_replay() {
    local name=$1 dir="$scen/$1" err
    if ! "$bin" --replay "$dir/events.jsonl" "$dir/cluster.yaml" >"$dir/ref.jsonl" 2>"$dir/ref.err"; then
        err=$(tail -n 1 "$dir/ref.err")
        echo "FAIL $name: kschedref: ${err:-exit status $?}"
        return
    fi
    if [ $compare_replay = 1 ]; then
        if ! "$ksched" simulate --replay "$dir/events.jsonl" "$dir/cluster.yaml" >"$dir/ksched.jsonl" 2>"$dir/ksched.err"; then
            err=$(tail -n 1 "$dir/ksched.err")
            echo "FAIL $name: ksched: ${err:-failed}"
            return
        fi
        if ! err=$("$python" "$here/compare_replay.py" "$dir/ref.jsonl" "$dir/ksched.jsonl" 2>&1); then
            echo "FAIL $name: $(echo "$err" | head -n 1)"
            return
        fi
        echo "ok $name ($err)"
        return
    fi
    echo "ok $name ($(($(wc -l <"$dir/ref.jsonl") - 1)) steps, reference only)"
}

# ---- run one scenario: prints one result line ----
run_one() {
    local name=$1 dir="$scen/$1" cfg=() err
    case $name in replay-*) run_replay "$name"; return ;; esac
    [ -f "$dir/config.yaml" ] && cfg=(--config "$dir/config.yaml")
    [ -f "$dir/feature-gates" ] && cfg+=(--feature-gates "$(head -n 1 "$dir/feature-gates")")
    if ! "$bin" "${cfg[@]}" "$dir/cluster.yaml" >"$dir/ref.json" 2>"$dir/ref.err"; then
        err=$(tail -n 1 "$dir/ref.err")
        echo "FAIL $name: kschedref: ${err:-exit status $?}"
        return
    fi
    if ! err=$("$python" "$here/compare.py" --check "$dir/ref.json" 2>&1); then
        echo "FAIL $name: invalid reference trace: $(echo "$err" | head -n 1)"
        return
    fi
    if [ $compare_ksched = 1 ]; then
        if ! "$ksched" simulate --explain -o trace --tie-break=name --percentage-of-nodes-to-score=100 \
                "${cfg[@]}" "$dir/cluster.yaml" >"$dir/ksched.json" 2>"$dir/ksched.err"; then
            err=$(tail -n 1 "$dir/ksched.err")
            echo "FAIL $name: ksched: ${err:-failed}"
            return
        fi
        if ! err=$("$python" "$here/compare.py" "$dir/ref.json" "$dir/ksched.json" 2>&1); then
            echo "FAIL $name: $(echo "$err" | head -n 1)"
            return
        fi
    fi
    echo "ok $name"
}
export -f run_one run_replay
export scen bin python here compare_ksched compare_replay ksched

results="$out/results.txt"
# the gates ksched knows are upstream's
if "$bin" --feature-gate-table >"$out/feature_gates_table.c" 2>"$out/feature_gates_table.err" &&
    cmp -s "$out/feature_gates_table.c" "$root/src/config/feature_gates_table.c"; then
    echo "ok feature-gate-table"
else
    echo "FAIL feature-gate-table: src/config/feature_gates_table.c differs from upstream's registry (regenerate it with build/reference/kschedref --feature-gate-table)"
fi >"$results.gates"
cat "$results.gates"
printf '%s\n' "${names[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one "$1"' _ {} | tee "$results"
cat "$results.gates" >>"$results"
passed=$(grep -c '^ok ' "$results")
failed=$(grep -c '^FAIL ' "$results")
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
