#!/bin/sh
# Build the upstream binaries of the end-to-end environment into
# build/e2e/bin: kube-apiserver, kube-scheduler and kubectl v1.34.1 (from
# k8s.io/kubernetes, test/e2e/tools/kube) and etcd v3.6 (test/e2e/tools/etcd).
# A stamp holds a hash of the pinned versions and of this script; the
# binaries are rebuilt only when missing or when that hash changes.
# Prints the seconds each build took; exit 77 without Go.
# `build.sh kcm` builds kube-controller-manager as well (the e2e suite's
# ReplicaSets); `build.sh upstream` builds as well what test/e2e/upstream.py needs:
# e2e.test (go test -c k8s.io/kubernetes/test/e2e) and kube-controller-manager
# v1.34.1 (test/e2e/tools/upstream), kwok (test/e2e/tools/kwok) and
# kwok-stages.yaml, KWOK's own fast node and pod stages from its module.
set -eu
cd "$(dirname "$0")/../.."
out=build/e2e/bin
command -v go >/dev/null 2>&1 || { echo "go not found"; exit 77; }
mkdir -p "$out"

K8S_VERSION=v1.34.1
# Flags as upstream's hack/lib/version.sh sets them, so that `kubectl version`
# and the API server's /version say v1.34.1 (the API server also derives its
# emulation version from it).
ldver() {
    for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        printf ' -X %s.gitVersion=%s -X %s.gitMajor=1 -X %s.gitMinor=34' "$p" "$K8S_VERSION" "$p" "$p"
        printf ' -X %s.gitTreeState=clean -X %s.buildDate=1970-01-01T00:00:00Z' "$p" "$p"
    done
}

stamp_of() { # $1 = tools dir
    cat "$1/go.mod" "$1/go.sum" test/e2e/build.sh | cksum | cut -d' ' -f1
}

build() { # $1 = tools dir, $2 = stamp name, rest = binaries then packages
    dir=$1; name=$2; shift 2
    want=$(stamp_of "$dir")
    have=$(cat "$out/.$name.stamp" 2>/dev/null || true)
    missing=0
    for b in $BINS; do [ -x "$out/$b" ] || missing=1; done
    if [ "$missing" -eq 0 ] && [ "$want" = "$have" ]; then
        echo "cached $name ($BINS)"
        return 0
    fi
    t0=$(date +%s)
    rm -f "$out/.$name.stamp"
    dest=$(pwd)/$out/
    case "$BINS" in *" "*) ;; *) dest=$dest$BINS ;; esac
    if [ -n "${TESTPKG:-}" ]; then
        (cd "$dir" && nice go test -c -vet=off -ldflags "-s -w $LDFLAGS" -o "$dest" "$@")
    else
        (cd "$dir" && nice go build -ldflags "-s -w $LDFLAGS" -o "$dest" "$@")
    fi
    echo "$want" >"$out/.$name.stamp"
    echo "built $name ($BINS) in $(( $(date +%s) - t0 )) s"
}

BINS="kube-apiserver kube-scheduler kubectl" LDFLAGS="$(ldver)" \
    build test/e2e/tools/kube kube \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl
BINS="etcd" LDFLAGS="" build test/e2e/tools/etcd etcd go.etcd.io/etcd/server/v3

[ "${1:-}" = upstream ] || [ "${1:-}" = kcm ] || exit 0
BINS="kube-controller-manager" LDFLAGS="$(ldver)" TESTPKG="" \
    build test/e2e/tools/upstream kcm k8s.io/kubernetes/cmd/kube-controller-manager
[ "${1:-}" = upstream ] || exit 0
BINS="e2e.test" LDFLAGS="" TESTPKG=1 \
    build test/e2e/tools/upstream e2e k8s.io/kubernetes/test/e2e
BINS="kwok" LDFLAGS="" TESTPKG="" build test/e2e/tools/kwok kwok sigs.k8s.io/kwok/cmd/kwok
# KWOK's fast stages: nodes become Ready (and keep a lease), pods Running
# and Ready, Jobs' pods complete; deleted pods go away as
# test/e2e/manifests/kwok-stages.yaml says, and allocatable follows capacity.
if [ ! -s "$out/kwok-stages.yaml" ] || [ "$out/kwok-stages.yaml" -ot test/e2e/tools/kwok/go.mod ] ||
   [ "$out/kwok-stages.yaml" -ot test/e2e/manifests/kwok-stages.yaml ]; then
    kdir=$(cd test/e2e/tools/kwok && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
    for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
             pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml; do
        echo "---"
        cat "$kdir/kustomize/stage/$f"
    done >"$out/kwok-stages.yaml.tmp"
    { echo "---"; cat test/e2e/manifests/kwok-stages.yaml; } >>"$out/kwok-stages.yaml.tmp"
    mv "$out/kwok-stages.yaml.tmp" "$out/kwok-stages.yaml"
fi
