package main

import (
	_ "k8s.io/client-go/informers"
	_ "k8s.io/client-go/kubernetes/fake"
	_ "k8s.io/client-go/kubernetes/scheme"
	_ "k8s.io/kube-scheduler/framework"
	_ "k8s.io/kubernetes/pkg/apis/core/v1"
	_ "k8s.io/kubernetes/pkg/scheduler/apis/config"
	_ "k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	_ "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	_ "k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	_ "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	_ "k8s.io/kubernetes/pkg/scheduler/framework"
	_ "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	_ "k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	_ "k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	_ "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

func main() {}
