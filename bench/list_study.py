#!/usr/bin/env python3
"""How the API server spends a cold start's list (issue 36): one cluster of
--nodes nodes and --pods bound pods (kube-apiserver v1.34.1 with profiling
on), then the same list of every pod asked for in several ways, one after
the other in rounds (alternated), each measured on the API server itself:
its CPU seconds (/proc) and etcd's, the list's first and last byte, what
its /metrics count (LISTs, lists served by the watch cache and by etcd),
and, with --profile, its CPU profile over the list (/debug/pprof/profile,
read with `go tool pprof -top`).

    bench/list_study.py [--nodes 5000 --pods 150000] [--ways one,paged:500,pipe:500]
                        [--rounds 2] [--profile] [--runners ksched,kube-scheduler]

Runner ways (ksched, ksched@N: its first list in pipelined pages of N,
kube-scheduler): first byte and last byte are the
first and the last binding. Ways: one (limit=500&resourceVersion=0: the informers' first list, served
whole from the watch cache), one-http1 (the same over HTTP/1.1), paged:N (a consistent list, resourceVersion
unset, in pages of N read one after the other), pipe:N (the same with page
k+1 asked for as soon as page k's continue token is in), and runners
(ksched or kube-scheduler started until its first binding of --pending
pending pods, as bench/api.py --envelope does). Figures only.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import api as A  # noqa: E402
import gen  # noqa: E402

C = A.C
FSEL = "status.phase!=Succeeded,status.phase!=Failed"
OUT = os.path.join(A.OUT, "list-study")
# the API server's garbage collections and bytes allocated: a list's
# garbage decides when its next GC of the whole watch cache comes
GO_METRICS = ("go_gc_duration_seconds_count", "go_memstats_alloc_bytes_total")


def metrics(c):
    """The API server's counters a list moves (name{labels} -> value) for pods."""
    import ssl
    import urllib.request
    ctx = ssl.create_default_context(cafile=c.certs[0])
    req = urllib.request.Request(c.server + "/metrics", headers={"Authorization": "Bearer " + C.ADMIN_TOKEN})
    with urllib.request.urlopen(req, context=ctx, timeout=60) as r:
        text = r.read().decode()
    out = {}
    keep = re.compile(r'^(apiserver_request_total\{.*verb="LIST"|apiserver_cache_list_(total|fetched_objects_total|'
                      r'returned_objects_total)|apiserver_storage_list_(total|fetched_objects_total)|'
                      r'etcd_requests_total\{.*operation="list|apiserver_consistent_read_total)')
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        if not (keep.match(line) and "pods" in line) and not line.startswith(GO_METRICS):
            continue
        k, v = line.rsplit(" ", 1)
        out[k] = float(v)
    return out


def profile(c, seconds, path):
    import ssl
    import urllib.request
    ctx = ssl.create_default_context(cafile=c.certs[0])
    req = urllib.request.Request(f"{c.server}/debug/pprof/profile?seconds={seconds}",
                                 headers={"Authorization": "Bearer " + C.ADMIN_TOKEN})
    with urllib.request.urlopen(req, context=ctx, timeout=seconds + 60) as r, open(path, "wb") as f:
        f.write(r.read())


def force_gc(c):
    """A garbage collection in the API server now (a heap profile with
    gc=1): each way then starts from the same heap, and its own garbage is
    counted (go_memstats_alloc_bytes_total) instead of a GC it happens to
    trigger."""
    import ssl
    import urllib.request
    ctx = ssl.create_default_context(cafile=c.certs[0])
    req = urllib.request.Request(f"{c.server}/debug/pprof/heap?gc=1",
                                 headers={"Authorization": "Bearer " + C.ADMIN_TOKEN})
    with urllib.request.urlopen(req, context=ctx, timeout=120) as r:
        r.read()


def pprof_top(path, n=25):
    r = subprocess.run(["go", "tool", "pprof", "-top", f"-nodecount={n}", path], capture_output=True, text=True)
    return r.stdout


# what a list costs the API server, by the functions it goes through
# (cumulative seconds in the profile)
PARTS = [("total", None),
         ("list_from_cache", "k8s.io/apiserver/pkg/storage/cacher.(*Cacher).GetList"),
         ("btree_iterate", "github.com/google/btree.(*node[go.shape.*uint8]).iterate"),
         ("convert", "k8s.io/kubernetes/pkg/apis/core/v1.Convert_core_Pod_To_v1_Pod"),
         ("encode_list", "k8s.io/apimachinery/pkg/runtime/serializer/protobuf.streamingEncodeList"),
         ("pod_size", "k8s.io/api/core/v1.(*Pod).Size"),
         ("pod_marshal", "k8s.io/api/core/v1.(*Pod).MarshalToSizedBuffer"),
         ("http2_write", "golang.org/x/net/http2.(*serverConn).writeFrameAsync"),
         ("tls_write", "crypto/tls.(*Conn).Write"),
         ("gc_background", "runtime.gcBgMarkWorker"),
         ("gc_assist", "runtime.gcAssistAlloc"),
         ("mallocgc", "runtime.mallocgc"),
         ("list_handler", "k8s.io/apiserver/pkg/endpoints/handlers.ListResource.func1"),
         ("create", "k8s.io/apiserver/pkg/endpoints/handlers.CreateResource.createHandler.func1.2"),
         ("create_named", "k8s.io/apiserver/pkg/endpoints/handlers.CreateNamedResource.createHandler.func1.2"),
         ("finish_request", "k8s.io/apiserver/pkg/endpoints/handlers/finisher.finishRequest.func1"),
         ("http1_serve", "net/http.(*conn).serve"),
         ("go_scheduler", "runtime.schedule"),
         ("binding", "k8s.io/kubernetes/pkg/registry/core/pod/storage.(*BindingREST).Create"),
         ("watch_serve", "k8s.io/apiserver/pkg/endpoints/handlers.serveWatchHandler.func1"),
         ("watch_dispatch", "k8s.io/apiserver/pkg/storage/cacher.(*Cacher).dispatchEvents"),
         ("etcd_client", "go.etcd.io/etcd/client/v3.(*kv).Do")]


def breakdown(path):
    r = subprocess.run(["go", "tool", "pprof", "-top", "-cum", "-nodecount=100000", path],
                       capture_output=True, text=True)
    out = {}
    m = re.search(r"Total samples = ([0-9.]+)(m?s)", r.stdout)
    if m:
        out["total"] = float(m.group(1)) / (1000 if m.group(2) == "ms" else 1)
    cum = {}
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) >= 6 and re.fullmatch(r"[0-9.]+m?s", f[3]):
            v = f[3]
            sec = float(v[:-2]) / 1000 if v.endswith("ms") else float(v[:-1])
            cum[" ".join(f[5:])] = sec
    for name, fn in PARTS[1:]:
        out[name] = round(cum.get(fn, 0.0), 2)
    return out


def run_runner(c, way, a, rnd, prof_path=None):
    """A scheduler's cold start: --pending pending pods of a namespace of
    its own, the scheduler started, until all are bound (then it is
    stopped); the API server's CPU and metrics over that span."""
    way_, _, perf = way.partition("+")
    runner, _, page = way_.partition("@")
    ns = f"study-{runner}-{page or 0}-{rnd}"
    f = os.path.join(c.dir, ns + ".jsonl")
    with open(f, "w") as out:
        out.write(json.dumps(gen.namespace(ns)) + "\n")
        for i in range(a.pending):
            out.write(json.dumps(gen.pod("pod-default", f"pending-{i:05d}", ns)) + "\n")
    A.load(c, [f], f"{ns}: {a.pending} pending pods")
    time.sleep(a.rest)
    cfg = os.path.join(c.dir, f"{runner}-study.json")
    A.scheduler_config(c, runner, 5000, 5000, cfg)
    w = subprocess.Popen(A.apitool(c, "watch", "-ns", ns, "-count", str(a.pending), "-timeout", "600"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if w.stderr.readline().strip() != "ready":
        raise RuntimeError("watch did not start")
    th = None
    if prof_path:
        th = threading.Thread(target=profile, args=(c, a.profile_s, prof_path))
        th.start()
        time.sleep(0.3)
    m0 = metrics(c)
    api0, etcd0 = A.cpu_s(c.apiserver.pid), A.cpu_s(c.etcd.pid)
    t0 = time.time_ns()
    cmd = [x if x != "-v=1" or runner != "ksched" else "-v=2" for x in A.runner_cmd(c, runner, cfg, C.free_port())]
    env = dict(os.environ)
    if page:
        env["KSCHED_FIRST_LIST_PAGE"] = page
    name = f"{runner}-{page or 0}-study-{rnd}"
    if perf:
        # perf record of the scheduler (call graphs by frame pointer)
        cmd = ["perf", "record", "-F", "999", "-g", "-o", os.path.join(OUT, name + ".perf.data"), "--"] + cmd
    p = c.spawn(name, cmd, env=env)
    outw, _ = w.communicate()
    t1 = time.time_ns()
    api1, etcd1 = A.cpu_s(c.apiserver.pid), A.cpu_s(c.etcd.pid)
    sched = A.cpu_s(p.pid)
    threads = A.thread_cpu_s(p.pid)
    m1 = metrics(c)
    if perf:
        os.killpg(p.pid, 2)  # perf writes its file on SIGINT
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            pass
    if p.poll() is None:
        os.killpg(p.pid, 9)
    p.wait()
    if th:
        th.join()
    bound = json.loads(outw)["bound"] if outw.strip() else []
    timeline = ""
    try:
        with open(os.path.join(c.dir, name + ".log")) as f:
            for line in f:
                if '"List read" type="Pod"' in line:
                    timeline = line.split('"List read" ', 1)[1].strip()
    except OSError:
        pass
    return {"way": way, "timeline": timeline, "threads_cpu_s": threads, "first_byte_s": (bound[0] - t0) / 1e9 if bound else -1,
            "last_byte_s": (bound[-1] - t0) / 1e9 if bound else -1, "bound": len(bound),
            "span_s": (t1 - t0) / 1e9, "sched_cpu_s": sched,
            "apiserver_cpu_s": api1 - api0, "etcd_cpu_s": etcd1 - etcd0,
            "metrics": {k: m1[k] - m0.get(k, 0) for k in m1 if m1[k] - m0.get(k, 0)},
            "load": os.getloadavg()[0]}


def run_way(c, way, a, prof_path=None):
    path = "/api/v1/pods?fieldSelector=" + urllib.parse.quote(FSEL, safe="")
    if way in ("one", "one-http1"):
        cmd = A.apitool(c, "list", "-path", "/api/v1/pods?limit=500&resourceVersion=0&fieldSelector=" +
                        urllib.parse.quote(FSEL, safe=""), *(["-http1"] if way == "one-http1" else []))
    elif way == "watchlist":
        cmd = A.apitool(c, "list", "-path", path, "-watchlist")
    else:
        kind, n = way.split(":")
        cmd = A.apitool(c, "list", "-path", path, "-limit", n, *(["-pipeline"] if kind == "pipe" else []))
    th = None
    if prof_path:
        th = threading.Thread(target=profile, args=(c, a.profile_s, prof_path))
        th.start()
        time.sleep(0.3)
    m0 = metrics(c)
    api0, etcd0 = A.cpu_s(c.apiserver.pid), A.cpu_s(c.etcd.pid)
    t0 = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    api1, etcd1 = A.cpu_s(c.apiserver.pid), A.cpu_s(c.etcd.pid)
    m1 = metrics(c)
    if th:
        th.join()
    res = json.loads(r.stdout) if r.returncode == 0 and r.stdout.strip() else {"error": r.stderr[-300:]}
    res.update({"way": way, "wall_s": wall, "apiserver_cpu_s": api1 - api0, "etcd_cpu_s": etcd1 - etcd0,
                "metrics": {k: m1[k] - m0.get(k, 0) for k in m1 if m1[k] - m0.get(k, 0)},
                "load": os.getloadavg()[0]})
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=150000)
    ap.add_argument("--ways", default="one,paged:500,pipe:500")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--rest", type=float, default=10, help="seconds between two lists")
    ap.add_argument("--profile", action="store_true", help="a CPU profile of the API server over each list")
    ap.add_argument("--profile-s", type=int, default=20)
    ap.add_argument("--gc-before", action="store_true", help="force a GC in the API server before each way")
    ap.add_argument("--pending", type=int, default=1000, help="pending pods per runner way")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    d = os.path.join(A.OUT, "work", "envelope")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, f"cluster-{a.nodes}-{a.pods}.api.jsonl")
    if not os.path.exists(path):
        names = [f"env-node-{i:05d}" for i in range(a.nodes)]
        with open(path + ".tmp", "w") as f:
            f.write(json.dumps(gen.namespace("env")) + "\n")
            for i, nm in enumerate(names):
                f.write(json.dumps(gen.node(nm, f"zone{i % 3}")) + "\n")
            for i in range(a.pods):
                f.write(json.dumps(gen.pod("pod-default", f"pod-{i:06d}", "env", names[i % a.nodes])) + "\n")
        os.rename(path + ".tmp", path)
    c = C.Cluster(lifetime=3600, apiserver_flags=["--profiling=true"])
    c.start()
    subprocess.run([os.path.join(C.BIN, "kubectl"), "--kubeconfig", c.admin_kubeconfig, "apply", "-k",
                    os.path.join(A.ROOT, "deploy")], check=True, stdout=subprocess.DEVNULL)
    results = []
    try:
        A.load(c, [path], f"{a.nodes} nodes, {a.pods} pods")
        warm = run_way(c, "one", a)
        A.log(f"warm-up list: first byte {warm.get('first_byte_s', 0):.2f} s, last {warm.get('last_byte_s', 0):.2f} s, "
              f"apiserver CPU {warm['apiserver_cpu_s']:.2f} s")
        ways = a.ways.split(",")
        for rnd in range(a.rounds):
            order = ways if rnd % 2 == 0 else list(reversed(ways))
            for w in order:
                time.sleep(a.rest)
                if a.gc_before:
                    force_gc(c)
                    time.sleep(1)
                pp = os.path.join(OUT, f"{w.replace(':', '-')}-r{rnd}.pb.gz") if a.profile else None
                if w.partition("@")[0].partition("+")[0] in ("ksched", "kube-scheduler", "ksched-json"):
                    r = run_runner(c, w, a, rnd, pp)
                else:
                    r = run_way(c, w, a, pp)
                r["round"] = rnd
                if pp:
                    r["profile"] = pp
                results.append(r)
                A.log(f"{w:10s} r{rnd}: first byte {r.get('first_byte_s', -1):.2f} s, last byte "
                      f"{r.get('last_byte_s', -1):.2f} s, {r.get('bytes', 0) / 1e6:.1f} MB, pages {r.get('pages', 1)}, "
                      f"apiserver CPU {r['apiserver_cpu_s']:.2f} s, etcd {r['etcd_cpu_s']:.2f} s, load {r['load']:.2f}"
                      + (f" error {r['error']}" if "error" in r else ""))
                if r.get("timeline"):
                    A.log("      " + r["timeline"])
                if r.get("threads_cpu_s"):
                    A.log("      CPU s by thread: " + ", ".join(f"{k} {v:.2f}" for k, v in r["threads_cpu_s"].items()
                                                             if v >= 0.005))
                for k, v in sorted(r["metrics"].items()):
                    A.log(f"      {k} +{v:g}")
                if pp:
                    A.log("      profile: " + " ".join(f"{k} {v}" for k, v in breakdown(pp).items()))
    finally:
        with open(os.path.join(OUT, "results.json"), "w") as f:
            json.dump(results, f, indent=1)
        c.stop(keep=a.keep)


if __name__ == "__main__":
    main()
