#!/bin/sh
# A throwaway kube-apiserver v1.34.1 + etcd on loopback (test/e2e/cluster.py):
#   test/e2e/env.sh [--lifetime SECONDS] [--keep] [-- COMMAND...]
# builds the binaries if needed, starts the cluster, prints its environment
# (KUBECONFIG, KSCHED_KUBECONFIG, E2E_AUDIT_LOG, PATH), runs COMMAND with it
# (or waits until the lifetime ends or Ctrl-C), then stops everything.
set -eu
cd "$(dirname "$0")/../.."
test/e2e/build.sh >&2
exec python3 test/e2e/cluster.py "$@"
