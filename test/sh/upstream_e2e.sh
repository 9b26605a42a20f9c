#!/bin/sh
# A subset of upstream's [sig-scheduling] e2e tests (test/e2e/upstream.py
# --quick: QUICK there) with ksched and with kube-scheduler v1.34.1, on KWOK
# nodes; the whole set is `make test-upstream-e2e` (docs/upstream-e2e.md).
# Builds e2e.test, kube-controller-manager and kwok once (cached under
# build/e2e/bin). Skipped, never passed, without Go, python3 or openssl.
set -u
ulimit -c 0
cd "$(dirname "$0")/../.."
for tool in go python3 openssl; do
    command -v "$tool" >/dev/null 2>&1 || { echo "$tool not found"; exit 77; }
done
if ! test/e2e/build.sh upstream; then
    echo "FAIL upstream_e2e_build (test/e2e/build.sh upstream)"
    exit 1
fi
exec python3 test/e2e/upstream.py --quick --jobs 2 --ksched "${KSCHED:-build/release/ksched}" \
    --out build/upstream-e2e-quick "$@"
