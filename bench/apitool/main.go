// apitool: the Go side of bench/api.py (make bench-api), standard library
// only: load objects into a kube-apiserver quickly, watch a namespace and
// report when each pod was bound, and the ceiling binder (a no-op
// scheduler that makes only the API calls a scheduler makes per pod: the
// binding and the Scheduled event).
//
//	apitool load     -server URL -ca FILE -token T [-c 32] FILE.jsonl...
//	apitool watch    -server URL -ca FILE -token T -ns NS -count N [-timeout S]
//	apitool ceiling  -server URL -ca FILE -token T -scheduler NAME [-c 16] [-count N] [-preempt]
//	apitool list     -server URL -ca FILE -token T [-path P] [-accept A] [-limit N [-pipeline] | -watchlist]
//
// ceiling -preempt: where a pod does not fit, the evictions a preemption
// must make first (preempt.go).
//
// watch prints "ready" on stderr once its watch is open, then one JSON
// object on stdout: the unix-nanosecond time each pod of NS was first
// seen bound ("bound": [...], sorted), and whether it saw all of them.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type client struct {
	server, token string
	hc            *http.Client
}

func newClient(server, ca, token string) *client {
	return newClientProto(server, ca, token, false)
}

// newClientProto: with http1, HTTP/1.1 only (client-go's DISABLE_HTTP2).
func newClientProto(server, ca, token string, http1 bool) *client {
	pem, err := os.ReadFile(ca)
	if err != nil {
		fatal("reading %s: %v", ca, err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	tr := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: pool},
		ForceAttemptHTTP2:   !http1,
		MaxIdleConnsPerHost: 64,
	}
	if http1 {
		tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	return &client{server: server, token: token, hc: &http.Client{Transport: tr}}
}

func fatal(f string, a ...any) {
	fmt.Fprintf(os.Stderr, "apitool: "+f+"\n", a...)
	os.Exit(1)
}

// do makes one call, retrying 429/5xx and transport errors a few times.
func (c *client) do(method, path string, body []byte) (int, []byte, error) {
	return c.doType(method, path, body, "application/json")
}

// doType is do with the body's content type.
func (c *client) doType(method, path string, body []byte, ctype string) (int, []byte, error) {
	var lastErr error
	for try := 0; try < 20; try++ {
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, _ := http.NewRequest(method, c.server+path, rd)
		req.Header.Set("Authorization", "Bearer "+c.token)
		req.Header.Set("Accept", "application/json")
		if body != nil {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := c.hc.Do(req)
		if err != nil {
			lastErr = err
			time.Sleep(time.Duration(try+1) * 100 * time.Millisecond)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 429 || resp.StatusCode >= 500 {
			lastErr = fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b)
			time.Sleep(time.Duration(try+1) * 100 * time.Millisecond)
			continue
		}
		return resp.StatusCode, b, nil
	}
	return 0, nil, lastErr
}

type meta struct {
	Name            string `json:"name"`
	Namespace       string `json:"namespace"`
	UID             string `json:"uid"`
	ResourceVersion string `json:"resourceVersion"`
}

type object struct {
	Kind     string          `json:"kind"`
	Metadata meta            `json:"metadata"`
	Status   json.RawMessage `json:"status"`
	raw      []byte
}

var plural = map[string]string{
	"Namespace": "/api/v1/namespaces", "Node": "/api/v1/nodes",
	"Pod": "/api/v1/namespaces/%s/pods", "Service": "/api/v1/namespaces/%s/services",
	"PriorityClass": "/apis/scheduling.k8s.io/v1/priorityclasses",
	"DeviceClass":   "/apis/resource.k8s.io/v1/deviceclasses",
	"ResourceSlice": "/apis/resource.k8s.io/v1/resourceslices",
	"ResourceClaim": "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims",
}

func collectionPath(o *object) string {
	p, ok := plural[o.Kind]
	if !ok {
		fatal("load: no path for kind %s", o.Kind)
	}
	if strings.Contains(p, "%s") {
		ns := o.Metadata.Namespace
		if ns == "" {
			ns = "default"
		}
		p = fmt.Sprintf(p, ns)
	}
	return p
}

// create POSTs an object; a Node or a ResourceClaim then gets its status
// (the API server drops status on create; a kubelet posts a node's after,
// a scheduler writes a claim's allocation).
func (c *client) create(o *object) error {
	code, b, err := c.do("POST", collectionPath(o), o.raw)
	if err != nil {
		return err
	}
	if code == 409 {
		return nil
	}
	if code != 201 && code != 200 {
		return fmt.Errorf("POST %s %s: %d %s", o.Kind, o.Metadata.Name, code, b)
	}
	if (o.Kind == "Node" || o.Kind == "ResourceClaim") && len(o.Status) > 0 {
		var cur map[string]any
		if err := json.Unmarshal(b, &cur); err != nil {
			return err
		}
		var st any
		json.Unmarshal(o.Status, &st)
		cur["status"] = st
		body, _ := json.Marshal(cur)
		code, b, err = c.do("PUT", collectionPath(o)+"/"+o.Metadata.Name+"/status", body)
		if err != nil {
			return err
		}
		if code != 200 {
			return fmt.Errorf("PUT %s status %s: %d %s", o.Kind, o.Metadata.Name, code, b)
		}
	}
	return nil
}

func readObjects(files []string) []*object {
	var out []*object
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			fatal("%v", err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			o := &object{raw: append([]byte(nil), line...)}
			if err := json.Unmarshal(line, o); err != nil {
				fatal("%s: %v", f, err)
			}
			out = append(out, o)
		}
		fh.Close()
	}
	return out
}

// parallel runs fn on every object with n workers; the first error wins.
func parallel(objs []*object, n int, fn func(*object) error) error {
	var next int64 = -1
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := atomic.AddInt64(&next, 1)
				if int(i) >= len(objs) {
					return
				}
				if err := fn(objs[i]); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

func cmdLoad(c *client, conc int, files []string) {
	objs := readObjects(files)
	// In phases: what others live in first, then nodes (and what lives in
	// namespaces), then pods.
	order := map[string]int{"Namespace": 0, "PriorityClass": 0, "DeviceClass": 0, "Service": 1, "Node": 1,
		"ResourceSlice": 1, "ResourceClaim": 1, "Pod": 2}
	for phase := 0; phase <= 2; phase++ {
		var batch []*object
		for _, o := range objs {
			if order[o.Kind] == phase {
				batch = append(batch, o)
			}
		}
		if err := parallel(batch, conc, c.create); err != nil {
			fatal("load: %v", err)
		}
	}
	fmt.Fprintf(os.Stderr, "apitool: loaded %d objects\n", len(objs))
}

type podItem struct {
	Metadata meta `json:"metadata"`
	Spec     struct {
		NodeName      string `json:"nodeName"`
		SchedulerName string `json:"schedulerName"`
	} `json:"spec"`
}

type podList struct {
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Items []podItem `json:"items"`
}

type watchEvent struct {
	Type   string  `json:"type"`
	Object podItem `json:"object"`
}

// watchPods lists then watches pods at path (with query q) and calls fn
// for each pod seen, from the list and from every later event, until ctx
// ends. ready is called once the watch is open.
func (c *client) watchPods(ctx context.Context, path string, q url.Values, ready func(), fn func(string, *podItem)) error {
	code, b, err := c.do("GET", path+"?"+q.Encode(), nil)
	if err != nil || code != 200 {
		return fmt.Errorf("list %s: %d %v", path, code, err)
	}
	var l podList
	if err := json.Unmarshal(b, &l); err != nil {
		return err
	}
	rv := l.Metadata.ResourceVersion
	wq := url.Values{}
	for k, v := range q {
		wq[k] = v
	}
	wq.Set("watch", "1")
	wq.Set("allowWatchBookmarks", "true")
	wq.Set("resourceVersion", rv)
	resp, err := c.stream(ctx, path+"?"+wq.Encode())
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	ready()
	for i := range l.Items {
		fn("ADDED", &l.Items[i])
	}
	dec := json.NewDecoder(resp.Body)
	for {
		var ev watchEvent
		if err := dec.Decode(&ev); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("watch %s ended: %v", path, err)
		}
		if ev.Type == "BOOKMARK" || ev.Type == "ERROR" {
			continue
		}
		fn(ev.Type, &ev.Object)
	}
}

// stream opens a watch (GET path, which holds its query).
func (c *client) stream(ctx context.Context, path string) (*http.Response, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", c.server+path, nil)
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 {
		resp.Body.Close()
		return nil, fmt.Errorf("watch %s: %d", path, resp.StatusCode)
	}
	return resp, nil
}

func cmdWatch(c *client, ns string, count int, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	seen := map[string]int64{}
	var times []int64
	readyOnce := sync.Once{}
	var err error
	// a watch the server ends early is opened again (list, then watch):
	// a pod is counted once, at the first time it was seen bound
	for ctx.Err() == nil {
		err = c.watchPods(ctx, "/api/v1/namespaces/"+ns+"/pods", url.Values{},
			func() { readyOnce.Do(func() { fmt.Fprintln(os.Stderr, "ready") }) },
			func(typ string, p *podItem) {
				if typ == "DELETED" || p.Spec.NodeName == "" {
					return
				}
				if _, ok := seen[p.Metadata.Name]; ok {
					return
				}
				now := time.Now().UnixNano()
				seen[p.Metadata.Name] = now
				times = append(times, now)
				if len(times) >= count {
					cancel()
				}
			})
		if err != nil && ctx.Err() == nil {
			fmt.Fprintf(os.Stderr, "apitool: watch: %v (watching again)\n", err)
			time.Sleep(200 * time.Millisecond)
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	out, _ := json.Marshal(map[string]any{"bound": times, "complete": len(times) >= count})
	os.Stdout.Write(append(out, '\n'))
}

// ---- the ceiling -------------------------------------------------------

type nodeList struct {
	Items []struct {
		Metadata meta `json:"metadata"`
	} `json:"items"`
}

func cmdCeiling(c *client, sched string, conc int, count int) {
	code, b, err := c.do("GET", "/api/v1/nodes", nil)
	if err != nil || code != 200 {
		fatal("listing nodes: %d %v", code, err)
	}
	var nl nodeList
	json.Unmarshal(b, &nl)
	if len(nl.Items) == 0 {
		fatal("no nodes")
	}
	nodes := make([]string, len(nl.Items))
	for i, n := range nl.Items {
		nodes[i] = n.Metadata.Name
	}
	host, _ := os.Hostname()
	queue := make(chan podItem, 1<<16)
	var bound, failed int64
	var wg sync.WaitGroup
	var rr uint64
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range queue {
				node := nodes[atomic.AddUint64(&rr, 1)%uint64(len(nodes))]
				m := p.Metadata
				body, _ := json.Marshal(map[string]any{
					"apiVersion": "v1", "kind": "Binding",
					"metadata": map[string]any{"name": m.Name, "namespace": m.Namespace, "uid": m.UID},
					"target":   map[string]any{"apiVersion": "v1", "kind": "Node", "name": node}})
				code, rb, err := c.do("POST", "/api/v1/namespaces/"+m.Namespace+"/pods/"+m.Name+"/binding", body)
				if err != nil || code != 201 {
					atomic.AddInt64(&failed, 1)
					fmt.Fprintf(os.Stderr, "apitool: binding %s/%s: %d %v %s\n", m.Namespace, m.Name, code, err, rb)
					continue
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
				atomic.AddInt64(&bound, 1)
			}
		}()
	}
	ctx, cancel := context.WithCancel(context.Background())
	queued := map[string]bool{}
	q := url.Values{}
	q.Set("fieldSelector", "spec.nodeName=,spec.schedulerName="+sched)
	err = c.watchPods(ctx, "/api/v1/pods", q, func() { fmt.Fprintln(os.Stderr, "ready") },
		func(typ string, p *podItem) {
			if typ != "ADDED" || p.Spec.NodeName != "" || queued[p.Metadata.Namespace+"/"+p.Metadata.Name] {
				return
			}
			queued[p.Metadata.Namespace+"/"+p.Metadata.Name] = true
			queue <- *p
			if count > 0 && len(queued) >= count {
				cancel()
			}
		})
	if err != nil && ctx.Err() == nil {
		fatal("ceiling: %v", err)
	}
	close(queue)
	wg.Wait()
	fmt.Fprintf(os.Stderr, "apitool: ceiling bound %d, failed %d\n", bound, failed)
}

// cmdList makes one LIST as a scheduler's informer does (limit=500,
// resourceVersion=0, protobuf first) and prints, as JSON, the seconds to
// the answer's first and last byte and its size: what the API server
// takes to encode and send a list to any client, without decoding it.
func cmdList(c *client, path, accept string) {
	req, _ := http.NewRequest("GET", c.server+path, nil)
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", accept)
	t0 := time.Now()
	resp, err := c.hc.Do(req)
	if err != nil {
		fatal("list %s: %v", path, err)
	}
	first := time.Since(t0)
	buf := make([]byte, 1<<20)
	var n int64
	for {
		k, err := resp.Body.Read(buf)
		n += int64(k)
		if err != nil {
			break
		}
	}
	resp.Body.Close()
	last := time.Since(t0)
	json.NewEncoder(os.Stdout).Encode(map[string]any{"code": resp.StatusCode, "first_byte_s": first.Seconds(),
		"last_byte_s": last.Seconds(), "bytes": n, "content_type": resp.Header.Get("Content-Type")})
}

func main() {
	if len(os.Args) < 2 {
		fatal("usage: apitool load|watch|ceiling|list [flags]")
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	server := fs.String("server", "", "API server URL")
	ca := fs.String("ca", "", "CA certificate")
	token := fs.String("token", "", "bearer token")
	conc := fs.Int("c", 16, "concurrent requests")
	ns := fs.String("ns", "", "namespace (watch)")
	count := fs.Int("count", 0, "pods to wait for")
	timeout := fs.Float64("timeout", 1800, "seconds (watch)")
	sched := fs.String("scheduler", "default-scheduler", "schedulerName (ceiling)")
	preempt := fs.Bool("preempt", false, "ceiling: evict lower-priority pods where a pod does not fit (preempt.go)")
	path := fs.String("path", "/api/v1/pods?limit=500&resourceVersion=0", "list: the path")
	accept := fs.String("accept", "application/vnd.kubernetes.protobuf, */*", "list: the Accept header")
	limit := fs.Int("limit", 0, "list: read in pages of this many items (path without limit/continue; pages.go)")
	watchlist := fs.Bool("watchlist", false, "list: as a watch's initial events (sendInitialEvents=true)")
	pipeline := fs.Bool("pipeline", false, "list -limit: ask for the next page as soon as a page's continue token is in")
	http1 := fs.Bool("http1", false, "list: over HTTP/1.1")
	fs.Parse(os.Args[2:])
	c := newClientProto(*server, *ca, *token, *http1)
	switch os.Args[1] {
	case "load":
		cmdLoad(c, *conc, fs.Args())
	case "watch":
		cmdWatch(c, *ns, *count, time.Duration(*timeout*float64(time.Second)))
	case "list":
		if *watchlist {
			cmdWatchList(c, *path, *accept)
		} else if *limit > 0 {
			cmdListPages(c, *path, *accept, *limit, *pipeline)
		} else {
			cmdList(c, *path, *accept)
		}
	case "ceiling":
		if *preempt {
			cmdCeilingPreempt(c, *sched, *conc, *count)
		} else {
			cmdCeiling(c, *sched, *conc, *count)
		}
	default:
		fatal("unknown command %s", os.Args[1])
	}
}
