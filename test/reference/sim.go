package main

// Construction of the simulated cluster around the upstream framework:
// fake clientset, informers, scheduler cache + snapshot, nominator, profiles.

import (
	"context"
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"
	"k8s.io/utils/ptr"
)

// SimNow stands for "now": the start time given to running pods that have no
// status.startTime and to pods bound during the simulation.
var SimNow = metav1.NewTime(time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC))

// podState is the harness's view of one pod.
type podState struct {
	pod     *v1.Pod
	key     string
	seq     int
	pending bool // unassigned and belongs to a profile
	// unassigned, belongs to a profile, being deleted: never attempted,
	// but the scheduling queue took it in (and its nomination)
	terminating bool
	deleted     bool
}

// Profile is one built framework plus the plugin instances it created.
type Profile struct {
	Name      string
	Framework framework.Framework
	Plugins   map[string]framework.Plugin
	Weights   map[string]int32
	ScoreList []string // score plugins in profile order
}

// Sim holds the whole simulated scheduler.
type Sim struct {
	ctx       context.Context
	logger    klog.Logger
	client    kubernetes.Interface
	factory   informers.SharedInformerFactory
	podIdx    toolscache.Indexer
	cache     internalcache.Cache
	snapshot  *internalcache.Snapshot
	nominator *nominator
	profiles  map[string]*Profile
	victims   *victimRecorder

	pods          map[string]*podState // by namespace/name
	byUID         map[string]*podState
	trace         Trace
	config        *config.KubeSchedulerConfiguration
	dra           framework.SharedDRAManager
	claimInformer toolscache.SharedIndexInformer
	nextStart     int // upstream's nextStartNodeIndex
	// the FitError of the last attempt (nil: scheduled or an error), whose
	// diagnosis names the plugins the event replay hands to the queue
	lastFit *framework.FitError
}

// builtinPriorityClasses are created by every kube-apiserver.
func builtinPriorityClasses(c *Cluster) {
	have := map[string]bool{}
	for _, pc := range c.PriorityClasses {
		have[pc.Name] = true
	}
	lower := v1.PreemptLowerPriority
	for _, b := range []struct {
		name  string
		value int32
	}{{"system-node-critical", 2000001000}, {"system-cluster-critical", 2000000000}} {
		if !have[b.name] {
			pol := lower
			c.PriorityClasses = append(c.PriorityClasses, &schedulingv1.PriorityClass{
				ObjectMeta:       metav1.ObjectMeta{Name: b.name, UID: types.UID("uid-priorityclass-" + b.name)},
				Value:            b.value,
				PreemptionPolicy: &pol,
			})
		}
	}
}

// NewSim builds everything. cfg must already be defaulted and validated.
func NewSim(ctx context.Context, cfg *config.KubeSchedulerConfiguration, c *Cluster) (*Sim, error) {
	logger := klog.FromContext(ctx)
	metrics.Register()

	s := &Sim{
		ctx:      ctx,
		logger:   logger,
		profiles: map[string]*Profile{},
		victims:  &victimRecorder{},
		pods:     map[string]*podState{},
		byUID:    map[string]*podState{},
		config:   cfg,
	}
	s.trace.Format = traceFormat
	s.trace.Attempts = []Attempt{}

	// Pods: status.startTime stands in for "now" when missing.
	for _, p := range c.Pods {
		if p.Spec.NodeName != "" && p.Status.StartTime == nil {
			t := SimNow
			p.Status.StartTime = &t
		}
	}

	// Fake API server holding every object.
	var objs []runtime.Object
	for _, o := range c.Nodes {
		objs = append(objs, o)
	}
	for _, o := range c.Pods {
		objs = append(objs, o)
	}
	for _, o := range c.Namespaces {
		objs = append(objs, o)
	}
	for _, o := range c.PriorityClasses {
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
	for _, o := range c.PDBs {
		objs = append(objs, o)
	}
	for _, o := range c.Services {
		objs = append(objs, o)
	}
	for _, o := range c.ReplicaSets {
		objs = append(objs, o)
	}
	for _, o := range c.StatefulSets {
		objs = append(objs, o)
	}
	for _, o := range c.RCs {
		objs = append(objs, o)
	}
	for _, o := range c.DeviceClasses {
		objs = append(objs, o)
	}
	for _, o := range c.ResourceClaims {
		objs = append(objs, o)
	}
	for _, o := range c.ClaimTemplates {
		objs = append(objs, o)
	}
	for _, o := range c.ResourceSlices {
		objs = append(objs, o)
	}
	for _, o := range c.TaintRules {
		objs = append(objs, o)
	}
	client := fake.NewSimpleClientset(objs...)
	bumpClaimVersions(client)
	s.client = client
	podsResource := v1.SchemeGroupVersion.WithResource("pods")
	client.PrependReactor("patch", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		pa, ok := a.(clienttesting.PatchAction)
		if !ok || pa.GetSubresource() != "status" || !s.victims.keepNominations() {
			return false, nil, nil
		}
		obj, err := client.Tracker().Get(podsResource, pa.GetNamespace(), pa.GetName())
		return true, obj, err
	})

	// Informers. The pod informer is never fed by the (asynchronous) watch:
	// the harness writes its indexer directly, so what plugins read is exactly
	// the harness's state at every moment.
	factory := informers.NewSharedInformerFactory(client, 0)
	podInformer := factory.InformerFor(&v1.Pod{}, func(kubernetes.Interface, time.Duration) toolscache.SharedIndexInformer {
		lw := &toolscache.ListWatch{
			ListFunc: func(metav1.ListOptions) (runtime.Object, error) { return &v1.PodList{}, nil },
			WatchFunc: func(metav1.ListOptions) (watch.Interface, error) {
				return watch.NewFake(), nil
			},
		}
		return toolscache.NewSharedIndexInformer(lw, &v1.Pod{}, 0,
			toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	})
	s.factory = factory
	// Request every informer the plugins may list from, so that they all start.
	factory.Core().V1().Nodes().Informer()
	factory.Core().V1().Namespaces().Informer()
	factory.Core().V1().PersistentVolumes().Informer()
	factory.Core().V1().PersistentVolumeClaims().Informer()
	factory.Core().V1().Services().Informer()
	factory.Core().V1().ReplicationControllers().Informer()
	factory.Apps().V1().ReplicaSets().Informer()
	factory.Apps().V1().StatefulSets().Informer()
	factory.Policy().V1().PodDisruptionBudgets().Informer()
	factory.Scheduling().V1().PriorityClasses().Informer()
	factory.Storage().V1().StorageClasses().Informer()
	factory.Storage().V1().CSINodes().Informer()
	factory.Storage().V1().CSIDrivers().Informer()
	factory.Storage().V1().CSIStorageCapacities().Informer()
	factory.Storage().V1().VolumeAttachments().Informer()
	factory.Resource().V1().DeviceClasses().Informer()

	// DRA: the claims' assume cache, the slice tracker and the manager the
	// scheduler shares between its profiles, as kube-scheduler builds them.
	claimCache := assumecache.NewAssumeCache(logger, factory.Resource().V1().ResourceClaims().Informer(), "ResourceClaim", "", nil)
	trackerOpts := resourceslicetracker.Options{
		EnableDeviceTaints:       utilfeature.DefaultFeatureGate.Enabled(features.DRADeviceTaints),
		EnableConsumableCapacity: utilfeature.DefaultFeatureGate.Enabled(features.DRAConsumableCapacity),
		SliceInformer:            factory.Resource().V1().ResourceSlices(),
		KubeClient:               client,
	}
	if trackerOpts.EnableDeviceTaints {
		// as kube-scheduler: the rules and classes the tracker patches slices with
		trackerOpts.TaintInformer = factory.Resource().V1alpha3().DeviceTaintRules()
		trackerOpts.ClassInformer = factory.Resource().V1().DeviceClasses()
	}
	sliceTracker, err := resourceslicetracker.StartTracker(ctx, trackerOpts)
	if err != nil {
		return nil, err
	}
	draManager := dynamicresources.NewDRAManager(ctx, claimCache, sliceTracker, factory)
	s.dra = draManager
	s.claimInformer = factory.Resource().V1().ResourceClaims().Informer()

	// Scheduler cache and snapshot.
	s.cache = internalcache.New(ctx, 0, nil)
	s.snapshot = internalcache.NewEmptySnapshot()
	s.nominator = newNominator(func(p *v1.Pod) bool {
		ps := s.pods[p.Namespace+"/"+p.Name]
		return ps != nil && !ps.deleted && ps.pod.Spec.NodeName == ""
	})

	// Profiles.
	waitingPods := frameworkruntime.NewWaitingPodsMap()
	for i := range cfg.Profiles {
		prof := &cfg.Profiles[i]
		prof.PercentageOfNodesToScore = ptr.To[int32](100)
		p := &Profile{Name: prof.SchedulerName, Plugins: map[string]framework.Plugin{}, Weights: map[string]int32{}}
		registry := frameworkplugins.NewInTreeRegistry()
		for name, factoryFn := range registry {
			name, factoryFn := name, factoryFn
			registry[name] = func(ctx context.Context, args runtime.Object, h framework.Handle) (framework.Plugin, error) {
				pl, err := factoryFn(ctx, args, h)
				if err == nil {
					p.Plugins[name] = pl
				}
				return pl, err
			}
		}
		fw, err := frameworkruntime.NewFramework(ctx, registry, prof,
			frameworkruntime.WithClientSet(client),
			frameworkruntime.WithInformerFactory(factory),
			frameworkruntime.WithSnapshotSharedLister(s.snapshot),
			frameworkruntime.WithPodNominator(s.nominator),
			frameworkruntime.WithEventRecorder(&events.FakeRecorder{}),
			frameworkruntime.WithParallelism(1),
			frameworkruntime.WithWaitingPods(waitingPods),
			frameworkruntime.WithSharedDRAManager(draManager),
			frameworkruntime.WithLogger(logger),
		)
		if err != nil {
			return nil, fmt.Errorf("profile %q: %w", prof.SchedulerName, err)
		}
		p.Framework = fw
		for _, sp := range fw.ListPlugins().Score.Enabled {
			p.ScoreList = append(p.ScoreList, sp.Name)
			p.Weights[sp.Name] = sp.Weight
		}
		for _, pl := range p.Plugins {
			if dp, ok := pl.(*defaultpreemption.DefaultPreemption); ok {
				installDeterministicPreemption(dp, fw, s.victims)
			}
		}
		s.profiles[prof.SchedulerName] = p
	}

	// Start the informers (the pod informer syncs an empty list) and wait.
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return nil, fmt.Errorf("informer for %v did not sync", typ)
		}
	}
	// Event handlers registered by plugins (volume binding's assume caches)
	// receive the initial objects asynchronously: wait until a handler added
	// last has seen them, then a little longer.
	for _, inf := range []toolscache.SharedIndexInformer{
		factory.Core().V1().PersistentVolumes().Informer(),
		factory.Core().V1().PersistentVolumeClaims().Informer(),
		factory.Resource().V1().ResourceClaims().Informer(),
		factory.Resource().V1().ResourceSlices().Informer(),
	} {
		reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{})
		if err != nil {
			return nil, err
		}
		for !reg.HasSynced() {
			time.Sleep(time.Millisecond)
		}
	}
	// the slice tracker patches slices with DeviceTaintRules as their
	// events arrive: wait until it has seen them all
	for !sliceTracker.HasSynced() {
		time.Sleep(time.Millisecond)
	}
	if len(c.PVs)+len(c.PVCs)+len(c.ResourceClaims)+len(c.ResourceSlices)+len(c.TaintRules) > 0 {
		time.Sleep(50 * time.Millisecond)
	}
	s.podIdx = podInformer.GetIndexer()

	// Cluster state.
	for _, n := range c.Nodes {
		s.cache.AddNode(logger, n)
	}
	for _, p := range c.Pods {
		key := p.Namespace + "/" + p.Name
		ps := &podState{pod: p, key: key, seq: c.Seq[key]}
		s.pods[key] = ps
		s.byUID[string(p.UID)] = ps
		if err := s.podIdx.Add(p); err != nil {
			return nil, err
		}
		if p.Spec.NodeName != "" {
			if err := s.cache.AddPod(logger, p); err != nil {
				return nil, fmt.Errorf("pod %s: %w", key, err)
			}
			continue
		}
		if _, ok := s.profiles[p.Spec.SchedulerName]; ok {
			if p.DeletionTimestamp != nil {
				ps.terminating = true
			} else {
				ps.pending = true
			}
		}
	}
	return s, nil
}

// pendingOrder returns the pending pods in the reference order.
func (s *Sim) pendingOrder() []*podState { return s.queuedOrder(false) }

// queuedOrder returns the pending pods, and with terminating the unassigned
// pods being deleted too, in the reference order.
func (s *Sim) queuedOrder(terminating bool) []*podState {
	var list []*podState
	for _, ps := range s.pods {
		if (ps.pending || (terminating && ps.terminating)) && !ps.deleted && ps.pod.Spec.NodeName == "" {
			list = append(list, ps)
		}
	}
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i], list[j]
		pa, pb := podPriority(a.pod), podPriority(b.pod)
		if pa != pb {
			return pa > pb
		}
		ta, tb := a.pod.CreationTimestamp, b.pod.CreationTimestamp
		if !ta.Equal(&tb) {
			if ta.IsZero() {
				return true
			}
			if tb.IsZero() {
				return false
			}
			return ta.Before(&tb)
		}
		return a.seq < b.seq
	})
	return list
}

func podPriority(p *v1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}
