#!/bin/sh
# bench/gpu-study on a small slice of the openb trace (test/fixtures/gpu-study):
# the CSV's shape, the FGD simulator's analysis invariants, the same rows
# from one process or two, the rows of the recorded run (the whole protocol:
# order, tuning, tie-breaks, plugins), and refused input.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=$here/build/release/bench/gpu_study
fx=$here/test/fixtures/gpu-study
fail=0
ok() { echo "ok   gpu_study: $1"; }
bad() { echo "FAIL gpu_study: $1"; fail=1; }
if [ ! -x "$bin" ]; then
    echo "build/release/bench/gpu_study not built"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if "$bin" --nodes "$fx/nodes.csv" --trace "$fx/pods.csv" --seeds 1-2 --out "$tmp/a.csv" 2>"$tmp/a.err"; then
    ok "runs"
else
    bad "exit status $?: $(head -3 "$tmp/a.err")"
fi
head -1 "$tmp/a.csv" | awk -F, '{ if ($1 == "workload" && $4 == "total_gpus" && $5 == "0" && $NF == "130" && NF == 135) exit 0; exit 1 }' &&
    ok "header workload,policy,seed,total_gpus,0..130" || bad "header: $(head -1 "$tmp/a.csv" | cut -c1-80)"
rows=$(tail -n +2 "$tmp/a.csv" | wc -l)
[ "$rows" -eq 12 ] && ok "12 rows (6 policies x 2 seeds)" || bad "$rows rows"
# allocation can never exceed what arrived (bucket x holds arrivals of x +- 1.5 %)
tail -n +2 "$tmp/a.csv" | awk -F, '{ for (i = 5; i <= NF; i++) if ($i != "" && ($i > (i - 5) + 1.5 || $i < 0)) { print "row " NR " col " (i - 5) ": " $i; bad = 1 } } END { exit bad }' >"$tmp/inv" &&
    ok "allocated <= arrived everywhere" || bad "allocated > arrived: $(head -2 "$tmp/inv")"
grep -q "^FGD " "$tmp/a.err" && grep -q "experiments in" "$tmp/a.err" && ok "summary table" || bad "no summary on stderr"

"$bin" --nodes "$fx/nodes.csv" --trace "$fx/pods.csv" --seeds 1-2 --jobs 2 --out "$tmp/b.csv" 2>/dev/null
cmp -s "$tmp/a.csv" "$tmp/b.csv" && ok "--jobs 2 gives the same rows" || bad "--jobs 2 differs"
# 12 experiments over 5 processes, each taking the next as it finishes
"$bin" --nodes "$fx/nodes.csv" --trace "$fx/pods.csv" --seeds 1-2 --jobs 5 --out "$tmp/b5.csv" 2>/dev/null
cmp -s "$tmp/a.csv" "$tmp/b5.csv" && ok "--jobs 5 gives the same rows" || bad "--jobs 5 differs"
# narrowing the nodes at PreFilter must not change a decision
"$bin" --nodes "$fx/nodes.csv" --trace "$fx/pods.csv" --seeds 1-2 --no-narrow --out "$tmp/n.csv" 2>/dev/null
cmp -s "$tmp/a.csv" "$tmp/n.csv" && ok "--no-narrow gives the same rows" || bad "--no-narrow differs"
cmp -s "$tmp/a.csv" "$fx/expected.csv" && ok "rows as recorded" || bad "rows differ from $fx/expected.csv: $(diff "$tmp/a.csv" "$fx/expected.csv" | head -3 | cut -c1-120)"

"$bin" --nodes "$fx/nodes.csv" --trace "$fx/pods.csv" --policies FGD --seeds 7 --out "$tmp/c.csv" 2>/dev/null
[ "$(tail -n +2 "$tmp/c.csv" | cut -d, -f2,3)" = "FGD,7" ] && ok "--policies/--seeds select" || bad "selection: $(cut -d, -f1-4 "$tmp/c.csv")"

printf 'sn,cpu_milli\nx,1\n' >"$tmp/bad.csv"
"$bin" --nodes "$tmp/bad.csv" --trace "$fx/pods.csv" >/dev/null 2>"$tmp/e"
rc=$?
[ "$rc" -eq 2 ] && grep -q "bad.csv:1: no column memory_mib" "$tmp/e" && ok "missing column refused" ||
    bad "missing column: exit $rc, $(cat "$tmp/e")"
"$bin" --nodes "$fx/nodes.csv" --trace "$fx/pods.csv" --policies Tetris >/dev/null 2>"$tmp/e"
rc=$?
[ "$rc" -eq 2 ] && grep -q "unknown policy Tetris" "$tmp/e" && ok "unknown policy refused" || bad "unknown policy: exit $rc"
# ksched replay --gpu-frag: the measure as a series, worked by hand in
# frag-cluster.yaml, and sane on the trace slice
ksched=$here/build/release/ksched
if [ -x "$ksched" ]; then
    "$ksched" replay "$fx/frag-cluster.yaml" "$fx/frag-trace.yaml" --gpu-frag --series "$tmp/s.csv" --step 1m >/dev/null 2>&1
    got=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i } NR == 2 { print $col["gpu_frag_milli"] "," $col["gpu_frag_pct"] }' "$tmp/s.csv")
    [ "$got" = "250,50" ] && ok "replay --gpu-frag: 250 milli, 50 % by hand" || bad "replay --gpu-frag: got '$got', want 250,50"
    "$ksched" replay "$fx/frag-cluster.yaml" "$fx/frag-trace.yaml" --gpu-frag-nodes "$tmp/fn.csv" >/dev/null 2>&1
    [ "$(tail -n +2 "$tmp/fn.csv")" = "default,n1,250.0,500" ] && ok "replay --gpu-frag-nodes: n1 250 of 500" ||
        bad "replay --gpu-frag-nodes: $(cat "$tmp/fn.csv")"
    "$ksched" replay "$fx/nodes.csv" "$fx/pods.csv" --gpu-frag --series "$tmp/s2.csv" --step 6h >/dev/null 2>&1
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; if (!col["gpu_frag_pct"]) exit 1; next }
             { p = $col["gpu_frag_pct"]; m = $col["gpu_frag_milli"]; if (p < 0 || p > 100 || m < 0 || m > 188000) exit 1; n++ }
             END { exit n < 10 }' "$tmp/s2.csv" && ok "replay --gpu-frag on the trace slice: within 0..100 %" ||
        bad "replay --gpu-frag on the slice: $(head -2 "$tmp/s2.csv" | cut -c1-100)"
else
    bad "build/release/ksched not built"
fi
exit $fail
