//go:build tools

// Package tools pins KWOK (fake kubelets) for the upstream end-to-end run;
// see test/e2e/upstream/build.sh.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
