#!/bin/sh
# The end-to-end suite (test/e2e/suite.py) on a real kube-apiserver v1.34.1
# and etcd built from their Go modules, with kube-controller-manager for
# ReplicaSets (test/e2e/build.sh kcm, cached under
# build/e2e/). Skipped, never passed, without Go, python3 or openssl.
set -u
ulimit -c 0
cd "$(dirname "$0")/../.."
for tool in go python3 openssl; do
    command -v "$tool" >/dev/null 2>&1 || { echo "$tool not found"; exit 77; }
done
if ! test/e2e/build.sh kcm; then
    echo "FAIL e2e_build (test/e2e/build.sh kcm)"
    exit 1
fi
exec python3 test/e2e/suite.py --ksched "${KSCHED:-build/release/ksched}" "$@"
