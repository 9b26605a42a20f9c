//go:build tools

// Package tools pins the upstream binaries the end-to-end environment
// builds from k8s.io/kubernetes v1.34.1 (see test/e2e/build.sh).
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
