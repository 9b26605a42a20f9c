package main

// A deterministic in-memory pod nominator (the scheduling queue's role of
// remembering which pending pod was nominated to which node).

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

type nominator struct {
	// isPendingUnassigned reports whether the pod still exists and has no node.
	isPendingUnassigned func(pod *v1.Pod) bool
	podToNode           map[types.UID]string
	nodePods            map[string][]*framework.PodInfo // insertion order
}

var _ framework.PodNominator = &nominator{}

func newNominator(check func(*v1.Pod) bool) *nominator {
	return &nominator{
		isPendingUnassigned: check,
		podToNode:           map[types.UID]string{},
		nodePods:            map[string][]*framework.PodInfo{},
	}
}

func (n *nominator) AddNominatedPod(_ klog.Logger, pi fwk.PodInfo, ni *framework.NominatingInfo) {
	n.delete(pi.GetPod())
	var node string
	if ni.Mode() == framework.ModeOverride {
		node = ni.NominatedNodeName
	} else {
		node = pi.GetPod().Status.NominatedNodeName
	}
	if node == "" {
		return
	}
	if n.isPendingUnassigned != nil && !n.isPendingUnassigned(pi.GetPod()) {
		return
	}
	info, err := framework.NewPodInfo(pi.GetPod())
	if err != nil && info == nil {
		return
	}
	n.podToNode[pi.GetPod().UID] = node
	n.nodePods[node] = append(n.nodePods[node], info)
}

func (n *nominator) DeleteNominatedPodIfExists(pod *v1.Pod) {
	n.delete(pod)
}

func (n *nominator) delete(pod *v1.Pod) {
	node, ok := n.podToNode[pod.UID]
	if !ok {
		return
	}
	delete(n.podToNode, pod.UID)
	list := n.nodePods[node]
	for i, pi := range list {
		if pi.Pod.UID == pod.UID {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(n.nodePods, node)
	} else {
		n.nodePods[node] = list
	}
}

func (n *nominator) UpdateNominatedPod(logger klog.Logger, oldPod *v1.Pod, newPodInfo fwk.PodInfo) {
	var ni *framework.NominatingInfo
	if oldPod.Status.NominatedNodeName == "" && newPodInfo.GetPod().Status.NominatedNodeName == "" {
		if node, ok := n.podToNode[oldPod.UID]; ok {
			ni = &framework.NominatingInfo{NominatingMode: framework.ModeOverride, NominatedNodeName: node}
		}
	}
	n.delete(oldPod)
	n.AddNominatedPod(logger, newPodInfo, ni)
}

func (n *nominator) NominatedPodsForNode(nodeName string) []fwk.PodInfo {
	list := n.nodePods[nodeName]
	out := make([]fwk.PodInfo, 0, len(list))
	for _, pi := range list {
		out = append(out, pi.DeepCopy())
	}
	return out
}

// nodeOf returns the node a pod is nominated to ("" if none).
func (n *nominator) nodeOf(uid types.UID) string {
	return n.podToNode[uid]
}
