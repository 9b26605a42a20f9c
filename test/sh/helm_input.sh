#!/bin/sh
# `helm template` output read unchanged by `ksched simulate`
# (docs/workloads.md "Input"): the chart test/fixtures/helm/shop (a
# Deployment and its Service, a StatefulSet with a claim template, a
# ConfigMap, a ServiceAccount, a Role, a test hook Pod) rendered by helm
# and simulated on the demo cluster with a default WaitForFirstConsumer
# StorageClass; then rendered with --set to a size that does not fit.
# helm is $HELM, on PATH or build/tools/helm, which this script builds
# with `go install helm.sh/helm/v3/cmd/helm@v3.18.6` when Go is there;
# skipped (exit 77), never passed, without it.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
ksched=${KSCHED:-$here/build/release/ksched}
[ -x "$ksched" ] || { echo "FAIL helm_input: $ksched not built"; exit 1; }
helm=${HELM:-}
[ -n "$helm" ] || helm=$(command -v helm) || helm=$here/build/tools/helm
# Not there: built from the Go module proxy (as test/e2e builds its
# tools), once, into build/tools; without Go or the proxy, skipped.
if [ ! -x "$helm" ] && command -v go >/dev/null 2>&1; then
    echo "building helm v3.18.6 into build/tools (go install)"
    mkdir -p "$here/build/tools"
    GOBIN=$here/build/tools GOFLAGS=-mod=mod timeout 900 go install helm.sh/helm/v3/cmd/helm@v3.18.6 >"$here/build/tools/helm-build.log" 2>&1 ||
        echo "go install helm failed: $(tail -3 "$here/build/tools/helm-build.log")"
fi
[ -x "$helm" ] || { echo "helm not found (no Go, or go install failed)"; exit 77; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fails=0
check() { # NAME COMMAND...
    name=$1
    shift
    if "$@"; then echo "ok   helm_input: $name"; else echo "FAIL helm_input: $name"; fails=$((fails + 1)); fi
}
cat >"$d/sc.yaml" <<'SC'
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: example.com/csi
volumeBindingMode: WaitForFirstConsumer
SC
chart=$here/test/fixtures/helm/shop
HOME=$d "$helm" template rel "$chart" >"$d/release.yaml" 2>"$d/herr" ||
    { echo "FAIL helm_input: helm template: $(head -c 300 "$d/herr")"; exit 1; }
"$ksched" simulate "$here/examples/clusters/demo" "$d/sc.yaml" "$d/release.yaml" >"$d/out" 2>"$d/err"
check "simulate exit 0" [ $? -eq 0 ]
check "Deployment 3/3" grep -Eq '^default/rel-web +Deployment +3/3( |$)' "$d/out"
check "StatefulSet with its claims 2/2" grep -Eq '^default/rel-db +StatefulSet +2/2( |$)' "$d/out"
check "the rest counted as skipped, the test hook named" \
    grep -q 'skipped: 1 ServiceAccount, 1 ConfigMap, 1 Role, 1 Pod (helm test hook)' "$d/err"
"$ksched" simulate "$here/examples/clusters/demo" "$d/sc.yaml" "$d/release.yaml" -o json >"$d/json" 2>/dev/null
check "claims data-rel-db-0 and -1 created" [ "$(grep -Ec '"name": "data-rel-db-[01]"' "$d/json")" -ge 2 ]
# a release that does not fit: --fail-on-pending says so
HOME=$d "$helm" template rel "$chart" --set web.replicas=40 --set web.cpu=2 >"$d/big.yaml" 2>"$d/herr"
"$ksched" simulate "$here/examples/clusters/demo" "$d/sc.yaml" "$d/big.yaml" --fail-on-pending >"$d/out2" 2>/dev/null
check "40 replicas of 2 CPUs do not fit: exit 3" [ $? -eq 3 ]
check "the workload line says how many fit" grep -Eq '^default/rel-web +Deployment +[0-9]+/40 +rel-web-' "$d/out2"
[ "$fails" -eq 0 ]
