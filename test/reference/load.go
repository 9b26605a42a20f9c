package main

// Loading of cluster manifests: files and directories, multi-document YAML or
// JSON, List wrappers, API-server defaulting and the Priority admission step.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	resourcev1alpha3 "k8s.io/api/resource/v1alpha3"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	_ "k8s.io/kubernetes/pkg/apis/resource/install"
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
	"sigs.k8s.io/yaml"
)

// Cluster is everything read from the input manifests, in input order.
type Cluster struct {
	Nodes           []*v1.Node
	Pods            []*v1.Pod // non-terminal pods only, input order
	Namespaces      []*v1.Namespace
	PriorityClasses []*schedulingv1.PriorityClass
	PVs             []*v1.PersistentVolume
	PVCs            []*v1.PersistentVolumeClaim
	StorageClasses  []*storagev1.StorageClass
	CSINodes        []*storagev1.CSINode
	CSIDrivers      []*storagev1.CSIDriver
	CSICapacities   []*storagev1.CSIStorageCapacity
	VolumeAttach    []*storagev1.VolumeAttachment
	PDBs            []*policyv1.PodDisruptionBudget
	Services        []*v1.Service
	ReplicaSets     []*appsv1.ReplicaSet
	StatefulSets    []*appsv1.StatefulSet
	RCs             []*v1.ReplicationController
	DeviceClasses   []*resourcev1.DeviceClass
	ResourceClaims  []*resourcev1.ResourceClaim
	ClaimTemplates  []*resourcev1.ResourceClaimTemplate
	ResourceSlices  []*resourcev1.ResourceSlice
	TaintRules      []*resourcev1alpha3.DeviceTaintRule

	// Seq is the input order of every pod, keyed by namespace/name.
	Seq map[string]int
}

// manifestFiles expands the command line paths into the ordered list of files.
func manifestFiles(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		var files []string
		err = filepath.WalkDir(p, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				return nil
			}
			switch strings.ToLower(filepath.Ext(path)) {
			case ".yaml", ".yml", ".json":
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		sort.Strings(files)
		out = append(out, files...)
	}
	return out, nil
}

// LoadCluster reads every manifest and returns the defaulted objects.
func LoadCluster(paths []string) (*Cluster, error) {
	files, err := manifestFiles(paths)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Seq: map[string]int{}}
	for _, f := range files {
		if err := c.loadFile(f); err != nil {
			return nil, err
		}
	}
	builtinPriorityClasses(c)
	if err := c.finish(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Cluster) loadFile(path string) error {
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	r := utilyaml.NewYAMLReader(bufio.NewReaderSize(fh, 1<<20))
	for doc := 1; ; doc++ {
		data, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: document %d: %w", path, doc, err)
		}
		js, err := yaml.YAMLToJSON(data)
		if err != nil {
			return fmt.Errorf("%s: document %d: %w", path, doc, err)
		}
		js = bytes.TrimSpace(js)
		if len(js) == 0 || string(js) == "null" {
			continue
		}
		if err := c.decode(js, fmt.Sprintf("%s: document %d", path, doc)); err != nil {
			return err
		}
	}
}

var deserializer = clientscheme.Codecs.UniversalDeserializer()

func (c *Cluster) decode(js []byte, where string) error {
	obj, _, err := deserializer.Decode(js, nil, nil)
	if err != nil {
		if runtime.IsNotRegisteredError(err) {
			return nil // unknown kind: ignored
		}
		return fmt.Errorf("%s: %w", where, err)
	}
	// resource.k8s.io in an older version: as the API server serves it, v1
	// (DeviceTaintRule exists in v1alpha3 only)
	if gvk := obj.GetObjectKind().GroupVersionKind(); gvk.Group == "resource.k8s.io" && gvk.Version != "v1" &&
		gvk.Kind != "DeviceTaintRule" {
		legacyscheme.Scheme.Default(obj)
		internal, err := legacyscheme.Scheme.ConvertToVersion(obj, schema.GroupVersion{Group: gvk.Group, Version: runtime.APIVersionInternal})
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		conv, err := legacyscheme.Scheme.ConvertToVersion(internal, resourcev1.SchemeGroupVersion)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		obj = conv
	}
	if l, ok := obj.(*v1.List); ok {
		for i, item := range l.Items {
			raw := item.Raw
			if len(raw) == 0 && item.Object != nil {
				continue
			}
			if err := c.decode(raw, fmt.Sprintf("%s: item %d", where, i)); err != nil {
				return err
			}
		}
		return nil
	}
	if meta.IsListType(obj) {
		items, err := meta.ExtractList(obj)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		for _, it := range items {
			c.add(it)
		}
		return nil
	}
	c.add(obj)
	return nil
}

func defaultNamespace(m *metav1.ObjectMeta) {
	if m.Namespace == "" {
		m.Namespace = metav1.NamespaceDefault
	}
}

func (c *Cluster) add(obj runtime.Object) {
	switch o := obj.(type) {
	case *v1.Node:
		c.Nodes = append(c.Nodes, o)
	case *v1.Pod:
		defaultNamespace(&o.ObjectMeta)
		c.Pods = append(c.Pods, o)
	case *v1.Namespace:
		c.Namespaces = append(c.Namespaces, o)
	case *schedulingv1.PriorityClass:
		c.PriorityClasses = append(c.PriorityClasses, o)
	case *v1.PersistentVolume:
		c.PVs = append(c.PVs, o)
	case *v1.PersistentVolumeClaim:
		defaultNamespace(&o.ObjectMeta)
		c.PVCs = append(c.PVCs, o)
	case *storagev1.StorageClass:
		c.StorageClasses = append(c.StorageClasses, o)
	case *storagev1.CSINode:
		c.CSINodes = append(c.CSINodes, o)
	case *storagev1.CSIDriver:
		c.CSIDrivers = append(c.CSIDrivers, o)
	case *storagev1.CSIStorageCapacity:
		defaultNamespace(&o.ObjectMeta)
		c.CSICapacities = append(c.CSICapacities, o)
	case *storagev1.VolumeAttachment:
		c.VolumeAttach = append(c.VolumeAttach, o)
	case *policyv1.PodDisruptionBudget:
		defaultNamespace(&o.ObjectMeta)
		c.PDBs = append(c.PDBs, o)
	case *v1.Service:
		defaultNamespace(&o.ObjectMeta)
		c.Services = append(c.Services, o)
	case *appsv1.ReplicaSet:
		defaultNamespace(&o.ObjectMeta)
		c.ReplicaSets = append(c.ReplicaSets, o)
	case *appsv1.StatefulSet:
		defaultNamespace(&o.ObjectMeta)
		c.StatefulSets = append(c.StatefulSets, o)
	case *v1.ReplicationController:
		defaultNamespace(&o.ObjectMeta)
		c.RCs = append(c.RCs, o)
	case *resourcev1.DeviceClass:
		c.DeviceClasses = append(c.DeviceClasses, o)
	case *resourcev1.ResourceClaim:
		defaultNamespace(&o.ObjectMeta)
		c.ResourceClaims = append(c.ResourceClaims, o)
	case *resourcev1.ResourceClaimTemplate:
		defaultNamespace(&o.ObjectMeta)
		c.ClaimTemplates = append(c.ClaimTemplates, o)
	case *resourcev1.ResourceSlice:
		c.ResourceSlices = append(c.ResourceSlices, o)
	case *resourcev1alpha3.DeviceTaintRule:
		c.TaintRules = append(c.TaintRules, o)
	default:
		// other kinds are ignored
		return
	}
	// API-server defaulting (the same defaulting functions the API server runs).
	legacyscheme.Scheme.Default(obj)
	if m, err := meta.Accessor(obj); err == nil {
		if m.GetUID() == "" {
			key := m.GetName()
			if m.GetNamespace() != "" {
				key = m.GetNamespace() + "/" + key
			}
			m.SetUID(types.UID("uid-" + kindOf(obj) + "-" + key))
		}
		// every object read from an API server has one; the volume binder's
		// assume cache needs it
		if m.GetResourceVersion() == "" {
			m.SetResourceVersion("1")
		}
	}
}

func kindOf(obj runtime.Object) string {
	gvks, _, err := clientscheme.Scheme.ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		return "object"
	}
	return strings.ToLower(gvks[0].Kind)
}

// finish validates names, drops terminal pods and applies Priority admission.
func (c *Cluster) finish() error {
	seenNodes := map[string]bool{}
	for _, n := range c.Nodes {
		if n.Name == "" {
			return fmt.Errorf("a Node has no metadata.name")
		}
		if seenNodes[n.Name] {
			return fmt.Errorf("duplicate Node %q", n.Name)
		}
		seenNodes[n.Name] = true
	}
	var pods []*v1.Pod
	seq := 0
	for _, p := range c.Pods {
		if p.Name == "" {
			return fmt.Errorf("a Pod in namespace %q has no metadata.name", p.Namespace)
		}
		key := p.Namespace + "/" + p.Name
		if _, dup := c.Seq[key]; dup {
			return fmt.Errorf("duplicate Pod %q", key)
		}
		c.Seq[key] = seq
		seq++
		// kube-scheduler's informers never see terminal pods.
		if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		if err := c.admitPriority(p); err != nil {
			return fmt.Errorf("pod %q: %w", key, err)
		}
		applyCreateMutations(p)
		pods = append(pods, p)
	}
	c.Pods = pods
	c.generateClaims()
	return nil
}

// admitPriority does what the Priority admission plugin does on pod creation,
// for pods whose spec.priority is not set yet.
func (c *Cluster) admitPriority(p *v1.Pod) error {
	if p.Spec.Priority != nil {
		return nil
	}
	var prio int32
	var policy *v1.PreemptionPolicy
	if p.Spec.PriorityClassName == "" {
		var def *schedulingv1.PriorityClass
		for _, pc := range c.PriorityClasses {
			if pc.GlobalDefault && (def == nil || def.Value > pc.Value) {
				def = pc
			}
		}
		if def != nil {
			p.Spec.PriorityClassName = def.Name
			prio = def.Value
			policy = def.PreemptionPolicy
		} else {
			lower := v1.PreemptLowerPriority
			policy = &lower
		}
	} else {
		var found *schedulingv1.PriorityClass
		for _, pc := range c.PriorityClasses {
			if pc.Name == p.Spec.PriorityClassName {
				found = pc
			}
		}
		if found == nil {
			return fmt.Errorf("no PriorityClass with name %v was found", p.Spec.PriorityClassName)
		}
		prio = found.Value
		policy = found.PreemptionPolicy
	}
	p.Spec.Priority = &prio
	if policy != nil {
		if p.Spec.PreemptionPolicy != nil && *p.Spec.PreemptionPolicy != *policy {
			return fmt.Errorf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name", *p.Spec.PreemptionPolicy, *policy)
		}
		pol := *policy
		p.Spec.PreemptionPolicy = &pol
	}
	return nil
}

// applyCreateMutations does what the API server's pod strategy does on
// creation with the v1.34 default feature gates: matchLabelKeys and
// mismatchLabelKeys of pod (anti-)affinity terms, and matchLabelKeys of
// topology spread constraints, are merged into the label selectors.
// Applying it to an already-mutated pod only repeats requirements.
func applyCreateMutations(p *v1.Pod) {
	add := func(sel *metav1.LabelSelector, keys []string, op metav1.LabelSelectorOperator) {
		for _, k := range keys {
			if v, ok := p.Labels[k]; ok {
				sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{Key: k, Operator: op, Values: []string{v}})
			}
		}
	}
	term := func(t *v1.PodAffinityTerm) {
		if (len(t.MatchLabelKeys) == 0 && len(t.MismatchLabelKeys) == 0) || t.LabelSelector == nil {
			return
		}
		add(t.LabelSelector, t.MatchLabelKeys, metav1.LabelSelectorOpIn)
		add(t.LabelSelector, t.MismatchLabelKeys, metav1.LabelSelectorOpNotIn)
	}
	if a := p.Spec.Affinity; a != nil {
		if pa := a.PodAffinity; pa != nil {
			for i := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
				term(&pa.PreferredDuringSchedulingIgnoredDuringExecution[i].PodAffinityTerm)
			}
			for i := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
				term(&pa.RequiredDuringSchedulingIgnoredDuringExecution[i])
			}
		}
		if pa := a.PodAntiAffinity; pa != nil {
			for i := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
				term(&pa.PreferredDuringSchedulingIgnoredDuringExecution[i].PodAffinityTerm)
			}
			for i := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
				term(&pa.RequiredDuringSchedulingIgnoredDuringExecution[i])
			}
		}
	}
	for i := range p.Spec.TopologySpreadConstraints {
		c := &p.Spec.TopologySpreadConstraints[i]
		if len(c.MatchLabelKeys) == 0 || c.LabelSelector == nil {
			continue
		}
		add(c.LabelSelector, c.MatchLabelKeys, metav1.LabelSelectorOpIn)
	}
}
