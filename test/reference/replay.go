package main

// The event replay mode (docs/reference-harness.md, "Event replay"):
// upstream's scheduling queue (PriorityQueue with queueing hints, the
// v1.34 defaults) is fed a sequence of cluster events through handlers that
// do what kube-scheduler's eventhandlers.go does, and after every step the
// harness prints which pods moved between activeQ, backoffQ and the
// unschedulable pods.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"time"
	_ "unsafe" // go:linkname to the queue's timer functions

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes/fake"
	toolscache "k8s.io/client-go/tools/cache"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	internalqueue "k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	testingclock "k8s.io/utils/clock/testing"
)

// The queue's periodic flushes are goroutines on the queue's clock; the
// replay runs them itself, synchronously, at "flush" steps.
//
//go:linkname queueFlushBackoffQCompleted k8s.io/kubernetes/pkg/scheduler/backend/queue.(*PriorityQueue).flushBackoffQCompleted
func queueFlushBackoffQCompleted(p *internalqueue.PriorityQueue, logger klog.Logger)

//go:linkname queueFlushUnschedulableLeftover k8s.io/kubernetes/pkg/scheduler/backend/queue.(*PriorityQueue).flushUnschedulablePodsLeftover
func queueFlushUnschedulableLeftover(p *internalqueue.PriorityQueue, logger klog.Logger)

// ReplayStart is the replay clock at the first step; every step moves it on
// by ReplayStepDuration ("tick" steps by more).
var ReplayStart = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)

const ReplayStepDuration = time.Millisecond

// replayStep is one line of the events file.
type replayStep struct {
	Op        string          `json:"op"`
	Object    json.RawMessage `json:"object,omitempty"`
	Kind      string          `json:"kind,omitempty"`
	Namespace string          `json:"namespace,omitempty"`
	Name      string          `json:"name,omitempty"`
	Seconds   float64         `json:"seconds,omitempty"`
	// attempt: steps that happen while the pod is in flight (after its
	// scheduling cycle decided, before the failure handler or the binding)
	During []replayStep `json:"during,omitempty"`
}

// replayOut is one line of the output.
type replayOut struct {
	Step          int         `json:"step"`
	Op            string      `json:"op"`
	Object        string      `json:"object,omitempty"`
	Pod           string      `json:"pod,omitempty"`
	Result        string      `json:"result,omitempty"`
	Node          string      `json:"node,omitempty"`
	Unschedulable []string    `json:"unschedulable,omitempty"`
	Pending       []string    `json:"pending,omitempty"`
	Moves         [][3]string `json:"moves"`
}

type replay struct {
	s      *Sim
	q      *internalqueue.PriorityQueue
	clock  *testingclock.FakeClock
	logger klog.Logger
	c      *Cluster // priority classes for admission of new pods
	rv     int
	// the clock at the start of the current step; changes within a step
	// move it on by a nanosecond each, so that pods enter the queue at
	// distinct times in the order they arrive (as with a real clock, and
	// as ksched's queue stamps them)
	base time.Time
	// objects of the other kinds, by kind and namespace/name
	objs map[string]map[string]runtime.Object
}

// buildHintMap is upstream's buildQueueingHintMap (scheduler.go, not
// exported) with queueing hints on.
func buildHintMap(ctx context.Context, es []framework.EnqueueExtensions) (internalqueue.QueueingHintMap, error) {
	m := internalqueue.QueueingHintMap{}
	queueAll := func(klog.Logger, *v1.Pod, interface{}, interface{}) (fwk.QueueingHint, error) { return fwk.Queue, nil }
	for _, e := range es {
		events, err := e.EventsToRegister(ctx)
		if err != nil {
			return nil, err
		}
		if len(events) == 0 {
			continue
		}
		nodeAdd, nodeTaint := false, false
		for _, ev := range events {
			fn := ev.QueueingHintFn
			if fn == nil {
				fn = queueAll
			}
			if ev.Event.Resource == fwk.Node {
				if ev.Event.ActionType&fwk.Add != 0 {
					nodeAdd = true
				}
				if ev.Event.ActionType&fwk.UpdateNodeTaint != 0 {
					nodeTaint = true
				}
			}
			m[ev.Event] = append(m[ev.Event], &internalqueue.QueueingHintFunction{PluginName: e.Name(), QueueingHintFn: fn})
		}
		if nodeAdd && !nodeTaint {
			te := fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeTaint}
			m[te] = append(m[te], &internalqueue.QueueingHintFunction{PluginName: e.Name(), QueueingHintFn: queueAll})
		}
	}
	return m, nil
}

func runReplay(cfgPath, eventsPath string, paths []string) error {
	cfg, err := loadConfig(cfgPath)
	if err != nil {
		return err
	}
	cluster, err := LoadCluster(paths)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := NewSim(ctx, cfg, cluster)
	if err != nil {
		return err
	}
	r := &replay{s: s, logger: s.logger, c: cluster, objs: map[string]map[string]runtime.Object{}}
	r.clock = testingclock.NewFakeClock(ReplayStart)
	if err := r.newQueue(ctx, cfg); err != nil {
		return err
	}
	for _, o := range cluster.PVs {
		r.remember("PersistentVolume", o)
	}
	for _, o := range cluster.PVCs {
		r.remember("PersistentVolumeClaim", o)
	}
	for _, o := range cluster.StorageClasses {
		r.remember("StorageClass", o)
	}
	for _, o := range cluster.CSINodes {
		r.remember("CSINode", o)
	}
	for _, o := range cluster.CSIDrivers {
		r.remember("CSIDriver", o)
	}
	for _, o := range cluster.CSICapacities {
		r.remember("CSIStorageCapacity", o)
	}
	for _, o := range cluster.VolumeAttach {
		r.remember("VolumeAttachment", o)
	}

	// The queue takes every unassigned pod of a profile in input order, as
	// the informer lists them; one nanosecond apart.
	for _, p := range cluster.Pods {
		if p.Spec.NodeName == "" && s.profiles[p.Spec.SchedulerName] != nil {
			r.q.Add(r.logger, p)
			r.clock.Step(time.Nanosecond)
		}
	}
	r.clock.SetTime(ReplayStart)
	r.base = ReplayStart

	data, err := os.ReadFile(eventsPath)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	fmt.Fprintln(w, `{"format":"ksched-replay/v1"}`)
	lines := bytes.Split(data, []byte("\n"))
	step := 0
	for i, line := range lines {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		var st replayStep
		if err := json.Unmarshal(line, &st); err != nil {
			return fmt.Errorf("%s:%d: %w", eventsPath, i+1, err)
		}
		step++
		r.base = r.base.Add(ReplayStepDuration)
		r.clock.SetTime(r.base)
		before := r.where()
		out := replayOut{Step: step, Op: st.Op}
		if err := r.apply(&st, &out); err != nil {
			return fmt.Errorf("%s:%d: %w", eventsPath, i+1, err)
		}
		out.Moves = diffWhere(before, r.where())
		js, err := json.Marshal(&out)
		if err != nil {
			return err
		}
		w.Write(js)
		w.WriteByte('\n')
	}
	return nil
}

func (r *replay) newQueue(ctx context.Context, cfg *config.KubeSchedulerConfiguration) error {
	hints := internalqueue.QueueingHintMapPerProfile{}
	preEnqueue := map[string]map[string]framework.PreEnqueuePlugin{}
	for name, prof := range r.s.profiles {
		m, err := buildHintMap(ctx, prof.Framework.EnqueueExtensions())
		if err != nil {
			return err
		}
		hints[name] = m
		preEnqueue[name] = map[string]framework.PreEnqueuePlugin{}
		for _, pl := range prof.Framework.PreEnqueuePlugins() {
			preEnqueue[name][pl.Name()] = pl
		}
	}
	first := r.s.profiles[cfg.Profiles[0].SchedulerName]
	rec := metrics.NewMetricsAsyncRecorder(1000, time.Second, ctx.Done())
	r.q = internalqueue.NewPriorityQueue(first.Framework.QueueSortFunc(), r.s.factory,
		internalqueue.WithClock(r.clock),
		internalqueue.WithPodInitialBackoffDuration(time.Duration(cfg.PodInitialBackoffSeconds)*time.Second),
		internalqueue.WithPodMaxBackoffDuration(time.Duration(cfg.PodMaxBackoffSeconds)*time.Second),
		internalqueue.WithPreEnqueuePluginMap(preEnqueue),
		internalqueue.WithQueueingHintMapPerProfile(hints),
		internalqueue.WithMetricsRecorder(*rec),
	)
	return nil
}

func objKey(o metav1Object) string {
	if o.GetNamespace() != "" {
		return o.GetNamespace() + "/" + o.GetName()
	}
	return o.GetName()
}

type metav1Object interface {
	GetNamespace() string
	GetName() string
}

func (r *replay) remember(kind string, o runtime.Object) {
	m, _ := meta.Accessor(o)
	if r.objs[kind] == nil {
		r.objs[kind] = map[string]runtime.Object{}
	}
	r.objs[kind][objKey(m)] = o
}

// where reports every pod the queue holds: active, backoff, unschedulable
// or gated.
func (r *replay) where() map[string]string {
	out := map[string]string{}
	for _, p := range r.q.PodsInActiveQ() {
		out[p.Namespace+"/"+p.Name] = "active"
	}
	for _, p := range r.q.PodsInBackoffQ() {
		out[p.Namespace+"/"+p.Name] = "backoff"
	}
	for _, p := range r.q.UnschedulablePods() {
		w := "unschedulable"
		if pi, ok := r.q.GetPod(p.Name, p.Namespace); ok && pi.Gated() {
			w = "gated"
		}
		out[p.Namespace+"/"+p.Name] = w
	}
	return out
}

func diffWhere(a, b map[string]string) [][3]string {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var moves [][3]string
	for k := range keys {
		if a[k] != b[k] {
			moves = append(moves, [3]string{k, a[k], b[k]})
		}
	}
	sort.Slice(moves, func(i, j int) bool { return moves[i][0] < moves[j][0] })
	if moves == nil {
		moves = [][3]string{}
	}
	return moves
}

// nextRV: numeric and increasing, as the assume caches compare versions
// (the objects read from the manifests have "1").
func (r *replay) nextRV() string {
	r.rv++
	return fmt.Sprintf("%d", 1000+r.rv)
}

// decode reads one object of an add or update step, defaulted like the
// input manifests (and admitted, for pods).
func (r *replay) decode(raw json.RawMessage) (runtime.Object, error) {
	c := &Cluster{Seq: map[string]int{}, PriorityClasses: r.c.PriorityClasses}
	if err := c.decode(raw, "object"); err != nil {
		return nil, err
	}
	var objs []runtime.Object
	for _, o := range c.Nodes {
		objs = append(objs, o)
	}
	for _, o := range c.Pods {
		if err := c.admitPriority(o); err != nil {
			return nil, err
		}
		applyCreateMutations(o)
		objs = append(objs, o)
	}
	for _, o := range c.PVs {
		objs = append(objs, o)
	}
	for _, o := range c.PVCs {
		objs = append(objs, o)
	}
	for _, o := range c.StorageClasses {
		objs = append(objs, o)
	}
	for _, o := range c.CSINodes {
		objs = append(objs, o)
	}
	for _, o := range c.CSIDrivers {
		objs = append(objs, o)
	}
	for _, o := range c.CSICapacities {
		objs = append(objs, o)
	}
	for _, o := range c.VolumeAttach {
		objs = append(objs, o)
	}
	if len(objs) != 1 {
		return nil, fmt.Errorf("an add or update step needs exactly one object of a replayed kind")
	}
	m, _ := meta.Accessor(objs[0])
	m.SetResourceVersion(r.nextRV())
	return objs[0], nil
}

func kindName(o runtime.Object) string {
	switch o.(type) {
	case *v1.Node:
		return "Node"
	case *v1.Pod:
		return "Pod"
	case *v1.PersistentVolume:
		return "PersistentVolume"
	case *v1.PersistentVolumeClaim:
		return "PersistentVolumeClaim"
	case *storagev1.StorageClass:
		return "StorageClass"
	case *storagev1.CSINode:
		return "CSINode"
	case *storagev1.CSIDriver:
		return "CSIDriver"
	case *storagev1.CSIStorageCapacity:
		return "CSIStorageCapacity"
	case *storagev1.VolumeAttachment:
		return "VolumeAttachment"
	}
	return ""
}

var kindResource = map[string]fwk.EventResource{
	"PersistentVolume":      fwk.PersistentVolume,
	"PersistentVolumeClaim": fwk.PersistentVolumeClaim,
	"StorageClass":          fwk.StorageClass,
	"CSINode":               fwk.CSINode,
	"CSIDriver":             fwk.CSIDriver,
	"CSIStorageCapacity":    fwk.CSIStorageCapacity,
	"VolumeAttachment":      fwk.VolumeAttachment,
}

var kindGVR = map[string]schema.GroupVersionResource{
	"PersistentVolume":      v1.SchemeGroupVersion.WithResource("persistentvolumes"),
	"PersistentVolumeClaim": v1.SchemeGroupVersion.WithResource("persistentvolumeclaims"),
	"StorageClass":          storagev1.SchemeGroupVersion.WithResource("storageclasses"),
	"CSINode":               storagev1.SchemeGroupVersion.WithResource("csinodes"),
	"CSIDriver":             storagev1.SchemeGroupVersion.WithResource("csidrivers"),
	"CSIStorageCapacity":    storagev1.SchemeGroupVersion.WithResource("csistoragecapacities"),
	"VolumeAttachment":      storagev1.SchemeGroupVersion.WithResource("volumeattachments"),
}

func (r *replay) informerFor(kind string) toolscache.SharedIndexInformer {
	f := r.s.factory
	switch kind {
	case "PersistentVolume":
		return f.Core().V1().PersistentVolumes().Informer()
	case "PersistentVolumeClaim":
		return f.Core().V1().PersistentVolumeClaims().Informer()
	case "StorageClass":
		return f.Storage().V1().StorageClasses().Informer()
	case "CSINode":
		return f.Storage().V1().CSINodes().Informer()
	case "CSIDriver":
		return f.Storage().V1().CSIDrivers().Informer()
	case "CSIStorageCapacity":
		return f.Storage().V1().CSIStorageCapacities().Informer()
	case "VolumeAttachment":
		return f.Storage().V1().VolumeAttachments().Informer()
	case "Node":
		return f.Core().V1().Nodes().Informer()
	}
	return nil
}

// syncObject writes obj (nil: deletes old) to the fake API server and waits
// until the informer, whose listers plugins and hints read, has it; then a
// little longer for the plugins' own handlers (assume caches).
func (r *replay) syncObject(kind string, old, obj runtime.Object) error {
	gvr := kindGVR[kind]
	if kind == "Node" {
		gvr = v1.SchemeGroupVersion.WithResource("nodes")
	}
	tracker := r.s.client.(*fake.Clientset).Tracker()
	var err error
	var key, ns string
	switch {
	case obj == nil:
		m, _ := meta.Accessor(old)
		ns, key = m.GetNamespace(), objKey(m)
		err = tracker.Delete(gvr, ns, m.GetName())
	case old == nil:
		m, _ := meta.Accessor(obj)
		ns, key = m.GetNamespace(), objKey(m)
		err = tracker.Create(gvr, obj, ns)
	default:
		m, _ := meta.Accessor(obj)
		ns, key = m.GetNamespace(), objKey(m)
		err = tracker.Update(gvr, obj, ns)
	}
	if err != nil {
		return err
	}
	inf := r.informerFor(kind)
	want := ""
	if obj != nil {
		m, _ := meta.Accessor(obj)
		want = m.GetResourceVersion()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		cur, exists, _ := inf.GetStore().GetByKey(key)
		if obj == nil && !exists {
			break
		}
		if obj != nil && exists {
			if m, err := meta.Accessor(cur); err == nil && m.GetResourceVersion() == want {
				break
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s %s: the informer did not catch up", kind, key)
		}
		time.Sleep(100 * time.Microsecond)
	}
	time.Sleep(2 * time.Millisecond)
	return nil
}

func lePriority(p int32) internalqueue.PreEnqueueCheck {
	return func(pod *v1.Pod) bool { return corev1helpers.PodPriority(pod) <= p }
}

func (r *replay) responsible(p *v1.Pod) bool { return r.s.profiles[p.Spec.SchedulerName] != nil }

// ---- eventhandlers.go, with queueing hints on ----

func (r *replay) podAdded(p *v1.Pod) {
	if p.Spec.NodeName != "" {
		_ = r.s.cache.AddPod(r.logger, p)
		r.q.MoveAllToActiveOrBackoffQueue(r.logger, framework.EventAssignedPodAdd, nil, p, nil)
	} else if r.responsible(p) {
		r.q.Add(r.logger, p)
	}
}

// unscheduledDeleted is deletePodFromSchedulingQueue (no waiting pods here).
func (r *replay) unscheduledDeleted(p *v1.Pod) {
	r.q.Delete(p)
	if p.Status.NominatedNodeName != "" {
		r.q.MoveAllToActiveOrBackoffQueue(r.logger, framework.EventAssignedPodDelete, p, nil, lePriority(corev1helpers.PodPriority(p)))
	}
}

func (r *replay) assignedDeleted(p *v1.Pod, inCache bool) {
	if inCache {
		_ = r.s.cache.RemovePod(r.logger, p)
	}
	r.q.MoveAllToActiveOrBackoffQueue(r.logger, framework.EventAssignedPodDelete, p, nil, nil)
}

func (r *replay) podUpdated(o, n *v1.Pod) {
	if o.ResourceVersion == n.ResourceVersion {
		return
	}
	oa, na := o.Spec.NodeName != "", n.Spec.NodeName != ""
	ou, nu := !oa && r.responsible(o), !na && r.responsible(n)
	// the assigned pods' handler first, as it was registered first
	switch {
	case oa && na:
		_ = r.s.cache.UpdatePod(r.logger, o, n)
		for _, evt := range framework.PodSchedulingPropertiesChange(n, o) {
			r.q.MoveAllToActiveOrBackoffQueue(r.logger, evt, o, n, nil)
		}
	case oa:
		r.assignedDeleted(o, true)
	case na:
		r.podAdded(n)
	}
	switch {
	case ou && nu:
		if assumed, _ := r.s.cache.IsAssumedPod(n); assumed {
			return
		}
		r.q.Update(r.logger, o, n)
		if o.Status.NominatedNodeName != "" && o.Status.NominatedNodeName != n.Status.NominatedNodeName {
			r.q.MoveAllToActiveOrBackoffQueue(r.logger, framework.EventAssignedPodDelete, o, nil, lePriority(corev1helpers.PodPriority(o)))
		}
	case ou:
		r.unscheduledDeleted(o)
	case nu:
		r.q.Add(r.logger, n)
	}
}

func (r *replay) podDeleted(p *v1.Pod) {
	if p.Spec.NodeName != "" {
		r.assignedDeleted(p, true)
	} else if r.responsible(p) {
		r.unscheduledDeleted(p)
	}
}

// ---- steps ----

func (r *replay) apply(st *replayStep, out *replayOut) error {
	switch st.Op {
	case "add", "update":
		obj, err := r.decode(st.Object)
		if err != nil {
			return err
		}
		kind := kindName(obj)
		m, _ := meta.Accessor(obj)
		out.Object = kind + " " + objKey(m)
		defer r.clock.Step(time.Nanosecond)
		return r.change(kind, objKey(m), obj, st.Op == "add")
	case "delete":
		key := st.Name
		if st.Namespace != "" {
			key = st.Namespace + "/" + st.Name
		}
		out.Object = st.Kind + " " + key
		defer r.clock.Step(time.Nanosecond)
		return r.change(st.Kind, key, nil, false)
	case "attempt":
		return r.attempt(out, st.During)
	case "tick":
		r.base = r.base.Add(time.Duration(st.Seconds * float64(time.Second)))
		r.clock.SetTime(r.base)
		return nil
	case "flush":
		queueFlushBackoffQCompleted(r.q, r.logger)
		queueFlushUnschedulableLeftover(r.q, r.logger)
		return nil
	}
	return fmt.Errorf("unknown op %q", st.Op)
}

// change applies an add (obj, add), an update (obj) or a delete (nil).
func (r *replay) change(kind, key string, obj runtime.Object, add bool) error {
	s := r.s
	switch kind {
	case "Pod":
		ps := s.pods[key]
		var old *v1.Pod
		if ps != nil && !ps.deleted {
			old = ps.pod
		}
		// The steps were written without knowing what the attempts would
		// do: a pod preempted meanwhile is not there to update or delete,
		// and a pod bound meanwhile keeps its node.
		if obj == nil {
			if old == nil {
				return nil
			}
			ps.deleted = true
			_ = s.podIdx.Delete(old)
			_ = s.client.CoreV1().Pods(old.Namespace).Delete(s.ctx, old.Name, deleteOptions)
			s.nominator.DeleteNominatedPodIfExists(old)
			r.podDeleted(old)
			return nil
		}
		p := obj.(*v1.Pod)
		if !add && old == nil {
			return nil
		}
		if !add && old.Spec.NodeName != "" && p.Spec.NodeName == "" {
			p.Spec.NodeName = old.Spec.NodeName
		}
		// a running pod's start is SimNow unless given, as in the trace loop
		if p.Spec.NodeName != "" && p.Status.StartTime == nil {
			t := SimNow
			p.Status.StartTime = &t
		}
		if add != (old == nil) {
			return fmt.Errorf("pod %s: add of an existing pod or update of a missing one", key)
		}
		if old == nil {
			ps = &podState{pod: p, key: key, seq: len(s.pods)}
			s.pods[key] = ps
			s.byUID[string(p.UID)] = ps
			_ = s.podIdx.Add(p)
			_, _ = s.client.CoreV1().Pods(p.Namespace).Create(s.ctx, p, createOptions)
			ps.pending = p.Spec.NodeName == "" && r.responsible(p)
			r.podAdded(p)
			return nil
		}
		ps.pod = p
		ps.pending = p.Spec.NodeName == "" && r.responsible(p)
		_ = s.podIdx.Update(p)
		_, _ = s.client.CoreV1().Pods(p.Namespace).Update(s.ctx, p, updateOptions)
		if p.Spec.NodeName == "" {
			s.nominator.UpdateNominatedPod(r.logger, old, mustPodInfo(p))
		} else {
			s.nominator.DeleteNominatedPodIfExists(p)
		}
		r.podUpdated(old, p)
		return nil
	case "Node":
		old := r.node(key)
		if obj == nil {
			if old == nil {
				return fmt.Errorf("node %s does not exist", key)
			}
			if err := r.syncObject(kind, old, nil); err != nil {
				return err
			}
			r.q.MoveAllToActiveOrBackoffQueue(r.logger, fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Delete}, old, nil, nil)
			_ = s.cache.RemoveNode(r.logger, old)
			delete(r.nodes(), key)
			return nil
		}
		n := obj.(*v1.Node)
		if add != (old == nil) {
			return fmt.Errorf("node %s: add of an existing node or update of a missing one", key)
		}
		var oldObj runtime.Object // a nil *v1.Node would not be a nil interface
		if old != nil {
			oldObj = old
		}
		if err := r.syncObject(kind, oldObj, n); err != nil {
			return err
		}
		r.nodes()[key] = n
		if old == nil {
			s.cache.AddNode(r.logger, n)
			r.q.MoveAllToActiveOrBackoffQueue(r.logger, fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add}, nil, n, nil)
			return nil
		}
		s.cache.UpdateNode(r.logger, old, n)
		for _, evt := range framework.NodeSchedulingPropertiesChange(n, old) {
			r.q.MoveAllToActiveOrBackoffQueue(r.logger, evt, old, n, nil)
		}
		return nil
	}
	res, ok := kindResource[kind]
	if !ok {
		return fmt.Errorf("kind %q is not replayed", kind)
	}
	if r.objs[kind] == nil {
		r.objs[kind] = map[string]runtime.Object{}
	}
	old := r.objs[kind][key]
	if obj == nil && old == nil {
		return fmt.Errorf("%s %s does not exist", kind, key)
	}
	if obj != nil && add != (old == nil) {
		return fmt.Errorf("%s %s: add of an existing object or update of a missing one", kind, key)
	}
	if err := r.syncObject(kind, old, obj); err != nil {
		return err
	}
	switch {
	case obj == nil:
		delete(r.objs[kind], key)
		r.q.MoveAllToActiveOrBackoffQueue(r.logger, fwk.ClusterEvent{Resource: res, ActionType: fwk.Delete}, old, nil, nil)
	case old == nil:
		r.objs[kind][key] = obj
		r.q.MoveAllToActiveOrBackoffQueue(r.logger, fwk.ClusterEvent{Resource: res, ActionType: fwk.Add}, nil, obj, nil)
	default:
		r.objs[kind][key] = obj
		r.q.MoveAllToActiveOrBackoffQueue(r.logger, fwk.ClusterEvent{Resource: res, ActionType: fwk.Update}, old, obj, nil)
	}
	return nil
}

func (r *replay) nodes() map[string]runtime.Object {
	if r.objs["Node"] == nil {
		r.objs["Node"] = map[string]runtime.Object{}
		for _, n := range r.c.Nodes {
			r.objs["Node"][n.Name] = n
		}
	}
	return r.objs["Node"]
}

func (r *replay) node(name string) *v1.Node {
	if n, ok := r.nodes()[name]; ok {
		return n.(*v1.Node)
	}
	return nil
}

// attempt pops the queue's head and tries it, then does what upstream's
// failure handler and binding do with the queue.
func (r *replay) attempt(out *replayOut, during []replayStep) error {
	s := r.s
	if !r.poppable() {
		// nothing to pop: the steps happen all the same
		return r.applyDuring(during)
	}
	pInfo, err := r.q.Pop(r.logger)
	if err != nil {
		return err
	}
	key := pInfo.Pod.Namespace + "/" + pInfo.Pod.Name
	out.Pod = key
	ps := s.pods[key]
	if ps == nil || ps.deleted || ps.pod.Spec.NodeName != "" {
		r.q.Done(pInfo.Pod.UID)
		out.Result = "Skipped"
		return nil
	}
	// every pending pod's version before the attempt: status patches made
	// by the attempt reach the queue as updates afterwards
	before := map[string]*v1.Pod{}
	for k, p := range s.pods {
		if !p.deleted && p.pod.Spec.NodeName == "" {
			before[k] = p.pod
		}
	}
	old := ps.pod
	att, _, err := s.attempt(0, ps)
	if err != nil {
		return err
	}
	out.Result = att.Result
	out.Node = att.Node
	// REPLAY_DEBUG=ns/name: the attempts of that pod, in the trace
	// format, on stderr
	if os.Getenv("REPLAY_DEBUG") == key {
		js, _ := json.Marshal(att)
		fmt.Fprintf(os.Stderr, "%s\n", js)
	}
	// What PostFilter asked of the API server is answered while the pod is
	// still in flight (the harness preempts synchronously): the victims'
	// deletions (the cache let them go already), then the nominations
	// preemption cleared (other pending pods' updates, in name order).
	if att.PostFilter != nil {
		for _, v := range att.PostFilter.Victims {
			if vs := s.pods[v]; vs != nil {
				r.assignedDeleted(vs.pod, false)
			}
		}
	}
	var keys []string
	for k := range before {
		if k != key {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := s.pods[k]
		if p.deleted || p.pod == before[k] || p.pod.Spec.NodeName != "" {
			continue
		}
		n := p.pod.DeepCopy()
		n.ResourceVersion = r.nextRV()
		p.pod = n
		_ = s.podIdx.Update(n)
		r.podUpdated(before[k], n)
	}
	if err := r.applyDuring(during); err != nil {
		return err
	}
	if att.Result == ResultScheduled {
		r.q.Done(pInfo.Pod.UID)
		// the binding arrives as an update of the pod
		bound := ps.pod.DeepCopy()
		bound.ResourceVersion = r.nextRV()
		ps.pod = bound
		_ = s.podIdx.Update(bound)
		// the cache has it already (the attempt bound it)
		r.unscheduledDeleted(old)
		r.q.MoveAllToActiveOrBackoffQueue(r.logger, framework.EventAssignedPodAdd, nil, bound, nil)
	} else {
		pInfo.UnschedulablePlugins = nil
		pInfo.PendingPlugins = nil
		if s.lastFit != nil {
			pInfo.UnschedulablePlugins = s.lastFit.Diagnosis.UnschedulablePlugins
			pInfo.PendingPlugins = s.lastFit.Diagnosis.PendingPlugins
		}
		if pInfo.UnschedulablePlugins == nil {
			pInfo.UnschedulablePlugins = sets.New[string]()
		}
		if pInfo.PendingPlugins == nil {
			pInfo.PendingPlugins = sets.New[string]()
		}
		// the pod as the informer has it (before the status patch lands)
		pInfo.PodInfo = mustPodInfo(old.DeepCopy())
		if err := r.q.AddUnschedulableIfNotPresent(r.logger, pInfo, r.q.SchedulingCycle()); err != nil {
			return err
		}
		r.clock.Step(time.Nanosecond)
		if qi, ok := r.q.GetPod(old.Name, old.Namespace); ok {
			out.Unschedulable = sortedSet(qi.UnschedulablePlugins)
			out.Pending = sortedSet(qi.PendingPlugins)
		}
	}
	// The failure handler's status patch of the pod: PodScheduled=False
	// with the reason and message (sent only when they change) and the
	// nominated node, in one update.
	if att.Result != ResultScheduled && !ps.deleted {
		reason := v1.PodReasonUnschedulable
		if att.Result == ResultError {
			reason = v1.PodReasonSchedulerError
		}
		cur := ps.pod
		cond := podScheduledCondition(cur)
		if cond == nil || cond.Status != v1.ConditionFalse || cond.Reason != reason || cond.Message != att.Message {
			n := cur.DeepCopy()
			setPodScheduled(n, reason, att.Message)
			ps.pod = n
			_ = s.podIdx.Update(n)
		}
	}
	// the pod's own patch: an update
	if ps.pod != before[key] && !ps.deleted && ps.pod.Spec.NodeName == "" {
		n := ps.pod.DeepCopy()
		n.ResourceVersion = r.nextRV()
		ps.pod = n
		_ = s.podIdx.Update(n)
		r.podUpdated(before[key], n)
	}
	return nil
}

func (r *replay) applyDuring(during []replayStep) error {
	for i := range during {
		d := &during[i]
		if d.Op != "add" && d.Op != "update" && d.Op != "delete" {
			return fmt.Errorf(`"during" takes add, update and delete steps`)
		}
		if err := r.apply(d, &replayOut{}); err != nil {
			return err
		}
	}
	return nil
}

// poppable: Pop would not block (activeQ, or backoffQ apart from the pods
// backing off after an error, has a pod).
func (r *replay) poppable() bool {
	if len(r.q.PodsInActiveQ()) > 0 {
		return true
	}
	for _, p := range r.q.PodsInBackoffQ() {
		if pi, ok := r.q.GetPod(p.Name, p.Namespace); ok && (pi.UnschedulablePlugins.Len() > 0 || pi.PendingPlugins.Len() > 0) {
			return true
		}
	}
	return false
}

func sortedSet(s sets.Set[string]) []string { return sets.List(s) }

func podScheduledCondition(p *v1.Pod) *v1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == v1.PodScheduled {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func setPodScheduled(p *v1.Pod, reason, msg string) {
	c := v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: reason, Message: msg}
	if old := podScheduledCondition(p); old != nil {
		*old = c
		return
	}
	p.Status.Conditions = append(p.Status.Conditions, c)
}

var (
	createOptions = metav1.CreateOptions{}
	updateOptions = metav1.UpdateOptions{}
	deleteOptions = metav1.DeleteOptions{}
)
