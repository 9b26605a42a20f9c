package main

// Dynamic Resource Allocation in the reference harness: the resourceclaim
// controller's work before scheduling (claims from templates), with the
// names ksched derives (docs/reference-harness.md, "DRA").

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"k8s.io/apimachinery/pkg/util/sets"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/kubernetes/pkg/features"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// claimName is the controller's generateName (pod-entry-, shortened
// proportionally beyond 57 characters) with a 5-character suffix derived
// from namespace, pod and entry (FNV-1a over "ns/pod/entry", digits in
// the API server's random alphabet), as src/api/claim_controller.c does.
func claimName(pod *v1.Pod, entry string) string {
	base := pod.Name + "-" + entry + "-"
	if len(base) > 57 {
		gl := len(base)
		base = pod.Name[:len(pod.Name)*57/gl] + "-" + entry[:len(entry)*57/gl]
	}
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	h := uint64(1469598103934665603)
	for _, b := range []byte(pod.Namespace + "/" + pod.Name + "/" + entry) {
		h = (h ^ uint64(b)) * 1099511628211
	}
	suffix := make([]byte, 5)
	for i := range suffix {
		suffix[i] = alphabet[h%27]
		h /= 27
	}
	return base + string(suffix)
}

// generateClaims creates, for every pod entry naming a ResourceClaimTemplate
// without a claim yet, the claim kube-controller-manager would create, and
// records it in the pod's status.
func (c *Cluster) generateClaims() {
	for _, p := range c.Pods {
		for _, pc := range p.Spec.ResourceClaims {
			if pc.ResourceClaimTemplateName == nil || pc.ResourceClaimName != nil {
				continue
			}
			done := false
			for _, st := range p.Status.ResourceClaimStatuses {
				if st.Name == pc.Name {
					done = true
				}
			}
			if done {
				continue
			}
			var tmpl *resourcev1.ResourceClaimTemplate
			for _, t := range c.ClaimTemplates {
				if t.Namespace == p.Namespace && t.Name == *pc.ResourceClaimTemplateName {
					tmpl = t
				}
			}
			if tmpl == nil {
				continue
			}
			name := claimName(p, pc.Name)
			ann := map[string]string{}
			for k, v := range tmpl.Spec.ObjectMeta.Annotations {
				ann[k] = v
			}
			ann["resource.kubernetes.io/pod-claim-name"] = pc.Name
			claim := &resourcev1.ResourceClaim{
				ObjectMeta: metav1.ObjectMeta{
					Name:      name,
					Namespace: p.Namespace,
					UID:       types.UID(fmt.Sprintf("uid-resourceclaim-%s/%s", p.Namespace, name)),
					OwnerReferences: []metav1.OwnerReference{{
						APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID,
						Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
					}},
					Annotations:     ann,
					Labels:          tmpl.Spec.ObjectMeta.Labels,
					ResourceVersion: "1",
				},
				Spec: *tmpl.Spec.Spec.DeepCopy(),
			}
			c.ResourceClaims = append(c.ResourceClaims, claim)
			p.Status.ResourceClaimStatuses = append(p.Status.ResourceClaimStatuses,
				v1.PodResourceClaimStatus{Name: pc.Name, ResourceClaimName: ptr.To(name)})
		}
	}
}

// devices lists what the pod's claims hold (the trace's "devices").
func (s *Sim) devices(pod *v1.Pod) []string {
	var out []string
	for i := range pod.Spec.ResourceClaims {
		name, _, err := resourceclaim.Name(pod, &pod.Spec.ResourceClaims[i])
		if err != nil || name == nil {
			continue
		}
		claim, err := s.dra.ResourceClaims().Get(pod.Namespace, *name)
		if err != nil || claim.Status.Allocation == nil {
			continue
		}
		for _, r := range claim.Status.Allocation.Devices.Results {
			out = append(out, fmt.Sprintf("%s/%s: %s %s/%s/%s", claim.Namespace, claim.Name, r.Request, r.Driver, r.Pool, r.Device))
		}
	}
	return out
}

// syncClaims waits until the claim informer (behind DRA's assume cache)
// holds every claim the fake API server holds, at the same resourceVersion:
// DynamicResources writes claims (PostFilter deallocations, PreBind) and the
// next attempt must see them, as ksched's memory backend delivers changes
// at once.
func (s *Sim) syncClaims(ctx context.Context) error {
	if s.claimInformer == nil {
		return nil
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		list, err := s.client.ResourceV1().ResourceClaims("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		synced := true
		for i := range list.Items {
			c := &list.Items[i]
			obj, ok, err := s.claimInformer.GetStore().GetByKey(c.Namespace + "/" + c.Name)
			if err != nil || !ok || obj.(*resourcev1.ResourceClaim).ResourceVersion != c.ResourceVersion {
				synced = false
				break
			}
		}
		if synced {
			return s.syncAllocatedDevices(list.Items, deadline)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("resource claims did not sync")
		}
		time.Sleep(time.Millisecond)
	}
}

// syncAllocatedDevices waits until the DRA manager's allocated devices
// are those the claims hold: its tracker is fed by the assume cache's
// event handlers, which run after the informer's store has the new
// version, so a deallocation may not have reached it yet.
func (s *Sim) syncAllocatedDevices(claims []resourcev1.ResourceClaim, deadline time.Time) error {
	consumable := utilfeature.DefaultFeatureGate.Enabled(features.DRAConsumableCapacity)
	want := sets.New[structured.DeviceID]()
	for i := range claims {
		a := claims[i].Status.Allocation
		if a == nil {
			continue
		}
		for _, r := range a.Devices.Results {
			if ptr.Deref(r.AdminAccess, false) || (consumable && r.ShareID != nil) {
				continue
			}
			want.Insert(structured.MakeDeviceID(r.Driver, r.Pool, r.Device))
		}
	}
	for {
		got, err := s.dra.ResourceClaims().ListAllAllocatedDevices()
		if err != nil {
			return err
		}
		if got.Equal(want) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("allocated devices did not sync")
		}
		time.Sleep(time.Millisecond)
	}
}

// bumpClaimVersions makes the fake clientset bump a claim's resourceVersion
// on every update, as an API server does: DRA's assume cache only takes
// newer versions.
func bumpClaimVersions(client *fake.Clientset) {
	client.PrependReactor("update", "resourceclaims", func(a clienttesting.Action) (bool, runtime.Object, error) {
		ua, ok := a.(clienttesting.UpdateAction)
		if !ok {
			return false, nil, nil
		}
		m, err := meta.Accessor(ua.GetObject())
		if err != nil {
			return false, nil, nil
		}
		rv, _ := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
		m.SetResourceVersion(strconv.FormatInt(rv+1, 10))
		return false, nil, nil
	})
}
