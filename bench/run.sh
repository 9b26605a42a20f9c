#!/usr/bin/env bash
# scheduler_perf workloads on ksched and on upstream kube-scheduler v1.34,
# side by side on this machine.
#
#   bench/run.sh --nodes N [--quick] [--workloads A,B] [--config FILE]
#                [--repeat R] [--ksched-repeat R] [--only ksched|upstream]
#
# Builds bench/ksched_bench (make bench-bin) and kschedref (test/reference,
# with its --bench mode), writes the workloads with bench/gen.py into
# build/bench/work/N/, runs every workload on ksched and then on upstream,
# each run its own process, and prints one table (--quick: one line per
# workload, "NAME  ksched X pods/s  upstream Y pods/s  Rx"). Everything
# measured goes to build/bench/results.json (N-node runs also to
# build/bench/results-N.json); each run's own output to build/bench/runs/.
# Each side runs R times (--repeat, default 1; ksched, whose runs last a
# second or less, --ksched-repeat, default 3) and the run with the median
# average throughput is reported: a short run is at the mercy of whatever
# else the machine does during that second. Figures only: nothing here
# passes or fails on a timing.
#
#   bench/run.sh --api [bench/api.py's options]
#
# The benchmark through a real kube-apiserver and etcd (make bench-api):
# builds ksched (release), bench/apitool and the end-to-end binaries
# (test/e2e/build.sh), then runs bench/api.py, which prints its table and
# writes build/bench-api/results.json.
# A crashing binary must not leave a core dump in the working tree.
ulimit -c 0
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
if [ "${1:-}" = --api ]; then
    shift
    mkdir -p "$root/build/bench-api"
    log=$root/build/bench-api/build.log
    if ! make -s -C "$root" MODE=release build >"$log" 2>&1; then
        echo "bench: building ksched failed:" >&2; tail -20 "$log" >&2; exit 2
    fi
    if ! command -v go >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
        echo "bench: go and python3 are needed for --api" >&2; exit 2
    fi
    if ! "$root/test/e2e/build.sh" >>"$log" 2>&1; then
        echo "bench: building the API server, etcd and kube-scheduler failed:" >&2; tail -20 "$log" >&2; exit 2
    fi
    if ! (cd "$here/apitool" && go build -o "$root/build/bench-api/apitool" .) >>"$log" 2>&1; then
        echo "bench: building bench/apitool failed:" >&2; tail -20 "$log" >&2; exit 2
    fi
    exec python3 "$here/api.py" "$@"
fi
nodes=""
quick=0
workloads=""
config=""
repeat=1
krepeat=3
only=""
while [ $# -gt 0 ]; do
    case "$1" in
    --nodes) nodes=$2; shift 2 ;;
    --nodes=*) nodes=${1#--nodes=}; shift ;;
    --quick) quick=1; shift ;;
    --workloads) workloads=$2; shift 2 ;;
    --workloads=*) workloads=${1#--workloads=}; shift ;;
    --config) config=$2; shift 2 ;;
    --config=*) config=${1#--config=}; shift ;;
    --repeat) repeat=$2; shift 2 ;;
    --repeat=*) repeat=${1#--repeat=}; shift ;;
    --ksched-repeat) krepeat=$2; shift 2 ;;
    --ksched-repeat=*) krepeat=${1#--ksched-repeat=}; shift ;;
    --only) only=$2; shift 2 ;;
    --only=*) only=${1#--only=}; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument: $1" >&2; exit 2 ;;
    esac
done
if [ -z "$nodes" ]; then
    echo "run.sh: --nodes N is required" >&2
    exit 2
fi
python=$(command -v python3 || true)
if [ -z "$python" ]; then
    echo "bench: python3 not found" >&2
    exit 2
fi
[ -n "$config" ] && config=$(cd "$(dirname "$config")" && pwd)/$(basename "$config")

out="$root/build/bench"
mkdir -p "$out/runs"
log() { echo "bench: $*" >&2; }

# ---- build ----
if [ "$only" != upstream ]; then
    if ! make -s -C "$root" MODE=release build bench-bin >"$out/build-ksched.log" 2>&1; then
        log "building ksched_bench failed:"
        tail -20 "$out/build-ksched.log" >&2
        exit 2
    fi
fi
ksched_bin="$root/build/release/bench/ksched_bench"
ref_bin="$root/build/reference/kschedref"
if [ "$only" != ksched ]; then
    if ! command -v go >/dev/null 2>&1; then
        log "go not found: upstream side skipped"
        only=ksched
    else
        stale=1
        if [ -x "$ref_bin" ]; then
            stale=0
            for f in "$root"/test/reference/*.go "$root/test/reference/go.mod" "$root/test/reference/go.sum"; do
                if [ "$f" -nt "$ref_bin" ]; then stale=1; break; fi
            done
        fi
        if [ $stale = 1 ]; then
            log "building kschedref (a first build downloads modules and takes minutes)"
            mkdir -p "$(dirname "$ref_bin")"
            if ! (cd "$root/test/reference" && GOFLAGS=-mod=mod go build -o "$ref_bin.tmp" .) >"$out/build-upstream.log" 2>&1; then
                log "building kschedref failed:"
                tail -20 "$out/build-upstream.log" >&2
                exit 2
            fi
            mv "$ref_bin.tmp" "$ref_bin"
        fi
    fi
fi

# ---- workloads ----
work="$out/work/$nodes"
all=$("$python" "$here/gen.py" --list-all)
[ -z "$workloads" ] && workloads=$("$python" "$here/gen.py" --list | tr '\n' ',' | sed 's/,$//')
IFS=, read -r -a names <<<"$workloads"
for w in "${names[@]}"; do
    if ! echo "$all" | grep -qx "$w"; then
        echo "run.sh: unknown workload $w (known: $(echo $all))" >&2
        exit 2
    fi
done
# written again when gen.py changed
for w in "${names[@]}"; do
    if [ ! -f "$work/$w/workload.json" ] || [ "$here/gen.py" -nt "$work/$w/workload.json" ]; then
        log "writing $w ($nodes nodes)"
        "$python" "$here/gen.py" --nodes "$nodes" --workloads "$w" -o "$work" || exit 2
    fi
done

# ---- runs ----
cfg_args=()
[ -n "$config" ] && cfg_args=(--config "$config")
results="$out/runs/$nodes.jsonl"
: >"$results"
start=$(date +%s)
for w in "${names[@]}"; do
    for side in ksched upstream; do
        [ -n "$only" ] && [ "$only" != "$side" ] && continue
        reps=$repeat
        [ $side = ksched ] && [ "$krepeat" -gt "$reps" ] && reps=$krepeat
        for r in $(seq 1 "$reps"); do
            f="$out/runs/$nodes-$w-$side-$r"
            t0=$(date +%s%N)
            if [ $side = ksched ]; then
                timeout 1800 "$ksched_bin" "${cfg_args[@]}" "$work/$w" >"$f.json" 2>"$f.log"
            else
                timeout 1800 "$ref_bin" "${cfg_args[@]}" --bench "$work/$w" >"$f.json" 2>"$f.log"
            fi
            rc=$?
            t1=$(date +%s%N)
            if [ $rc != 0 ] || [ ! -s "$f.json" ]; then
                log "$w $side: failed (exit $rc), see $f.log"
                tail -3 "$f.log" >&2
                echo "{\"workload\":\"$w\",\"scheduler\":\"$side\",\"error\":\"exit $rc\"}" >>"$results"
                break
            fi
            head -1 "$f.json" >>"$results"
            log "$w $side: $("$python" -c 'import json,sys; d=json.load(open(sys.argv[1])); t=d.get("throughput",{}); print("%.0f pods/s, %.1f MiB, %.1f s" % (t.get("average",0), d.get("peak_rss_mb",0), float(sys.argv[2])))' "$f.json" "$(( (t1 - t0) / 1000000 ))e-3")"
        done
    done
done
log "all runs: $(( $(date +%s) - start )) s"

args=(--nodes "$nodes" --runs "$results" --out "$out/results.json")
[ $quick = 1 ] && args+=(--quick)
"$python" "$here/report.py" "${args[@]}" || exit 2
cp "$out/results.json" "$out/results-$nodes.json"
