package main

// The deterministic reference loop (docs/reference-harness.md, "The loop").

import (
	"context"
	"errors"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// MaxPasses bounds the number of passes.
const MaxPasses = 20

// errNoNodesAvailable carries upstream's text for an empty cluster.
var errNoNodesAvailable = errors.New("no nodes available to schedule pods")

// Run executes the reference loop and fills s.trace.
func (s *Sim) Run() error {
	// Pods rejected at PreEnqueue (scheduling gates, ...) are reported once and
	// never attempted. Pods with a nominatedNodeName enter the nominator, as
	// when the scheduling queue takes them in: that includes unassigned pods
	// being deleted (upstream queues them and skips them when popped, and
	// their nomination stays).
	gated := map[string]*fwk.Status{}
	gatedBy := map[string]string{}
	for _, ps := range s.queuedOrder(true) {
		prof := s.profiles[ps.pod.Spec.SchedulerName]
		isGated := false
		for _, pl := range prof.Framework.PreEnqueuePlugins() {
			st := pl.PreEnqueue(s.ctx, ps.pod)
			if !st.IsSuccess() {
				isGated = true
				if ps.pending {
					gated[ps.key] = st
					gatedBy[ps.key] = pl.Name()
				}
				break
			}
		}
		if !isGated && ps.pod.Status.NominatedNodeName != "" {
			s.nominator.AddNominatedPod(s.logger, mustPodInfo(ps.pod), nil)
		}
	}

	for pass := 1; pass <= MaxPasses; pass++ {
		order := s.pendingOrder()
		if len(order) == 0 {
			break
		}
		changed := false
		attempted := 0
		for _, ps := range order {
			if st, g := gated[ps.key]; g {
				if pass == 1 {
					s.trace.Attempts = append(s.trace.Attempts, Attempt{
						Pass: pass, Pod: ps.key, Nominated: ps.pod.Status.NominatedNodeName,
						PreEnqueue: statusOf(gatedBy[ps.key], st),
						Result:     ResultSchedulingGated,
						Message:    st.Message(),
					})
				}
				continue
			}
			if ps.deleted || ps.pod.Spec.NodeName != "" {
				continue
			}
			attempted++
			att, ch, err := s.attempt(pass, ps)
			if err != nil {
				return fmt.Errorf("pass %d, pod %s: %w", pass, ps.key, err)
			}
			s.trace.Attempts = append(s.trace.Attempts, att)
			if err := s.syncClaims(s.ctx); err != nil {
				return err
			}
			if ch {
				changed = true
			}
		}
		if !changed || attempted == 0 {
			break
		}
	}
	return nil
}

func mustPodInfo(p *v1.Pod) *framework.PodInfo {
	pi, _ := framework.NewPodInfo(p)
	return pi
}

func codeName(s *fwk.Status) string { return s.Code().String() }

// attempt runs one scheduling attempt. It reports whether the cluster changed
// (a pod was bound or a victim deleted).
func (s *Sim) attempt(pass int, ps *podState) (Attempt, bool, error) {
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	prof := s.profiles[ps.pod.Spec.SchedulerName]
	fw := prof.Framework
	pod := ps.pod
	att := Attempt{Pass: pass, Pod: ps.key, Nominated: pod.Status.NominatedNodeName}
	s.lastFit = nil

	state := framework.NewCycleState()
	state.SetRecordPluginMetrics(false)
	state.Write(framework.PodsToActivateKey, framework.NewPodsToActivate())

	if err := s.cache.UpdateSnapshot(s.logger, s.snapshot); err != nil {
		return att, false, err
	}

	fail := func(result, msg string, ni *framework.NominatingInfo) (Attempt, bool, error) {
		att.Result = result
		att.Message = msg
		s.failureHandler(ps, ni)
		return att, false, nil
	}
	// Scheduling-failure nominating info used for non-FitError failures
	// (NominatedNodeNameForExpectation is off in v1.34: clear it).
	clearNNN := &framework.NominatingInfo{NominatingMode: framework.ModeOverride, NominatedNodeName: ""}

	if s.snapshot.NumNodes() == 0 {
		att.Filter = []NodeFilter{}
		return fail(ResultUnschedulable, errNoNodesAvailable.Error(), clearNNN)
	}

	// ---- findNodesThatFitPod ----
	diagnosis := framework.Diagnosis{NodeToStatus: framework.NewDefaultNodeToStatus()}
	allNodes, err := s.snapshot.NodeInfos().List()
	if err != nil {
		return att, false, err
	}
	evaluated := map[string]*fwk.Status{}
	var feasible []fwk.NodeInfo
	var filterErr error

	preRes, pst, unschedPlugins := fw.RunPreFilterPlugins(ctx, state, pod)
	diagnosis.UnschedulablePlugins = unschedPlugins
	prefilterRejected := false
	if !pst.IsSuccess() {
		att.PreFilter = statusOf(pst.Plugin(), pst)
		if !pst.IsRejected() {
			att.Filter = []NodeFilter{}
			return fail(ResultError, pst.AsError().Error(), clearNNN)
		}
		diagnosis.NodeToStatus.SetAbsentNodesStatus(pst)
		diagnosis.PreFilterMsg = pst.Message()
		diagnosis.AddPluginStatus(pst)
		prefilterRejected = true
	}

	// runFilters evaluates nodes with the nominated-pods logic; it records
	// statuses like upstream's findNodesThatPassFilters.
	runFilters := func(nodes []fwk.NodeInfo) ([]fwk.NodeInfo, error) {
		var ok []fwk.NodeInfo
		for _, ni := range nodes {
			st := fw.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
			name := ni.Node().Name
			if st.Code() == fwk.Error {
				evaluated[name] = st
				return ok, st.AsError()
			}
			evaluated[name] = st
			if st.IsSuccess() {
				ok = append(ok, ni)
				continue
			}
			diagnosis.NodeToStatus.Set(name, st)
			diagnosis.AddPluginStatus(st)
		}
		return ok, nil
	}

	if !prefilterRejected {
		done := false
		if nnn := pod.Status.NominatedNodeName; nnn != "" {
			if ni, err := s.snapshot.Get(nnn); err == nil {
				f, ferr := runFilters([]fwk.NodeInfo{ni})
				if ferr == nil && len(f) != 0 {
					feasible = f
					done = true
				}
			}
		}
		if !done {
			// a second evaluation overwrites the nominated node's first verdict
			nodes := allNodes
			if !preRes.AllNodes() {
				nodes = nil
				for _, ni := range allNodes {
					if preRes.NodeNames.Has(ni.Node().Name) {
						nodes = append(nodes, ni)
					}
				}
				diagnosis.NodeToStatus.SetAbsentNodesStatus(fwk.NewStatus(fwk.UnschedulableAndUnresolvable,
					fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(unschedPlugins))))
			}
			// upstream's rotating start index: the search starts where the
			// previous one stopped and moves on by the nodes it looked at,
			// whatever happened (it shows when a Filter error ends a search)
			rotated := make([]fwk.NodeInfo, len(nodes))
			for i := range nodes {
				rotated[i] = nodes[(s.nextStart+i)%len(nodes)]
			}
			feasible, filterErr = runFilters(rotated)
			processed := len(feasible) + diagnosis.NodeToStatus.Len()
			s.nextStart = (s.nextStart + processed) % len(allNodes)
		}
		if done {
			// nominated node fast path: only that node was evaluated
			att.Filter = s.filterEntries(allNodes, evaluated, diagnosis.NodeToStatus, nil)
		} else {
			att.Filter = s.filterEntries(allNodes, evaluated, diagnosis.NodeToStatus, preRes)
		}
		if filterErr != nil {
			return fail(ResultError, filterErr.Error(), clearNNN)
		}
	} else {
		att.Filter = []NodeFilter{}
	}

	if len(feasible) == 0 {
		fitErr := &framework.FitError{Pod: pod, NumAllNodes: s.snapshot.NumNodes(), Diagnosis: diagnosis}
		s.lastFit = fitErr
		var ni *framework.NominatingInfo
		if fw.HasPostFilterPlugins() {
			s.victims.take()
			s.victims.arm(true)
			res, st := fw.RunPostFilterPlugins(ctx, state, pod, sortedNodeToStatus{diagnosis.NodeToStatus})
			s.victims.arm(false)
			fitErr.Diagnosis.PostFilterMsg = st.Message()
			pf := &PostFilter{Plugin: st.Plugin(), Code: codeName(st), Message: st.Message()}
			if res != nil {
				ni = res.NominatingInfo
				if ni.Mode() == framework.ModeOverride && ni.NominatedNodeName != "" {
					pf.NominatedNode = ni.NominatedNodeName
				}
			}
			victims := s.victims.take()
			changed := len(victims) > 0
			for _, v := range victims {
				pf.Victims = append(pf.Victims, v.Namespace+"/"+v.Name)
				s.removeVictim(v)
			}
			sort.Strings(pf.Victims)
			s.syncNominations()
			att.PostFilter = pf
			att.Result = ResultUnschedulable
			att.Message = fitErr.Error()
			s.failureHandler(ps, ni)
			return att, changed, nil
		}
		return fail(ResultUnschedulable, fitErr.Error(), nil)
	}

	// ---- scoring ----
	host := feasible[0].Node().Name
	if len(feasible) > 1 {
		scores, err := s.score(ctx, prof, state, pod, feasible)
		if err != nil {
			return fail(ResultError, err.Error(), clearNNN)
		}
		att.Scores = scores
		best := scores[0]
		for _, sc := range scores[1:] {
			if sc.Total > best.Total || (sc.Total == best.Total && sc.Node < best.Node) {
				best = sc
			}
		}
		host = best.Node
	}

	// ---- assume, reserve, permit ----
	assumed := pod.DeepCopy()
	assumed.Spec.NodeName = host
	t := SimNow
	assumed.Status.StartTime = &t
	if err := s.cache.AssumePod(s.logger, assumed); err != nil {
		return fail(ResultError, err.Error(), clearNNN)
	}
	s.nominator.DeleteNominatedPodIfExists(assumed)

	rejectAt := func(st *fwk.Status) (Attempt, bool, error) {
		fw.RunReservePluginsUnreserve(ctx, state, assumed, host)
		_ = s.cache.ForgetPod(s.logger, assumed)
		if st.IsRejected() {
			fe := &framework.FitError{NumAllNodes: 1, Pod: pod,
				Diagnosis: framework.Diagnosis{NodeToStatus: framework.NewDefaultNodeToStatus()}}
			fe.Diagnosis.NodeToStatus.Set(host, st)
			fe.Diagnosis.AddPluginStatus(st)
			s.lastFit = fe
			return fail(ResultUnschedulable, fe.Error(), clearNNN)
		}
		return fail(ResultError, st.AsError().Error(), clearNNN)
	}
	if st := fw.RunReservePluginsReserve(ctx, state, assumed, host); !st.IsSuccess() {
		return rejectAt(st)
	}
	if st := fw.RunPermitPlugins(ctx, state, assumed, host); !st.IsSuccess() {
		if st.IsWait() {
			fw.RejectWaitingPod(assumed.UID)
			return rejectAt(fwk.AsStatus(errors.New("permit plugins returned Wait: not supported by the reference harness")))
		}
		return rejectAt(st)
	}

	// ---- DynamicResources' PreBind: the claims' allocation and reservation
	// are written (the only PreBind the harness runs; see "DRA") ----
	if pl, ok := prof.Plugins["DynamicResources"].(framework.PreBindPlugin); ok && len(pod.Spec.ResourceClaims) > 0 {
		if st := pl.PreBind(ctx, state, assumed, host); !st.IsSuccess() {
			return rejectAt(st)
		}
	}

	// ---- bind: the pod now runs on host ----
	if err := s.cache.FinishBinding(s.logger, assumed); err != nil {
		return att, false, err
	}
	if err := s.cache.AddPod(s.logger, assumed); err != nil {
		return att, false, err
	}
	ps.pod = assumed
	ps.pending = false
	if _, err := s.client.CoreV1().Pods(assumed.Namespace).Update(ctx, assumed, metav1.UpdateOptions{}); err != nil {
		return att, false, err
	}
	if err := s.podIdx.Update(assumed); err != nil {
		return att, false, err
	}
	att.Result = ResultScheduled
	att.Node = host
	att.Devices = s.devices(assumed)
	return att, true, nil
}

// filterEntries lists the verdict of every node, sorted by name.
func (s *Sim) filterEntries(all []fwk.NodeInfo, evaluated map[string]*fwk.Status, nts *framework.NodeToStatus, preRes *framework.PreFilterResult) []NodeFilter {
	out := []NodeFilter{}
	for _, ni := range all {
		name := ni.Node().Name
		if st, ok := evaluated[name]; ok {
			e := NodeFilter{Node: name, Code: codeName(st)}
			if !st.IsSuccess() {
				e.Plugin = st.Plugin()
				e.Reasons = append([]string(nil), st.Reasons()...)
			}
			out = append(out, e)
			continue
		}
		if !preRes.AllNodes() && !preRes.NodeNames.Has(name) {
			st := nts.AbsentNodesStatus()
			out = append(out, NodeFilter{Node: name, Code: codeName(st), Reasons: append([]string(nil), st.Reasons()...)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out
}

// score runs PreScore and Score like upstream's prioritizeNodes and records
// raw, normalized and weighted values.
func (s *Sim) score(ctx context.Context, prof *Profile, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) ([]NodeScore, error) {
	fw := prof.Framework
	out := make([]NodeScore, 0, len(nodes))
	if !fw.HasScorePlugins() {
		for _, n := range nodes {
			out = append(out, NodeScore{Node: n.Node().Name, Plugins: []PluginScore{}, Total: 1})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
		return out, nil
	}
	if st := fw.RunPreScorePlugins(ctx, state, pod, nodes); !st.IsSuccess() {
		return nil, st.AsError()
	}
	skip := state.GetSkipScorePlugins()
	// raw scores: call each active Score plugin directly (Score is read-only).
	raw := map[string]map[string]int64{}
	for _, name := range prof.ScoreList {
		if skip.Has(name) {
			continue
		}
		pl, ok := prof.Plugins[name].(framework.ScorePlugin)
		if !ok {
			return nil, fmt.Errorf("score plugin %q not found", name)
		}
		raw[name] = map[string]int64{}
		for _, n := range nodes {
			v, st := pl.Score(ctx, state, pod, n)
			if !st.IsSuccess() {
				return nil, fmt.Errorf("running Score plugins: plugin %q failed with: %w", name, st.AsError())
			}
			raw[name][n.Node().Name] = v
		}
	}
	res, st := fw.RunScorePlugins(ctx, state, pod, nodes)
	if !st.IsSuccess() {
		return nil, st.AsError()
	}
	for _, nps := range res {
		ns := NodeScore{Node: nps.Name, Plugins: []PluginScore{}, Total: nps.TotalScore}
		for _, ps := range nps.Scores {
			w := int64(prof.Weights[ps.Name])
			norm := ps.Score
			if w != 0 {
				norm = ps.Score / w
			}
			ns.Plugins = append(ns.Plugins, PluginScore{Plugin: ps.Name, Raw: raw[ps.Name][nps.Name], Normalized: norm, Weighted: ps.Score})
		}
		out = append(out, ns)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out, nil
}

// failureHandler mirrors upstream's handling of a failed attempt: the
// nominator and the pod's status.nominatedNodeName follow the nominating info.
func (s *Sim) failureHandler(ps *podState, ni *framework.NominatingInfo) {
	pod := ps.pod
	if ni.Mode() == framework.ModeOverride && pod.Status.NominatedNodeName != ni.NominatedNodeName {
		np := pod.DeepCopy()
		np.Status.NominatedNodeName = ni.NominatedNodeName
		s.replacePending(ps, np)
		pod = np
	}
	s.nominator.AddNominatedPod(s.logger, mustPodInfo(pod), ni)
}

// replacePending stores a new version of a pending pod everywhere.
func (s *Sim) replacePending(ps *podState, np *v1.Pod) {
	ps.pod = np
	_, _ = s.client.CoreV1().Pods(np.Namespace).UpdateStatus(s.ctx, np, metav1.UpdateOptions{})
	_ = s.podIdx.Update(np)
}

// removeVictim removes a preempted pod from the cluster state.
func (s *Sim) removeVictim(v *v1.Pod) {
	ps := s.pods[v.Namespace+"/"+v.Name]
	if ps == nil || ps.deleted {
		return
	}
	ps.deleted = true
	_ = s.cache.RemovePod(s.logger, ps.pod)
	_ = s.podIdx.Delete(ps.pod)
	s.nominator.DeleteNominatedPodIfExists(ps.pod)
}

// syncNominations picks up nominatedNodeName changes that plugins made through
// the API (preemption clears lower-priority pods' nominations).
func (s *Sim) syncNominations() {
	for _, ps := range s.pods {
		if ps.deleted || !(ps.pending || ps.terminating) || ps.pod.Spec.NodeName != "" {
			continue
		}
		cur, err := s.client.CoreV1().Pods(ps.pod.Namespace).Get(s.ctx, ps.pod.Name, metav1.GetOptions{})
		if err != nil {
			continue
		}
		if cur.Status.NominatedNodeName != ps.pod.Status.NominatedNodeName {
			old := ps.pod
			np := old.DeepCopy()
			np.Status.NominatedNodeName = cur.Status.NominatedNodeName
			ps.pod = np
			_ = s.podIdx.Update(np)
			s.nominator.UpdateNominatedPod(s.logger, old, mustPodInfo(np))
		}
	}
}
