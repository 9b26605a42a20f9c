//go:build tools

// Package tools pins etcd's server, built by test/e2e/build.sh.
package tools

import _ "go.etcd.io/etcd/server/v3"
