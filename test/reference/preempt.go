package main

// Glue that makes upstream DefaultPreemption deterministic without changing
// its algorithm: candidate offset 0, synchronous victim deletion, potential
// nodes in name order, total orders where upstream leaves ties to chance.

import (
	"context"
	"math"
	"sort"
	"sync"

	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	"k8s.io/kubernetes/pkg/scheduler/util"
)

// detPreemption is a preemption.Interface that delegates to the upstream
// DefaultPreemption plugin, except for the random candidate offset and the
// final (arbitrary) tie between candidate nodes.
type detPreemption struct {
	*defaultpreemption.DefaultPreemption
}

func (d detPreemption) GetOffsetAndNumCandidates(n int32) (int32, int32) {
	_, num := d.DefaultPreemption.GetOffsetAndNumCandidates(n)
	return 0, num
}

// OrderedScoreFuncs returns the same criteria upstream applies when a
// preemption plugin returns none, followed by one more: the smallest node name.
func (d detPreemption) OrderedScoreFuncs(_ context.Context, m map[string]*extenderv1.Victims) []func(string) int64 {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	rank := make(map[string]int64, len(names))
	for i, n := range names {
		rank[n] = int64(i)
	}
	return []func(string) int64{
		func(node string) int64 { return -m[node].NumPDBViolations },
		func(node string) int64 { return -int64(corev1helpers.PodPriority(m[node].Pods[0])) },
		func(node string) int64 {
			var sum int64
			for _, p := range m[node].Pods {
				sum += int64(corev1helpers.PodPriority(p)) + int64(math.MaxInt32+1)
			}
			return -sum
		},
		func(node string) int64 { return -int64(len(m[node].Pods)) },
		func(node string) int64 {
			t := util.GetEarliestPodStartTime(m[node])
			if t == nil {
				return math.MinInt64
			}
			return t.UnixNano()
		},
		func(node string) int64 { return -rank[node] },
	}
}

// moreImportantPod is upstream's order (higher priority, then earlier start
// time) made total by the pod's namespace/name.
func moreImportantPod(p1, p2 *v1.Pod) bool {
	pr1, pr2 := corev1helpers.PodPriority(p1), corev1helpers.PodPriority(p2)
	if pr1 != pr2 {
		return pr1 > pr2
	}
	t1, t2 := util.GetPodStartTime(p1), util.GetPodStartTime(p2)
	if !t1.Equal(t2) {
		return t1.Before(t2)
	}
	return p1.Namespace+"/"+p1.Name < p2.Namespace+"/"+p2.Name
}

// victimRecorder collects the pods deleted by preemption during one attempt.
type victimRecorder struct {
	mu      sync.Mutex
	victims []*v1.Pod
	// evictions counts PreemptPod calls (victims not already terminating);
	// armed is set while PostFilter runs.
	evictions int
	armed     bool
}

func (r *victimRecorder) take() []*v1.Pod {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := r.victims
	r.victims = nil
	r.evictions = 0
	return v
}

func (r *victimRecorder) arm(on bool) {
	r.mu.Lock()
	r.armed = on
	r.mu.Unlock()
}

// keepNominations reports whether a nomination-clearing status patch must
// be dropped: with SchedulerAsyncPreemption (v1.34's default) a candidate
// whose victims are all terminating already gets no eviction goroutine, so
// the lower-priority pods nominated to its node keep their nomination; the
// synchronous evaluator the harness runs would clear them.
func (r *victimRecorder) keepNominations() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.armed && r.evictions == 0
}

// installDeterministicPreemption replaces the plugin's evaluator with one that
// runs synchronously and uses detPreemption, and records deleted victims.
func installDeterministicPreemption(pl *defaultpreemption.DefaultPreemption, fh framework.Handle, rec *victimRecorder) {
	pl.MoreImportantPod = moreImportantPod
	ev := preemption.NewEvaluator(defaultpreemption.Name, fh, detPreemption{pl}, false)
	orig := ev.PreemptPod
	ev.PreemptPod = func(ctx context.Context, c preemption.Candidate, preemptor, victim *v1.Pod, pluginName string) error {
		rec.mu.Lock()
		rec.evictions++
		rec.mu.Unlock()
		err := orig(ctx, c, preemptor, victim, pluginName)
		if err == nil {
			rec.mu.Lock()
			rec.victims = append(rec.victims, victim)
			rec.mu.Unlock()
		}
		return err
	}
	pl.Evaluator = ev
}

// sortedNodeToStatus hands PostFilter plugins the nodes of a status code in
// node-name order (upstream iterates a Go map there).
type sortedNodeToStatus struct {
	*framework.NodeToStatus
}

func (s sortedNodeToStatus) NodesForStatusCode(l framework.NodeInfoLister, code fwk.Code) ([]fwk.NodeInfo, error) {
	nodes, err := s.NodeToStatus.NodesForStatusCode(l, code)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(nodes, func(i, j int) bool { return nodes[i].Node().Name < nodes[j].Node().Name })
	return nodes, nil
}
