package main

// Throughput mode (kschedref --bench DIR): one scheduler_perf workload, as
// written by bench/gen.py, through upstream's real scheduler: scheduler.New
// (its PriorityQueue with queueing hints, cache, event handlers, API
// dispatcher, async preemption) and ScheduleOne in a loop, over an
// in-memory client. Prints one JSON object with the same fields as
// bench/ksched_bench, measured the same way (see bench/README.md).
//
// The in-memory client: pods and nodes live in a store of this file and
// reach the informers through fake watches (no object tracker, so each
// object exists once, in the informer cache, as in a real scheduler); the
// fake clientset's reactors play the API server for binding, status
// patches and deletions, and keep its tracker for the few other objects
// (namespaces, services, priority classes).

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/profile"
)

// benchMeta is workload.json.
type benchMeta struct {
	Workload          string `json:"workload"`
	Nodes             int    `json:"nodes"`
	InitPods          int    `json:"init_pods"`
	MeasuredPods      int    `json:"measured_pods"`
	MeasuredNamespace string `json:"measured_namespace"`
	Churn             *struct {
		Mode       string   `json:"mode"`
		Number     int      `json:"number"`
		IntervalMS int64    `json:"interval_ms"`
		Kinds      []string `json:"kinds"`
	} `json:"churn"`
}

// benchStore plays the API server for pods and nodes.
type benchStore struct {
	mu    sync.Mutex
	pods  map[string]*v1.Pod // namespace/name -> the latest version
	nodes map[string]*v1.Node
	podW  *watch.FakeWatcher
	nodeW *watch.FakeWatcher

	initPods   map[string]bool // init pods written unbound
	initBound  int
	measuredNS string
	measuring  bool
	binds      []int64 // monotonic ns of each measured binding
	allBound   chan struct{}
	target     int
	start      time.Time
	stopping   atomic.Bool
}

// send delivers a watch event, unless the run is over: the informers stop
// their watches then, while the API dispatcher and async preemption may
// still be writing (a send on a stopped fake watch panics).
func (st *benchStore) send(w *watch.FakeWatcher, t watch.EventType, obj kruntime.Object) {
	if st.stopping.Load() {
		return
	}
	defer func() { _ = recover() }()
	w.Action(t, obj)
}

func podKey(ns, name string) string { return ns + "/" + name }

func (st *benchStore) mono() int64 { return int64(time.Since(st.start)) }

func (st *benchStore) addPod(p *v1.Pod) {
	st.mu.Lock()
	st.pods[podKey(p.Namespace, p.Name)] = p
	st.mu.Unlock()
	st.send(st.podW, watch.Added, p)
}

func (st *benchStore) deletePod(ns, name string) bool {
	st.mu.Lock()
	p := st.pods[podKey(ns, name)]
	delete(st.pods, podKey(ns, name))
	st.mu.Unlock()
	if p == nil {
		return false
	}
	st.send(st.podW, watch.Deleted, p)
	return true
}

func (st *benchStore) addNode(n *v1.Node) {
	st.mu.Lock()
	st.nodes[n.Name] = n
	st.mu.Unlock()
	st.send(st.nodeW, watch.Added, n)
}

func (st *benchStore) deleteNode(name string) {
	st.mu.Lock()
	n := st.nodes[name]
	delete(st.nodes, name)
	st.mu.Unlock()
	if n != nil {
		st.send(st.nodeW, watch.Deleted, n)
	}
}

// bind does what the API server's binding subresource does: set the node,
// mark the pod scheduled.
func (st *benchStore) bind(b *v1.Binding) error {
	st.mu.Lock()
	key := podKey(b.Namespace, b.Name)
	cur := st.pods[key]
	if cur == nil {
		st.mu.Unlock()
		return fmt.Errorf("pods %q not found", b.Name)
	}
	if cur.Spec.NodeName != "" {
		st.mu.Unlock()
		return fmt.Errorf("pod %s is already assigned to node %q", b.Name, cur.Spec.NodeName)
	}
	np := cur.DeepCopy()
	np.Spec.NodeName = b.Target.Name
	setCondition(&np.Status, v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue})
	st.pods[key] = np
	if st.measuring && np.Namespace == st.measuredNS {
		st.binds = append(st.binds, st.mono())
		if len(st.binds) == st.target {
			close(st.allBound)
		}
	} else if st.initPods[key] {
		st.initBound++
	}
	st.mu.Unlock()
	st.send(st.podW, watch.Modified, np)
	return nil
}

func setCondition(s *v1.PodStatus, c v1.PodCondition) {
	for i := range s.Conditions {
		if s.Conditions[i].Type == c.Type {
			s.Conditions[i] = c
			return
		}
	}
	s.Conditions = append(s.Conditions, c)
}

// patchStatus applies a strategic merge patch of the status subresource.
func (st *benchStore) patchStatus(ns, name string, patch []byte) error {
	st.mu.Lock()
	key := podKey(ns, name)
	cur := st.pods[key]
	if cur == nil {
		st.mu.Unlock()
		return fmt.Errorf("pods %q not found", name)
	}
	old, err := json.Marshal(v1.Pod{Status: cur.Status})
	if err == nil {
		var merged []byte
		merged, err = strategicpatch.StrategicMergePatch(old, patch, &v1.Pod{})
		if err == nil {
			var p v1.Pod
			if err = json.Unmarshal(merged, &p); err == nil {
				np := cur.DeepCopy()
				np.Status = p.Status
				st.pods[key] = np
				st.mu.Unlock()
				st.send(st.podW, watch.Modified, np)
				return nil
			}
		}
	}
	st.mu.Unlock()
	return err
}

func (st *benchStore) podLW() *toolscache.ListWatch {
	return &toolscache.ListWatch{
		ListFunc: func(metav1.ListOptions) (kruntime.Object, error) {
			st.mu.Lock()
			defer st.mu.Unlock()
			l := &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
			for _, p := range st.pods {
				l.Items = append(l.Items, *p)
			}
			return l, nil
		},
		WatchFunc: func(metav1.ListOptions) (watch.Interface, error) { return st.podW, nil },
	}
}

func (st *benchStore) nodeLW() *toolscache.ListWatch {
	return &toolscache.ListWatch{
		ListFunc: func(metav1.ListOptions) (kruntime.Object, error) {
			st.mu.Lock()
			defer st.mu.Unlock()
			l := &v1.NodeList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
			for _, n := range st.nodes {
				l.Items = append(l.Items, *n)
			}
			return l, nil
		},
		WatchFunc: func(metav1.ListOptions) (watch.Interface, error) { return st.nodeW, nil },
	}
}

// reactors route the scheduler's pod writes to the store.
func (st *benchStore) reactors(client *fake.Clientset) {
	client.PrependReactor("create", "pods", func(a clienttesting.Action) (bool, kruntime.Object, error) {
		ca := a.(clienttesting.CreateAction)
		if ca.GetSubresource() != "binding" {
			return false, nil, nil
		}
		return true, nil, st.bind(ca.GetObject().(*v1.Binding))
	})
	client.PrependReactor("patch", "pods", func(a clienttesting.Action) (bool, kruntime.Object, error) {
		pa := a.(clienttesting.PatchAction)
		return true, nil, st.patchStatus(pa.GetNamespace(), pa.GetName(), pa.GetPatch())
	})
	client.PrependReactor("delete", "pods", func(a clienttesting.Action) (bool, kruntime.Object, error) {
		da := a.(clienttesting.DeleteAction)
		if !st.deletePod(da.GetNamespace(), da.GetName()) {
			return true, nil, fmt.Errorf("pods %q not found", da.GetName())
		}
		return true, nil, nil
	})
}

// ---- measurement (the same rules as bench/ksched_bench.c) ----

type benchThroughput struct {
	Average float64 `json:"average"`
	P50     float64 `json:"p50"`
	P90     float64 `json:"p90"`
	P99     float64 `json:"p99"`
	Overall float64 `json:"overall"`
	WindowS float64 `json:"window_s"`
	Samples int     `json:"samples"`
}

// pctIndex is upstream's percentile: sorted ascending, v[ceil(n*p/100)-1].
func pctIndex(n, p int) int {
	i := int(math.Ceil(float64(n*p) / 100))
	if i == 0 {
		return 0
	}
	return i - 1
}

// sampleThroughput: per-window samples as SchedulingThroughput takes them
// (empty windows merged into the next, the partial last window dropped);
// one-second windows, or duration/20 for a run shorter than 20 s.
func sampleThroughput(ts []int64, t0 int64) benchThroughput {
	var r benchThroughput
	n := len(ts)
	if n == 0 {
		return r
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	dur := ts[n-1] - t0
	if dur <= 0 {
		dur = 1
	}
	r.Overall = float64(n) / (float64(dur) / 1e9)
	w := dur / 20
	if w > int64(time.Second) {
		w = int64(time.Second)
	}
	if w < 1 {
		w = 1
	}
	nwin := int(dur / w)
	r.WindowS = float64(w) / 1e9
	cnt := make([]int, nwin)
	for _, t := range ts {
		d := t - t0
		if d < 0 {
			d = 0
		}
		if k := int(d / w); k < nwin {
			cnt[k]++
		}
	}
	var v []float64
	skipped := 0
	for _, c := range cnt {
		if c == 0 {
			skipped++
			continue
		}
		rate := float64(c) / (float64(w) * float64(skipped+1) / 1e9)
		for j := 0; j <= skipped; j++ {
			v = append(v, rate)
		}
		skipped = 0
	}
	if len(v) == 0 {
		v = append(v, r.Overall)
	}
	sort.Float64s(v)
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	r.Average = sum / float64(len(v))
	r.P50 = v[pctIndex(len(v), 50)]
	r.P90 = v[pctIndex(len(v), 90)]
	r.P99 = v[pctIndex(len(v), 99)]
	r.Samples = len(v)
	return r
}

func peakRSSMB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			f := strings.Fields(line[6:])
			if len(f) > 0 {
				kb, _ := strconv.ParseFloat(f[0], 64)
				return kb / 1024
			}
		}
	}
	return 0
}

// resetPeakRSS sets VmHWM to the current RSS, after the loader's garbage is
// returned, so that the peak is the scheduler's.
func resetPeakRSS() bool {
	runtime.GC()
	debug.FreeOSMemory()
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// cpuSeconds is the process's user+system time: with other work on the
// machine, wall-clock figures move and CPU time much less.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// ---- the run ----

func runBench(cfg *config.KubeSchedulerConfiguration, dir string) error {
	raw, err := os.ReadFile(filepath.Join(dir, "workload.json"))
	if err != nil {
		return err
	}
	var meta benchMeta
	if err := json.Unmarshal(raw, &meta); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, "workload.json"), err)
	}

	tLoad := time.Now()
	cluster, err := LoadCluster([]string{filepath.Join(dir, "cluster.yaml")})
	if err != nil {
		return err
	}
	measured, err := LoadCluster([]string{filepath.Join(dir, "measured.yaml")})
	if err != nil {
		return err
	}
	var pool *Cluster
	if meta.Churn != nil {
		if pool, err = LoadCluster([]string{filepath.Join(dir, "churn.yaml")}); err != nil {
			return err
		}
	}
	loadS := time.Since(tLoad).Seconds()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logger := klog.FromContext(ctx)

	st := &benchStore{
		pods:       map[string]*v1.Pod{},
		nodes:      map[string]*v1.Node{},
		podW:       watch.NewFakeWithChanSize(1000, false),
		nodeW:      watch.NewFakeWithChanSize(1000, false),
		initPods:   map[string]bool{},
		measuredNS: meta.MeasuredNamespace,
		allBound:   make(chan struct{}),
		target:     len(measured.Pods),
		start:      time.Now(),
	}
	for _, n := range cluster.Nodes {
		st.nodes[n.Name] = n
	}
	for _, p := range cluster.Pods {
		st.pods[podKey(p.Namespace, p.Name)] = p
		if p.Spec.NodeName == "" {
			st.initPods[podKey(p.Namespace, p.Name)] = true
		}
	}
	var objs []kruntime.Object
	for _, o := range cluster.Namespaces {
		objs = append(objs, o)
	}
	for _, o := range cluster.PriorityClasses {
		objs = append(objs, o)
	}
	for _, o := range cluster.Services {
		objs = append(objs, o)
	}
	for _, o := range measured.Namespaces {
		objs = append(objs, o)
	}
	// DRA: classes, slices, the init pods' claims and the claims the claim
	// controller made for the measured pods (they exist before them)
	for _, o := range cluster.DeviceClasses {
		objs = append(objs, o)
	}
	for _, o := range cluster.ResourceSlices {
		objs = append(objs, o)
	}
	for _, o := range cluster.ResourceClaims {
		objs = append(objs, o)
	}
	for _, o := range measured.ResourceClaims {
		objs = append(objs, o)
	}
	client := fake.NewSimpleClientset(objs...)
	st.reactors(client)
	bumpClaimVersions(client)

	// The informers: pods and nodes from the store, the rest from the
	// fake clientset. The pod informer is the one kube-scheduler builds
	// (no indexers, managedFields trimmed), over the store.
	factory := informers.NewSharedInformerFactory(client, 0)
	factory.InformerFor(&v1.Pod{}, func(kubernetes.Interface, time.Duration) toolscache.SharedIndexInformer {
		inf := toolscache.NewSharedIndexInformer(st.podLW(), &v1.Pod{}, 0, toolscache.Indexers{})
		_ = inf.SetTransform(func(obj interface{}) (interface{}, error) {
			if p, ok := obj.(*v1.Pod); ok {
				p.ManagedFields = nil
			}
			return obj, nil
		})
		return inf
	})
	factory.InformerFor(&v1.Node{}, func(kubernetes.Interface, time.Duration) toolscache.SharedIndexInformer {
		return toolscache.NewSharedIndexInformer(st.nodeLW(), &v1.Node{}, 0,
			toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	})

	// Events are built as kube-scheduler builds them; nothing sinks them.
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
	defer broadcaster.Shutdown()
	sched, err := scheduler.New(ctx, client, factory, nil, profile.NewRecorderFactory(broadcaster),
		scheduler.WithProfiles(cfg.Profiles...),
		scheduler.WithPercentageOfNodesToScore(cfg.PercentageOfNodesToScore),
		scheduler.WithPodMaxBackoffSeconds(cfg.PodMaxBackoffSeconds),
		scheduler.WithPodInitialBackoffSeconds(cfg.PodInitialBackoffSeconds),
		scheduler.WithParallelism(cfg.Parallelism),
	)
	if err != nil {
		return err
	}
	tInit := time.Now()
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("informer for %v did not sync", typ)
		}
	}
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		return err
	}
	// From here on the store holds the informer's objects, not the
	// loader's: one copy of each, as in a real scheduler.
	podIdx := factory.Core().V1().Pods().Informer().GetIndexer()
	st.mu.Lock()
	for _, o := range podIdx.List() {
		p := o.(*v1.Pod)
		st.pods[podKey(p.Namespace, p.Name)] = p
	}
	for _, o := range factory.Core().V1().Nodes().Informer().GetIndexer().List() {
		n := o.(*v1.Node)
		st.nodes[n.Name] = n
	}
	st.mu.Unlock()
	cluster = nil

	// The loop: ScheduleOne, as Run does, with the pop timed and held at
	// a gate while the measured pods are being added.
	var gate sync.RWMutex
	var held atomic.Bool
	var popTime time.Time
	popped := false
	poppedName := ""
	pop := sched.NextPod
	sched.NextPod = func(l klog.Logger) (*framework.QueuedPodInfo, error) {
		qp, err := pop(l)
		held.Store(true)
		gate.RLock()
		gate.RUnlock()
		held.Store(false)
		popped = qp != nil
		if popped {
			poppedName = qp.Pod.Namespace + "/" + qp.Pod.Name
		}
		popTime = time.Now()
		return qp, err
	}
	// the pods attempted in the measured phase: attempts per pod, side by
	// side with ksched's
	attempted := map[string]struct{}{}
	var lat []int64
	latMeasuring := false
	var latMu sync.Mutex
	sched.SchedulingQueue.Run(logger)
	if sched.APIDispatcher != nil {
		sched.APIDispatcher.Run(logger)
	}
	loopDone := make(chan struct{})
	go func() {
		defer close(loopDone)
		for ctx.Err() == nil {
			popped = false
			sched.ScheduleOne(ctx)
			if popped {
				d := int64(time.Since(popTime))
				latMu.Lock()
				if latMeasuring {
					lat = append(lat, d)
					attempted[poppedName] = struct{}{}
				}
				latMu.Unlock()
			}
		}
	}()

	// Pending init pods first, not measured.
	for {
		st.mu.Lock()
		done := st.initBound >= len(st.initPods)
		st.mu.Unlock()
		if done {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	initS := time.Since(tInit).Seconds()
	rssReset := resetPeakRSS()

	// Every measured pod enters the queue, then the clock starts.
	gate.Lock()
	for _, p := range measured.Pods {
		st.addPod(p)
	}
	measured = nil
	for {
		pods, _ := sched.SchedulingQueue.PendingPods()
		n := len(pods)
		if held.Load() {
			n++ // popped already, held at the gate
		}
		if n >= st.target {
			break
		}
		time.Sleep(time.Millisecond)
	}
	latMu.Lock()
	latMeasuring = true
	latMu.Unlock()
	cpu0 := cpuSeconds()
	st.mu.Lock()
	st.measuring = true
	t0 := st.mono()
	st.mu.Unlock()
	gate.Unlock()
	// KSCHEDREF_CPUPROFILE=FILE: a pprof CPU profile of the measured phase.
	if f := os.Getenv("KSCHEDREF_CPUPROFILE"); f != "" {
		if fh, err := os.Create(f); err == nil {
			if pprof.StartCPUProfile(fh) == nil {
				defer fh.Close()
				defer pprof.StopCPUProfile()
			}
		}
	}

	// The churn op, on a ticker as upstream's runChurnOp.
	churnTicks := 0
	churnExhausted := false
	churnStop := make(chan struct{})
	churnDone := make(chan struct{})
	if meta.Churn != nil && pool != nil {
		go func() {
			defer close(churnDone)
			ch := meta.Churn
			number := ch.Number
			if number < 1 {
				number = 1
			}
			interval := time.Duration(ch.IntervalMS) * time.Millisecond
			if interval <= 0 {
				interval = 500 * time.Millisecond
			}
			var nextNode, nextPod, nextSvc int
			type slot struct {
				kind string
				ns   string
				name string
			}
			slots := make([][]slot, len(ch.Kinds))
			for i := range slots {
				slots[i] = make([]slot, number)
			}
			create := func(kind string) (slot, bool) {
				switch kind {
				case "Node":
					if nextNode >= len(pool.Nodes) {
						return slot{}, false
					}
					n := pool.Nodes[nextNode]
					nextNode++
					st.addNode(n)
					return slot{kind, "", n.Name}, true
				case "Service":
					if nextSvc >= len(pool.Services) {
						return slot{}, false
					}
					s := pool.Services[nextSvc]
					nextSvc++
					if _, err := client.CoreV1().Services(s.Namespace).Create(ctx, s, metav1.CreateOptions{}); err != nil {
						return slot{}, false
					}
					return slot{kind, s.Namespace, s.Name}, true
				default:
					if nextPod >= len(pool.Pods) {
						return slot{}, false
					}
					p := pool.Pods[nextPod]
					nextPod++
					st.addPod(p)
					return slot{kind, p.Namespace, p.Name}, true
				}
			}
			del := func(s slot) {
				switch s.kind {
				case "Node":
					st.deleteNode(s.name)
				case "Service":
					_ = client.CoreV1().Services(s.ns).Delete(ctx, s.name, metav1.DeleteOptions{})
				default:
					st.deletePod(s.ns, s.name)
				}
			}
			ticker := time.NewTicker(interval)
			defer ticker.Stop()
			count := 0
			for {
				select {
				case <-churnStop:
					return
				case <-ticker.C:
					for i, kind := range ch.Kinds {
						if ch.Mode != "recreate" {
							if _, ok := create(kind); !ok {
								churnExhausted = true
							}
							continue
						}
						s := &slots[i][count%number]
						if s.kind != "" {
							del(*s)
							*s = slot{}
						} else if ns, ok := create(kind); ok {
							*s = ns
						} else {
							churnExhausted = true
						}
					}
					count++
					churnTicks = count
				}
			}
		}()
	} else {
		close(churnDone)
	}

	// Until every measured pod is bound (or nothing moves for a minute).
	var runErr string
	last, lastAt := 0, time.Now()
	for waiting := true; waiting; {
		select {
		case <-st.allBound:
			waiting = false
		case <-time.After(100 * time.Millisecond):
			st.mu.Lock()
			n := len(st.binds)
			st.mu.Unlock()
			if n != last {
				last, lastAt = n, time.Now()
			} else if time.Since(lastAt) > time.Minute {
				runErr = fmt.Sprintf("no measured pod bound for 60 s: %d of %d bound", n, st.target)
				waiting = false
			}
		}
	}
	st.mu.Lock()
	end := st.mono()
	st.measuring = false
	binds := append([]int64(nil), st.binds...)
	st.mu.Unlock()
	latMu.Lock()
	latMeasuring = false
	lats := append([]int64(nil), lat...)
	nAttempted := len(attempted)
	latMu.Unlock()
	cpuS := cpuSeconds() - cpu0
	rss := peakRSSMB()
	close(churnStop)
	<-churnDone

	tp := sampleThroughput(binds, t0)
	sort.Slice(lats, func(i, j int) bool { return lats[i] < lats[j] })
	var l50, l99 float64
	if len(lats) > 0 {
		l50 = float64(lats[pctIndex(len(lats), 50)]) / 1e6
		l99 = float64(lats[pctIndex(len(lats), 99)]) / 1e6
	}
	out := map[string]any{
		"workload":       meta.Workload,
		"scheduler":      "upstream",
		"nodes":          meta.Nodes,
		"init_pods":      meta.InitPods,
		"measured_pods":  meta.MeasuredPods,
		"scheduled":      len(binds),
		"attempts":       len(lats),
		"attempted_pods": nAttempted,
		"duration_s":     round(float64(end-t0)/1e9, 6),
		"cpu_s":          round(cpuS, 3),
		"throughput": map[string]any{
			"average": round(tp.Average, 1), "p50": round(tp.P50, 1), "p90": round(tp.P90, 1),
			"p99": round(tp.P99, 1), "overall": round(tp.Overall, 1), "window_s": round(tp.WindowS, 6),
			"samples": tp.Samples,
		},
		"latency_ms":  map[string]any{"p50": round(l50, 4), "p99": round(l99, 4), "attempts": len(lats)},
		"peak_rss_mb": round(rss, 1),
		"rss_reset":   rssReset,
		"load_s":      round(loadS, 3),
		"init_s":      round(initS, 3),
		"churn_ticks": churnTicks,
	}
	if churnExhausted {
		out["churn_exhausted"] = true
	}
	if runErr != "" {
		out["error"] = runErr
	}
	st.stopping.Store(true)
	cancel()
	sched.SchedulingQueue.Close()
	if sched.APIDispatcher != nil {
		sched.APIDispatcher.Close()
	}
	<-loopDone
	enc, err := json.Marshal(out)
	if err != nil {
		return err
	}
	fmt.Println(string(enc))
	if runErr != "" {
		return fmt.Errorf("%s", runErr)
	}
	return nil
}
