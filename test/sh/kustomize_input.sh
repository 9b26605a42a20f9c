#!/bin/sh
# `kubectl kustomize` output read unchanged by `ksched simulate`
# (docs/workloads.md "Input"): an overlay of test/fixtures/kustomize (a
# namespace, a name prefix, a label added to selectors, a replica count,
# a generated ConfigMap) over a Deployment, a DaemonSet and a CronJob,
# simulated on the demo cluster. Skipped (exit 77), never passed, when
# kubectl is not there (build/e2e/bin from test/e2e/build.sh, or PATH).
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
ksched=${KSCHED:-$here/build/release/ksched}
[ -x "$ksched" ] || { echo "FAIL kustomize_input: $ksched not built"; exit 1; }
kubectl=$here/build/e2e/bin/kubectl
[ -x "$kubectl" ] || kubectl=$(command -v kubectl) || { echo "kubectl not found"; exit 77; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fails=0
check() { # NAME CONDITION-COMMAND...
    name=$1
    shift
    if "$@"; then echo "ok   kustomize_input: $name"; else echo "FAIL kustomize_input: $name"; fails=$((fails + 1)); fi
}

"$kubectl" kustomize "$here/test/fixtures/kustomize/prod" >"$d/release.yaml" 2>"$d/kerr" ||
    { echo "FAIL kustomize_input: kubectl kustomize: $(head -c 300 "$d/kerr")"; exit 1; }
"$ksched" simulate "$here/examples/clusters/demo" "$d/release.yaml" >"$d/out" 2>"$d/err"
check "simulate exit 0" [ $? -eq 0 ]
check "Deployment scaled by the overlay: 4/4" grep -Eq '^prod/prod-api +Deployment +4/4' "$d/out"
check "DaemonSet on every node" grep -Eq '^prod/prod-agent +DaemonSet +([0-9]+)/\1( |$)' "$d/out"
check "CronJob fired once" grep -Eq '^prod/prod-report +CronJob +1/1' "$d/out"
check "generated ConfigMap counted as skipped" grep -q 'skipped: 1 ConfigMap' "$d/err"
"$ksched" simulate "$here/examples/clusters/demo" "$d/release.yaml" -o json >"$d/json" 2>/dev/null
python3 - "$d/json" >"$d/py" 2>&1 <<'PY'
import json, sys
items = json.load(open(sys.argv[1]))["items"]
pods = [i for i in items if i["kind"] == "Pod" and i["metadata"].get("namespace") == "prod"]
bad = [p["metadata"]["name"] for p in pods
       if p["metadata"]["labels"].get("env") != "prod" or not p["metadata"].get("ownerReferences")]
api = [p for p in pods if p["metadata"]["name"].startswith("prod-api-")]
print(len(pods), len(api), bad)
sys.exit(0 if pods and len(api) == 4 and not bad else 1)
PY
check "every generated pod labelled env=prod and owned ($(cat "$d/py"))" [ $? -eq 0 ]
[ "$fails" -eq 0 ]
