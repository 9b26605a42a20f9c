//go:build tools

// Package tools pins the upstream end-to-end test binary (e2e.test, built
// with `go test -c k8s.io/kubernetes/test/e2e`) and kube-controller-manager
// from k8s.io/kubernetes v1.34.1; see test/e2e/upstream/build.sh.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/test/e2e"
)
