#!/bin/sh
# `ksched replay` on malformed input, in every format it reads (native
# YAML and JSON lines, audit logs, openb pod and node CSVs): exit status 2
# and one error naming FILE:LINE and what is wrong, nothing else replayed.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
ksched=${KSCHED:-$here/build/release/ksched}
[ -x "$ksched" ] || { echo "FAIL replay_errors: $ksched not built"; exit 1; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cluster=$here/test/scenarios/replay-fits-after-leave/cluster.yaml
fails=0

# expect NAME WANT(stderr substring) ARGS...
expect() {
    name=$1 want=$2
    shift 2
    "$ksched" replay "$@" >"$d/out" 2>"$d/err"
    rc=$?
    if [ "$rc" -eq 2 ] && grep -qF -- "$want" "$d/err"; then
        echo "ok   replay_errors: $name"
    else
        echo "FAIL replay_errors: $name: exit $rc, stderr: $(head -c 300 "$d/err")"
        fails=$((fails + 1))
    fi
}

pod='{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"x"}]}}'

printf '{"at":"0s","create":%s}\n\n{"at":"5s", "create": {bad\n' "$pod" >"$d/a.jsonl"
expect "json lines: not JSON" "a.jsonl:3: not a JSON object" "$cluster" "$d/a.jsonl"

printf '{"at":"10s","create":%s}\n{"at":"5s","delete":"a"}\n' "$pod" >"$d/b.jsonl"
expect "json lines: out of order" "b.jsonl:2: at: earlier than the event before it" "$cluster" "$d/b.jsonl"

printf '{"at":"soon","delete":"a"}\n' >"$d/c.jsonl"
expect "json lines: bad time" 'c.jsonl:1: at: invalid time "soon"' "$cluster" "$d/c.jsonl"

printf '{"at":"1s","create":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"x","resources":{"requests":{"cpu":"lots"}}}]}}}\n' >"$d/d.jsonl"
expect "json lines: bad pod" 'd.jsonl:1: pod default/a: spec.containers[0].resources.requests.cpu' "$cluster" "$d/d.jsonl"

printf -- '- at: 0s\n  delete: a\n- at: 1s\n  node:\n    name: n1\n    op: explode\n' >"$d/e.yaml"
expect "yaml: bad node op" 'e.yaml:5: node: op "explode"' "$cluster" "$d/e.yaml"

printf -- '- at: 0s\n  create:\n    apiVersion: v1\n    kind: Pod\n    metadata: {name: a}\n    spec:\n      containers:\n      - name: c\n        image: x\n        resources: {requests: {memory: lots}}\n' >"$d/f.yaml"
expect "yaml: bad pod" 'f.yaml:10: pod default/a: spec.containers[0].resources.requests.memory' "$cluster" "$d/f.yaml"

printf -- '- at: 0s\n  create: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}\n' >"$d/g.yaml"
expect "yaml: a kind not replayed" 'g.yaml:2: kind ConfigMap cannot be replayed' "$cluster" "$d/g.yaml"

printf -- '- at: 0s\n  node: {name: nowhere, op: cordon}\n' >"$d/h.yaml"
expect "yaml: a node that does not exist" 'h.yaml:2: node nowhere does not exist' "$cluster" "$d/h.yaml"

audit='{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"RequestResponse","stage":"ResponseComplete","verb":"create","objectRef":{"resource":"pods","namespace":"default","name":"a"},"responseStatus":{"code":201},'
printf '%s"stageTimestamp":"2026-11-26T10:00:00.000001Z","responseObject":%s}\n{"kind":"Event","apiVersion":"audit.k8s.io/v1"\n' "$audit" "$pod" >"$d/audit.log"
expect "audit: a cut line" "audit.log:2: not a JSON object" "$cluster" "$d/audit.log"

printf '%s"stageTimestamp":"yesterday","responseObject":%s}\n' "$audit" "$pod" >"$d/audit2.log"
expect "audit: bad timestamp" "audit2.log:1: stageTimestamp" "$cluster" "$d/audit2.log"

printf '%s"stageTimestamp":"2026-11-26T10:00:00Z","responseObject":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"x","resources":{"requests":{"cpu":"-1x"}}}]}}}\n' "$audit" >"$d/audit3.log"
expect "audit: bad pod" "audit3.log:1: pod default/a: spec.containers[0].resources.requests.cpu" "$cluster" "$d/audit3.log"

hdr=name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
printf '%s\np1,1000,100,0,0,,LS,Running,0,10,0\np2,x,100,0,0,,LS,Running,5,10,0\n' "$hdr" >"$d/pods.csv"
expect "openb pods: bad number" 'pods.csv:3: cpu_milli: want a non-negative number, got "x"' "$cluster" "$d/pods.csv"
printf '%s\np1,1e300,100,0,0,,LS,Running,0,10,0\n' "$hdr" >"$d/pods-huge.csv"
expect "openb pods: number beyond int64" 'pods-huge.csv:2: cpu_milli: want a non-negative number, got "1e300"' "$cluster" "$d/pods-huge.csv"

printf '%s\np1,1000,100,0,0,,LS,Running,0,10,0\np2,1000\n' "$hdr" >"$d/pods2.csv"
expect "openb pods: short row" "pods2.csv:3: 2 fields, want 11" "$cluster" "$d/pods2.csv"

printf 'name,cpu_milli,memory_mib,creation_time\np1,1,1,0\n' >"$d/pods3.csv"
expect "openb pods: missing column" "pods3.csv:1: no column num_gpu" "$cluster" "$d/pods3.csv"

printf '%s\np1,1000,100,0,0,,LS,Running,50,60,0\np2,1000,100,0,0,,LS,Running,5,10,0\n' "$hdr" >"$d/pods4.csv"
expect "openb pods: out of order" "pods4.csv:3: creation_time: earlier than the row before it" "$cluster" "$d/pods4.csv"

printf '%s\np1,1000,100,0,0,,LS,Running,0,10,0\n' "$hdr" >"$d/good.csv"
printf 'sn,cpu_milli,memory_mib,gpu,model\nn1,1000,100,0,\nn2,1000,-5,0,\n' >"$d/nodes.csv"
expect "openb nodes: bad number" 'nodes.csv:3: memory_mib: want a non-negative number, got "-5"' "$d/nodes.csv" "$d/good.csv"

[ "$fails" -eq 0 ]
