package main

// The ceiling for preemption workloads (apitool ceiling -preempt): per
// pending pod, the API work a scheduler that needs no time to decide must
// do when the pod fits only by evicting lower-priority pods: for each
// victim the DisruptionTarget status patch and the DELETE (as upstream's
// PreemptPod), then wait until the watch has seen every victim gone (the
// scheduler must: until then the node is full in its cache and the
// kubelet's), then the binding and the Scheduled event.
//
// Victims are the fewest on the node: lowest priority first, until the
// pod's CPU, memory and pod count fit. Nodes are taken round robin (the
// first that fits, with or without victims). Pods are taken in the order
// the list gave them; conc evictors and conc binders (kube-scheduler's
// parallelism, 16) work at once, victims of one pod in parallel, so that
// a pod whose victims are gone binds while later pods' victims go.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// quantity parses a Kubernetes resource quantity into milli-units.
func quantity(s string) int64 {
	if s == "" {
		return 0
	}
	mult := 1000.0
	suffixes := []struct {
		s string
		m float64
	}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40}, {"Pi", 1 << 50}, {"Ei", 1 << 60},
		{"m", 0.001}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15}, {"E", 1e18}}
	for _, x := range suffixes {
		if strings.HasSuffix(s, x.s) {
			s, mult = strings.TrimSuffix(s, x.s), 1000*x.m
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		fatal("quantity %q: %v", s, err)
	}
	return int64(v * mult)
}

type resources struct{ cpu, mem, pods int64 }

func (a resources) fits(free resources) bool {
	return a.cpu <= free.cpu && a.mem <= free.mem && a.pods <= free.pods
}

type fullPod struct {
	Metadata struct {
		meta
		DeletionTimestamp *string `json:"deletionTimestamp"`
	} `json:"metadata"`
	Spec struct {
		NodeName      string `json:"nodeName"`
		SchedulerName string `json:"schedulerName"`
		Priority      *int32 `json:"priority"`
		Containers    []struct {
			Resources struct {
				Requests map[string]string `json:"requests"`
			} `json:"resources"`
		} `json:"containers"`
	} `json:"spec"`
}

func (p *fullPod) key() string { return p.Metadata.Namespace + "/" + p.Metadata.Name }

func (p *fullPod) priority() int32 {
	if p.Spec.Priority == nil {
		return 0
	}
	return *p.Spec.Priority
}

func (p *fullPod) requests() resources {
	r := resources{pods: 1000}
	for _, c := range p.Spec.Containers {
		r.cpu += quantity(c.Resources.Requests["cpu"])
		r.mem += quantity(c.Resources.Requests["memory"])
	}
	return r
}

type pnode struct {
	name  string
	alloc resources
	pods  map[string]*fullPod // running there and not chosen as a victim
	used  resources           // their requests, and those of pods placed here
}

// placer holds the cluster as the ceiling has decided it: victims are
// gone from it and placed pods are in it the moment they are chosen.
type placer struct {
	mu     sync.Mutex
	nodes  []*pnode
	byName map[string]*pnode
	rr     int
}

func (pl *placer) free(n *pnode) resources {
	return resources{n.alloc.cpu - n.used.cpu, n.alloc.mem - n.used.mem, n.alloc.pods - n.used.pods}
}

// place picks a node for p and the victims to evict there; ok false when
// no node can take it.
func (pl *placer) place(p *fullPod) (string, []*fullPod, bool) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	req, prio := p.requests(), p.priority()
	for i := 0; i < len(pl.nodes); i++ {
		n := pl.nodes[(pl.rr+i)%len(pl.nodes)]
		free := pl.free(n)
		var victims []*fullPod
		if !req.fits(free) {
			var lower []*fullPod
			for _, q := range n.pods {
				if q.priority() < prio {
					lower = append(lower, q)
				}
			}
			sort.Slice(lower, func(a, b int) bool {
				if lower[a].priority() != lower[b].priority() {
					return lower[a].priority() < lower[b].priority()
				}
				return lower[a].key() < lower[b].key()
			})
			for _, q := range lower {
				if req.fits(free) {
					break
				}
				r := q.requests()
				free.cpu, free.mem, free.pods = free.cpu+r.cpu, free.mem+r.mem, free.pods+r.pods
				victims = append(victims, q)
			}
			if !req.fits(free) {
				continue
			}
		}
		for _, q := range victims {
			r := q.requests()
			n.used = resources{n.used.cpu - r.cpu, n.used.mem - r.mem, n.used.pods - r.pods}
			delete(n.pods, q.key())
		}
		n.used = resources{n.used.cpu + req.cpu, n.used.mem + req.mem, n.used.pods + req.pods}
		pl.rr = (pl.rr + i + 1) % len(pl.nodes)
		return n.name, victims, true
	}
	return "", nil, false
}

type nodeItem struct {
	Metadata meta `json:"metadata"`
	Status   struct {
		Allocatable map[string]string `json:"allocatable"`
	} `json:"status"`
}

// gone tells waiters when the watch sees a pod deleted (by uid).
type gone struct {
	mu      sync.Mutex
	waiters map[string]chan struct{}
	seen    map[string]bool
}

func (g *gone) wait(uid string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	ch := make(chan struct{})
	if g.seen[uid] {
		close(ch)
	} else {
		g.waiters[uid] = ch
	}
	return ch
}

func (g *gone) deleted(uid string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.seen[uid] = true
	if ch, ok := g.waiters[uid]; ok {
		close(ch)
		delete(g.waiters, uid)
	}
}

// missing: the pods waited for that are not in present are gone.
func (g *gone) missing(present map[string]bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for uid, ch := range g.waiters {
		if !present[uid] {
			g.seen[uid] = true
			close(ch)
			delete(g.waiters, uid)
		}
	}
}

func (c *client) bindAndEvent(sched, host string, m meta, node string) error {
	body, _ := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "Binding",
		"metadata": map[string]any{"name": m.Name, "namespace": m.Namespace, "uid": m.UID},
		"target":   map[string]any{"apiVersion": "v1", "kind": "Node", "name": node}})
	code, rb, err := c.do("POST", "/api/v1/namespaces/"+m.Namespace+"/pods/"+m.Name+"/binding", body)
	if err != nil || code != 201 {
		return fmt.Errorf("binding %s/%s: %d %v %s", m.Namespace, m.Name, code, err, rb)
	}
	now := time.Now().UTC()
	ev, _ := json.Marshal(map[string]any{
		"apiVersion": "events.k8s.io/v1", "kind": "Event",
		"metadata":            map[string]any{"name": fmt.Sprintf("%s.%x", m.Name, now.UnixNano()), "namespace": m.Namespace},
		"eventTime":           now.Format("2006-01-02T15:04:05.000000Z07:00"),
		"reportingController": sched, "reportingInstance": sched + "-" + host,
		"action": "Binding", "reason": "Scheduled", "type": "Normal",
		"note": fmt.Sprintf("Successfully assigned %s/%s to %s", m.Namespace, m.Name, node),
		"regarding": map[string]any{"kind": "Pod", "apiVersion": "v1", "namespace": m.Namespace,
			"name": m.Name, "uid": m.UID, "resourceVersion": m.ResourceVersion}})
	if code, rb, err := c.do("POST", "/apis/events.k8s.io/v1/namespaces/"+m.Namespace+"/events", ev); err != nil || code != 201 {
		fmt.Fprintf(os.Stderr, "apitool: event %s/%s: %d %v %s\n", m.Namespace, m.Name, code, err, rb)
	}
	return nil
}

// evict: upstream PreemptPod's calls, the DisruptionTarget condition by a
// strategic merge patch of the status, then the deletion.
func (c *client) evict(sched string, v *fullPod) error {
	m := v.Metadata
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": []any{map[string]any{
		"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
		"message":            sched + ": preempting to accommodate a higher priority pod",
		"lastProbeTime":      nil,
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}}})
	path := "/api/v1/namespaces/" + m.Namespace + "/pods/" + m.Name
	code, rb, err := c.doType("PATCH", path+"/status", patch, "application/strategic-merge-patch+json")
	if err != nil || (code != 200 && code != 404) {
		return fmt.Errorf("patch %s: %d %v %s", v.key(), code, err, rb)
	}
	code, rb, err = c.do("DELETE", path, nil)
	if err != nil || (code != 200 && code != 202 && code != 404) {
		return fmt.Errorf("delete %s: %d %v %s", v.key(), code, err, rb)
	}
	return nil
}

func cmdCeilingPreempt(c *client, sched string, conc int, count int) {
	code, b, err := c.do("GET", "/api/v1/nodes", nil)
	if err != nil || code != 200 {
		fatal("listing nodes: %d %v", code, err)
	}
	var nl struct{ Items []nodeItem }
	json.Unmarshal(b, &nl)
	if len(nl.Items) == 0 {
		fatal("no nodes")
	}
	pl := &placer{byName: map[string]*pnode{}}
	for _, it := range nl.Items {
		a := it.Status.Allocatable
		n := &pnode{name: it.Metadata.Name, pods: map[string]*fullPod{},
			alloc: resources{quantity(a["cpu"]), quantity(a["memory"]), quantity(a["pods"])}}
		pl.nodes = append(pl.nodes, n)
		pl.byName[n.name] = n
	}
	g := &gone{waiters: map[string]chan struct{}{}, seen: map[string]bool{}}
	host, _ := os.Hostname()
	pending := make(chan *fullPod, 1<<16)
	type placed struct {
		p    *fullPod
		node string
	}
	bindq := make(chan placed, 1<<16)
	var bound, failed, evicted int64
	var inflight sync.WaitGroup // pods between eviction and binding

	var evictors sync.WaitGroup
	for w := 0; w < conc; w++ {
		evictors.Add(1)
		go func() {
			defer evictors.Done()
			for p := range pending {
				node, victims, ok := pl.place(p)
				if !ok {
					atomic.AddInt64(&failed, 1)
					fmt.Fprintf(os.Stderr, "apitool: no node for %s\n", p.key())
					continue
				}
				waits := make([]chan struct{}, len(victims))
				var vw sync.WaitGroup
				for i, v := range victims {
					waits[i] = g.wait(v.Metadata.UID)
					vw.Add(1)
					go func(v *fullPod) {
						defer vw.Done()
						if err := c.evict(sched, v); err != nil {
							fmt.Fprintf(os.Stderr, "apitool: %v\n", err)
						}
						atomic.AddInt64(&evicted, 1)
					}(v)
				}
				vw.Wait()
				// the wait for the deletions to be seen holds no request slot
				inflight.Add(1)
				go func(p *fullPod, node string) {
					for _, ch := range waits {
						<-ch
					}
					bindq <- placed{p, node}
				}(p, node)
			}
		}()
	}
	var binders sync.WaitGroup
	for w := 0; w < conc; w++ {
		binders.Add(1)
		go func() {
			defer binders.Done()
			for x := range bindq {
				if err := c.bindAndEvent(sched, host, x.p.Metadata.meta, x.node); err != nil {
					atomic.AddInt64(&failed, 1)
					fmt.Fprintf(os.Stderr, "apitool: %v\n", err)
				} else {
					atomic.AddInt64(&bound, 1)
				}
				inflight.Done()
			}
		}()
	}

	// One watch of every pod: the bound ones make the placer's nodes, the
	// pending ones of sched are queued, deletions wake the waiters.
	ctx, cancel := context.WithCancel(context.Background())
	queued := map[string]bool{}
	listed := false
	present := map[string]bool{}
	var order []*fullPod
	err = c.watchAll(ctx, func() { fmt.Fprintln(os.Stderr, "ready") }, func(typ string, p *fullPod) {
		switch {
		case typ == "RELISTED" && (p.Spec.NodeName != "" || p.Spec.SchedulerName != sched || queued[p.key()]):
			present[p.Metadata.UID] = true
		case typ == "LISTED":
			if listed {
				// after a new list: what is not in it was deleted meanwhile
				g.missing(present)
				present = map[string]bool{}
			}
			listed = true
			for _, q := range order {
				pending <- q
			}
			order = nil
		case typ == "DELETED":
			g.deleted(p.Metadata.UID)
		case p.Spec.NodeName != "":
			if typ == "ADDED" && !listed {
				pl.mu.Lock()
				if n := pl.byName[p.Spec.NodeName]; n != nil && p.Metadata.DeletionTimestamp == nil {
					n.pods[p.key()] = p
					r := p.requests()
					n.used = resources{n.used.cpu + r.cpu, n.used.mem + r.mem, n.used.pods + r.pods}
				}
				pl.mu.Unlock()
			}
		case p.Spec.SchedulerName == sched && !queued[p.key()]:
			queued[p.key()] = true
			if listed {
				pending <- p
			} else {
				order = append(order, p)
			}
		}
		if count > 0 && atomic.LoadInt64(&bound)+atomic.LoadInt64(&failed) >= int64(count) {
			cancel()
		}
	})
	if err != nil && ctx.Err() == nil {
		fatal("ceiling: %v", err)
	}
	close(pending)
	evictors.Wait()
	inflight.Wait()
	close(bindq)
	binders.Wait()
	fmt.Fprintf(os.Stderr, "apitool: ceiling (preemption) bound %d, evicted %d, failed %d\n", bound, evicted, failed)
}

// watchAll lists then watches every pod, calling fn for each listed pod
// ("ADDED"), once with "LISTED" after the list, then for every event,
// until ctx ends. A watch the API server ends (it drops a watcher that
// falls behind) is opened again after a new list, whose pods are passed
// as "RELISTED" and followed by "LISTED" again.
func (c *client) watchAll(ctx context.Context, ready func(), fn func(string, *fullPod)) error {
	for first := true; ; first = false {
		err := c.watchAllOnce(ctx, first, ready, fn)
		if ctx.Err() != nil {
			return nil
		}
		fmt.Fprintf(os.Stderr, "apitool: %v (watching again)\n", err)
		time.Sleep(100 * time.Millisecond)
	}
}

func (c *client) watchAllOnce(ctx context.Context, first bool, ready func(), fn func(string, *fullPod)) error {
	code, b, err := c.do("GET", "/api/v1/pods", nil)
	if err != nil || code != 200 {
		return fmt.Errorf("list pods: %d %v", code, err)
	}
	var l struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []fullPod `json:"items"`
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return err
	}
	q := url.Values{}
	q.Set("watch", "1")
	q.Set("allowWatchBookmarks", "true")
	q.Set("resourceVersion", l.Metadata.ResourceVersion)
	resp, err := c.stream(ctx, "/api/v1/pods?"+q.Encode())
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	listed := "RELISTED"
	if first {
		ready()
		listed = "ADDED"
	}
	for i := range l.Items {
		fn(listed, &l.Items[i])
	}
	fn("LISTED", nil)
	dec := json.NewDecoder(resp.Body)
	for {
		var ev struct {
			Type   string  `json:"type"`
			Object fullPod `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			return fmt.Errorf("watch pods ended: %v", err)
		}
		if ev.Type == "BOOKMARK" || ev.Type == "ERROR" {
			continue
		}
		fn(ev.Type, &ev.Object)
	}
}
