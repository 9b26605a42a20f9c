#!/usr/bin/env python3
"""Benchmark through a real kube-apiserver v1.34.1 and etcd (make bench-api).

    bench/api.py [--nodes 1000] [--workloads A,B] [--runners R1,R2]
                 [--qps 5000 --burst 5000] [--repeat R] [--no-cold] [--cold-only]
                 [--list]
                 [--cold-nodes 5000 --cold-pods 30000]
                 [--envelope [--envelope-nodes 5000 --envelope-pods 150000 --envelope-pending 1000 --envelope-rest 30]
                             [--envelope-warm] [--envelope-profile S] [--envelope-gc]]

For every workload (bench/gen.py's, 1000 nodes by default) and every runner,
one after the other, each on a fresh API server and etcd
(test/e2e/cluster.py): the workload's objects are created through the API
server (bench/apitool load), the measured pods pending; then the runner
starts and a watch records when each measured pod is bound. Runners:

  ksched           `ksched run` at --qps/--burst (default 5000/5000,
                   scheduler_perf's setting)
  kube-scheduler   kube-scheduler v1.34.1 at the same limits
  kube-scheduler-default  kube-scheduler at upstream's defaults (50/100)
  ksched-json      ksched with clientConnection.contentType application/json
                   (not run unless named: what protobuf saves)
  ksched-curl      ksched with KSCHED_KUBE_TRANSPORT=curl: libcurl instead
                   of its own HTTP/2 client (not run unless named)
  ceiling          apitool ceiling: no scheduling, only the calls a
                   scheduler makes per pod (binding POST and the Scheduled
                   event), 16 at once, round robin over the nodes; on a
                   preemption workload first the evictions the pod needs
                   (DisruptionTarget patch and DELETE per victim, the
                   fewest on the node), waiting until the watch has seen
                   them gone (apitool ceiling -preempt)

Figures per run: throughput as scheduler_perf's collector computes it
(1 s samples from the first binding seen on; average and percentiles),
the runner's CPU seconds per 1000 pods and peak RSS (/proc), the API
server's and etcd's CPU seconds over the same span. Cold start (one
cluster of --cold-nodes nodes and --cold-pods bound pods, 20 pending pods
per runner): time from the runner's start to its first binding.

Preemption workloads (PreemptionBasic, PreemptionMinimum) also count, per
runner, the victims its preemption chose (scheduler_preemption_victims),
the init pods actually gone from the API server at the end (evictions),
and attempts and evictions per preemptor; and the victims `ksched
simulate` chooses for the same cluster and pods (no API server, no
races: the answer to compare with).

Prints the table and one line per workload
"NAME  ksched X pods/s  kube-scheduler Y pods/s  ceiling Z pods/s  R.Rx"
(R = X/Y), and for preemption workloads one more with the victims,
evictions and attempts per preemptor of each runner, and writes
build/bench-api/results.json. Figures only: nothing here passes or fails
on a timing.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "e2e"))
import cluster as C  # noqa: E402

OUT = os.path.join(ROOT, "build", "bench-api")
APITOOL = os.path.join(OUT, "apitool")
KSCHED = os.environ.get("KSCHED") or os.path.join(ROOT, "build", "release", "ksched")
TICK = os.sysconf("SC_CLK_TCK")
RUNNERS = ["ksched", "kube-scheduler", "kube-scheduler-default", "ceiling", "ksched-json", "ksched-curl"]
DEFAULT_WORKLOADS = ["SchedulingBasic", "TopologySpreading", "SchedulingPodAntiAffinity",
                     "PreemptionBasic", "PreemptionMinimum", "SchedulingWithMixedChurn"]


def is_preemption(name):
    return name.startswith("Preemption")


def log(msg):
    print(f"bench-api: {msg}", file=sys.stderr, flush=True)


# ---- processes ---------------------------------------------------------------

def cpu_s(pid):
    """utime + stime of a process, seconds."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK
    except (OSError, IndexError, ValueError):
        return 0.0


def thread_cpu_s(pid):
    """utime + stime per thread name (comm) of a process, seconds: where a
    runner's CPU went (ksched names its threads: kube-io, api-dispatch, ...).
    Threads that have exited are not counted."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for t in tids:
        try:
            with open(f"/proc/{pid}/task/{t}/stat") as f:
                head, rest = f.read().rsplit(")", 1)
            name = head.split("(", 1)[1]
            fields = rest.split()
            out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / TICK
        except (OSError, IndexError, ValueError):
            pass
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def status_mb(pid, field):
    """A /proc/PID/status memory field (VmHWM: peak RSS, VmRSS), MiB."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def peak_rss_mb(pid):
    return status_mb(pid, "VmHWM")


def runner_pid(p):
    """The scheduler's own pid: p's, or under KSCHED_BENCH_PREFIX (heaptrack,
    perf) the process of its group that runs the ksched binary."""
    if not os.environ.get("KSCHED_BENCH_PREFIX"):
        return p.pid
    exe = os.path.realpath(KSCHED)
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            if os.getpgid(int(d)) == p.pid and os.path.realpath(f"/proc/{d}/exe") == exe:
                return int(d)
        except OSError:
            pass
    return p.pid


def stop_runner(p):
    """SIGTERM to the scheduler, then its group SIGKILLed once the group's
    leader exits or 30 s later: a profiler in front (heaptrack) writes its
    file after the process exits, with helpers of its own in the group that
    a SIGTERM to the whole group would kill first (an empty file)."""
    pid = runner_pid(p)
    try:
        if pid == p.pid:
            os.killpg(p.pid, 15)
        else:
            os.kill(pid, 15)
        p.wait(timeout=30)
    except (subprocess.TimeoutExpired, ProcessLookupError):
        pass
    try:
        os.killpg(p.pid, 9)
    except ProcessLookupError:
        pass
    p.wait()


def save_smaps(pid, path):
    """KSCHED_BENCH_SMAPS=DIR: the runner's /proc/PID/smaps at the highest
    RSS seen, for the split of its memory by mapping (docs/performance.md)."""
    try:
        with open(f"/proc/{pid}/smaps") as f:
            text = f.read()
        with open(path, "w") as out:
            out.write(text)
    except OSError:
        pass


def apitool(c, *args, token=C.ADMIN_TOKEN):
    return [APITOOL, args[0], "-server", c.server, "-ca", c.certs[0], "-token", token] + list(args[1:])


def scheduler_config(c, runner, qps, burst, path):
    ks = runner.startswith("ksched")
    if runner == "kube-scheduler-default":
        qps, burst = 50, 100
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1",
           "kind": "KubeSchedulerConfiguration",
           "clientConnection": {"kubeconfig": c.ksched_kubeconfig if ks else c.kube_scheduler_kubeconfig,
                                "qps": qps, "burst": burst},
           "leaderElection": {"leaderElect": False},
           # ksched-json: ksched asking for JSON, to set the protobuf default against
           **({"clientConnection": {"kubeconfig": c.ksched_kubeconfig, "qps": qps, "burst": burst,
                                    "contentType": "application/json"}} if runner == "ksched-json" else {}),
           "profiles": [{"schedulerName": "default-scheduler"}]}
    with open(path, "w") as f:
        json.dump(cfg, f, indent=1)
    return qps, burst


# Both schedulers serve /metrics without authorization on loopback, so
# that the run can read how many scheduling attempts the pods took.
METRICS_FLAGS = ["--bind-address=127.0.0.1", "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics"]


def runner_cmd(c, runner, cfg, port, workload=""):
    if runner == "ceiling":
        # a preemption workload's pods fit only once their victims are gone
        return apitool(c, "ceiling", "-c", "16", *(["-preempt"] if is_preemption(workload) else []))
    if runner.startswith("ksched"):
        # KSCHED_BENCH_PREFIX: a profiler in front, e.g. "perf record -g -o F --"
        return ((["env", "KSCHED_KUBE_TRANSPORT=curl"] if runner == "ksched-curl" else []) +
                os.environ.get("KSCHED_BENCH_PREFIX", "").split() +
                [KSCHED, "run", "--config", cfg, "-v=1", f"--secure-port={port}"] + METRICS_FLAGS)
    return [os.path.join(C.BIN, "kube-scheduler"), "--config", cfg, f"--secure-port={port}", "-v=1"] + METRICS_FLAGS


def sched_metrics(port):
    """scheduler_schedule_attempts_total summed over results and profiles,
    and the victims preemption chose (scheduler_preemption_victims' sum);
    (None, None) when /metrics cannot be read."""
    import ssl
    import urllib.request
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    try:
        with urllib.request.urlopen(f"https://127.0.0.1:{port}/metrics", context=ctx, timeout=10) as r:
            text = r.read().decode()
    except (OSError, ValueError):
        return None, None
    n, victims = 0.0, 0.0
    for line in text.splitlines():
        if line.startswith("scheduler_schedule_attempts_total{"):
            n += float(line.rsplit(" ", 1)[1])
        elif line.startswith("scheduler_preemption_victims_sum"):
            victims += float(line.rsplit(" ", 1)[1])
    return n, victims


# ---- objects -----------------------------------------------------------------

def claims_by_name(o, templates):
    """A pod's claims from ResourceClaimTemplates become claims of their own
    referenced by name: the claim an init pod's status names (gen.py writes
    it, allocated), or for a pending pod a new one from the template,
    returned. No resourceclaim controller runs here; with one, the claims
    would exist before the pod could be scheduled just the same."""
    made = []
    named = {s["name"]: s.get("resourceClaimName")
             for s in o.get("status", {}).get("resourceClaimStatuses", [])}
    ns = o["metadata"].get("namespace", "default")
    for rc in o["spec"].get("resourceClaims", []):
        t = rc.pop("resourceClaimTemplateName", None)
        if t is None:
            continue
        name = named.get(rc["name"])
        if not name:
            name = f"{o['metadata']['name']}-{rc['name']}"
            made.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                         "metadata": {"name": name, "namespace": ns}, "spec": templates[(ns, t)]})
        rc["resourceClaimName"] = name
    o.pop("status", None)
    return made


def prepare(src, dst, templates):
    """gen.py's JSON lines as the API server takes them: a pod's literal
    spec.priority (scheduler_perf's apiserver runs without the Priority
    admission plugin) becomes a PriorityClass of that value; claims from
    templates become claims by name (claims_by_name; templates: namespace
    and name -> claim spec, filled from the files in order)."""
    classes = set()
    with open(src) as f, open(dst, "w") as out:
        for line in f:
            o = json.loads(line)
            if o.get("kind") == "ResourceClaimTemplate":
                templates[(o["metadata"]["namespace"], o["metadata"]["name"])] = o["spec"]["spec"]
                continue
            if o.get("kind") == "Pod" and "priority" in o.get("spec", {}):
                v = o["spec"].pop("priority")
                o["spec"]["priorityClassName"] = f"bench-priority-{v}"
                classes.add(v)
            if o.get("kind") == "Pod":
                for c in claims_by_name(o, templates):
                    out.write(json.dumps(c, separators=(",", ":")) + "\n")
            out.write(json.dumps(o, separators=(",", ":")) + "\n")
    return classes


def priority_classes(values, path):
    with open(path, "w") as f:
        for v in sorted(values):
            f.write(json.dumps({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                "metadata": {"name": f"bench-priority-{v}"}, "value": v}) + "\n")


def load(c, files, what):
    t = time.monotonic()
    subprocess.run(apitool(c, "load", "-c", "32", *files), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    log(f"  {what} loaded in {time.monotonic() - t:.1f} s")


def workload_files(name, nodes):
    work = os.path.join(OUT, "work", str(nodes))
    d = os.path.join(work, name)
    gen = os.path.join(HERE, "gen.py")
    if not os.path.exists(os.path.join(d, "measured.jsonl")) or \
            os.path.getmtime(gen) > os.path.getmtime(os.path.join(d, "measured.jsonl")):
        subprocess.run([sys.executable, gen, "--nodes", str(nodes), "--workloads", name,
                        "--jsonl", "-o", work], check=True)
    with open(os.path.join(d, "workload.json")) as f:
        meta = json.load(f)
    classes, templates = set(), {}
    for part in ("cluster", "measured", "churn"):
        src = os.path.join(d, part + ".jsonl")
        if os.path.exists(src):
            classes |= prepare(src, os.path.join(d, part + ".api.jsonl"), templates)
    priority_classes(classes, os.path.join(d, "classes.api.jsonl"))
    return d, meta


# ---- churn (scheduler_perf's churn op, recreate mode) --------------------------

def churn(c, d, meta, stop):
    ch = meta["churn"]
    objs = []
    with open(os.path.join(d, "churn.api.jsonl")) as f:
        for line in f:
            objs.append(json.loads(line))
    per = ch["per_tick"]
    conn = C.Cluster.request
    k = 0
    live = []
    while not stop.wait(ch["interval_ms"] / 1000):
        try:
            if ch["mode"] == "recreate" and live:
                for o in live:
                    conn(c, "DELETE", path_of(o, True))
                live = []
                continue
            batch = objs[k * per:(k + 1) * per]
            k += 1
            if not batch:
                return
            for o in batch:
                conn(c, "POST", path_of(o, False), o)
            live = batch
        except (OSError, C.ApiError) as e:
            log(f"  churn: {e}")


def path_of(o, item):
    kind, md = o["kind"], o["metadata"]
    base = {"Node": "/api/v1/nodes", "Pod": f"/api/v1/namespaces/{md.get('namespace')}/pods",
            "Service": f"/api/v1/namespaces/{md.get('namespace')}/services"}[kind]
    return base + ("/" + md["name"] if item else "")


# ---- throughput as scheduler_perf's collector -----------------------------------

def throughput(bound, t0):
    """bound: sorted unix-ns times of each binding; t0: when sampling began
    (the runner's start). Samples every second as the collector: the first
    sample with pods scheduled starts it, an interval without a new pod is
    merged into the next."""
    samples, started, last_n, last_t, skipped = [], False, 0, 0, 0
    i, n = 0, len(bound)
    tick = t0
    end = bound[-1] + 1_000_000_000 if bound else t0
    while tick <= end:
        tick += 1_000_000_000
        while i < n and bound[i] <= tick:
            i += 1
        if i == 0:
            continue
        if not started:
            started, last_n, last_t = True, i, tick
            continue
        if i == last_n:
            skipped += 1
            continue
        tp = (i - last_n) / ((tick - last_t) / 1e9)
        samples += [tp] * (skipped + 1)
        last_n, last_t, skipped = i, tick, 0
    r = {"samples": len(samples)}
    if n >= 2:
        r["overall"] = (n - 1) / ((bound[-1] - bound[0]) / 1e9) if bound[-1] > bound[0] else 0.0
    if samples:
        s = sorted(samples)
        pct = lambda p: s[max(0, -(-len(s) * p // 100) - 1)]  # noqa: E731
        r.update(average=sum(s) / len(s), p50=pct(50), p90=pct(90), p99=pct(99))
    else:
        r["average"] = r.get("overall", 0.0)
    return r


# ---- one run -------------------------------------------------------------------

def start_cluster(flags=()):
    c = C.Cluster(lifetime=3600, apiserver_flags=list(flags))
    c.start()
    # deploy/'s RBAC: ksched runs as its service account
    subprocess.run([os.path.join(C.BIN, "kubectl"), "--kubeconfig", c.admin_kubeconfig,
                    "apply", "-k", os.path.join(ROOT, "deploy")], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return c


def live_pods(c, ns):
    """Pods of ns that exist and are not terminating."""
    items = c.get(f"/api/v1/namespaces/{ns}/pods", timeout=120).get("items", [])
    return sum(1 for p in items if not p["metadata"].get("deletionTimestamp"))


def run_one(name, runner, d, meta, a):
    c = start_cluster()
    try:
        files = [os.path.join(d, "classes.api.jsonl"), os.path.join(d, "cluster.api.jsonl")]
        load(c, files, f"{meta['nodes']} nodes, {meta['init_pods']} init pods")
        load(c, [os.path.join(d, "measured.api.jsonl")], f"{meta['measured_pods']} measured pods")
        r = measure(c, name, runner, meta["measured_namespace"], meta["measured_pods"], a,
                    churn_of=(d, meta) if meta.get("churn") else None)
        ns = meta.get("init_namespace")
        if is_preemption(name) and ns:
            # the runner is stopped: what is gone now is what it evicted
            r["evictions"] = meta["init_pods"] - live_pods(c, ns)
            r["evictions_per_preemptor"] = r["evictions"] / meta["measured_pods"]
        return r
    finally:
        c.stop(keep=a.keep)


def simulate_victims(name, d):
    """The victims `ksched simulate` chooses for the workload's cluster and
    measured pods (scheduler_preemption_victims' sum), None on failure."""
    mf = os.path.join(d, "simulate.metrics")
    p = subprocess.run([KSCHED, "simulate", os.path.join(d, "cluster.yaml"), os.path.join(d, "measured.yaml"),
                        "-o", "json", "--metrics-file", mf],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        log(f"  simulate {name}: exit {p.returncode}: {p.stderr.strip()[-300:]}")
        return None
    with open(mf) as f:
        for line in f:
            if line.startswith("scheduler_preemption_victims_sum"):
                return float(line.rsplit(" ", 1)[1])
    return 0.0


def measure(c, name, runner, ns, count, a, churn_of=None, timeout=1200):
    cfg = os.path.join(c.dir, f"{runner}-config.json")
    qps, burst = scheduler_config(c, runner, a.qps, a.burst, cfg)
    w = subprocess.Popen(apitool(c, "watch", "-ns", ns, "-count", str(count), "-timeout", str(timeout)),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = w.stderr.readline()
    if line.strip() != "ready":
        raise RuntimeError(f"watch: {line}{w.stderr.read()}")
    ctl = [p.pid for p in (c.apiserver, c.etcd)]
    ctl0 = sum(cpu_s(p) for p in ctl)
    t0 = time.time_ns()
    port = C.free_port()
    p = c.spawn(f"{runner}-{name}", runner_cmd(c, runner, cfg, port, name))
    stop = threading.Event()
    th = None
    if churn_of:
        th = threading.Thread(target=churn, args=(c, churn_of[0], churn_of[1], stop), daemon=True)
        th.start()
    # the runner's CPU and RSS are read while it lives
    last = {"cpu": 0.0, "rss": 0.0}
    smaps_dir = os.environ.get("KSCHED_BENCH_SMAPS") if runner != "ceiling" else None
    if smaps_dir:
        os.makedirs(smaps_dir, exist_ok=True)

    def sample():
        pid, now_max = p.pid, 0.0
        while w.poll() is None and p.poll() is None:
            if pid == p.pid:
                pid = runner_pid(p)
            last["cpu"], last["rss"] = cpu_s(pid), max(last["rss"], peak_rss_mb(pid))
            if smaps_dir:
                now = status_mb(pid, "VmRSS")
                if now > now_max + 0.5:
                    now_max = now
                    save_smaps(pid, os.path.join(smaps_dir, f"{runner}-{name}.smaps"))
            time.sleep(0.2)
    sm = threading.Thread(target=sample, daemon=True)
    sm.start()
    out, err = w.communicate()
    t1 = time.time_ns()
    rpid = runner_pid(p)
    sched_cpu, rss = cpu_s(rpid) or last["cpu"], max(peak_rss_mb(rpid), last["rss"])
    threads = thread_cpu_s(rpid)
    try:
        nthreads = len(os.listdir(f"/proc/{rpid}/task"))
    except OSError:
        nthreads = None
    ctl_cpu = sum(cpu_s(q) for q in ctl) - ctl0
    tries, victims = sched_metrics(port) if runner != "ceiling" and p.poll() is None else (None, None)
    stop.set()
    alive = p.poll() is None
    if alive:
        stop_runner(p)
    sm.join()
    if th:
        th.join(timeout=5)
    res = json.loads(out) if out.strip() else {"bound": [], "complete": False}
    bound = res["bound"]
    r = {"workload": name, "runner": runner, "pods": count, "bound": len(bound),
         "complete": res["complete"], "qps": qps if runner != "ceiling" else None,
         "burst": burst if runner != "ceiling" else None,
         "throughput": throughput(bound, t0),
         "first_binding_s": (bound[0] - t0) / 1e9 if bound else None,
         "all_bound_s": (bound[-1] - t0) / 1e9 if bound else None,
         # when half the pods were bound: what a pod typically waits,
         # which the average does not show when a run binds nothing for a
         # long time and then everything at once
         "half_bound_s": (bound[(len(bound) - 1) // 2] - t0) / 1e9 if bound else None,
         "cpu_s": sched_cpu, "cpu_s_per_1000": sched_cpu * 1000 / max(1, len(bound)),
         "peak_rss_mb": rss, "apiserver_etcd_cpu_s": ctl_cpu, "threads_cpu_s": threads,
         "threads": nthreads,
         "span_s": (t1 - t0) / 1e9, "exited_early": not alive,
         "attempts": tries, "attempts_per_pod": tries / count if tries is not None else None,
         "preemption_victims": victims}
    if not res["complete"]:
        log(f"  {runner}: only {len(bound)} of {count} bound; log: {c.dir}/{runner}-{name}.log")
    return r


# ---- cold start ------------------------------------------------------------------

def cold_start(a, runners):
    log(f"cold start: {a.cold_nodes} nodes, {a.cold_pods} bound pods")
    d = os.path.join(OUT, "work", "cold")
    os.makedirs(d, exist_ok=True)
    import gen  # noqa: E402 (bench/gen.py)
    names = [f"cold-node-{i:05d}" for i in range(a.cold_nodes)]
    with open(os.path.join(d, "cluster.api.jsonl"), "w") as f:
        f.write(json.dumps(gen.namespace("cold")) + "\n")
        for i, nm in enumerate(names):
            f.write(json.dumps(gen.node(nm, f"zone{i % 3}")) + "\n")
        for i in range(a.cold_pods):
            f.write(json.dumps(gen.pod("pod-default", f"pod-{i:05d}", "cold", names[i % len(names)])) + "\n")
    c = start_cluster()
    out = []
    try:
        load(c, [os.path.join(d, "cluster.api.jsonl")], "cold-start cluster")
        for runner in runners:
            ns = "cold-" + runner
            with open(os.path.join(d, ns + ".jsonl"), "w") as f:
                f.write(json.dumps(gen.namespace(ns)) + "\n")
                for i in range(20):
                    f.write(json.dumps(gen.pod("pod-default", f"pending-{i:02d}", ns)) + "\n")
            load(c, [os.path.join(d, ns + ".jsonl")], f"{ns} pending pods")
            r = measure(c, "cold", runner, ns, 1, a, timeout=300)
            r["workload"] = "ColdStart"
            out.append(r)
            log(f"  {runner}: first binding after {r['first_binding_s']:.2f} s, "
                f"peak RSS {r['peak_rss_mb']:.0f} MiB, CPU {r['cpu_s']:.2f} s")
            # the pods it did not get to are left to the next runner
            subprocess.run([os.path.join(C.BIN, "kubectl"), "--kubeconfig", c.admin_kubeconfig,
                            "delete", "namespace", ns, "--wait=false"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    finally:
        c.stop(keep=a.keep)
    return out


# ---- the envelope: 5000 nodes, 150,000 pods -----------------------------------------

def apiserver_metrics(c):
    """The API server's own counters a scheduler's lists and watches move:
    response bytes of LIST calls (apiserver_response_sizes_sum), bytes and
    count of watch events sent (apiserver_watch_events_sizes_sum,
    apiserver_watch_events_total), LIST and WATCH requests."""
    import ssl
    import urllib.request
    ctx = ssl.create_default_context(cafile=c.certs[0])
    req = urllib.request.Request(c.server + "/metrics", headers={"Authorization": "Bearer " + C.ADMIN_TOKEN})
    out = {"list_bytes": 0.0, "watch_event_bytes": 0.0, "watch_events": 0.0, "lists": 0.0, "watches": 0.0}
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=60) as r:
            text = r.read().decode()
    except (OSError, ValueError) as e:
        log(f"  apiserver /metrics: {e}")
        return out
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        try:
            v = float(line.rsplit(" ", 1)[1])
        except (IndexError, ValueError):
            continue
        if line.startswith("apiserver_response_sizes_sum{") and 'verb="LIST"' in line:
            out["list_bytes"] += v
        elif line.startswith("apiserver_watch_events_sizes_sum{"):
            out["watch_event_bytes"] += v
        elif line.startswith("apiserver_watch_events_total{"):
            out["watch_events"] += v
        elif line.startswith("apiserver_request_total{") and 'verb="LIST"' in line:
            out["lists"] += v
        elif line.startswith("apiserver_request_total{") and 'verb="WATCH"' in line:
            out["watches"] += v
    return out


def delta(a, b):
    return {k: b[k] - a[k] for k in a}


def envelope(a, runners):
    """Kubernetes' scalability envelope on one cluster: --envelope-nodes
    nodes and --envelope-pods bound pods; for each scheduler in turn,
    --envelope-pending pending pods: its cold start (first binding, all
    bound), its CPU and peak RSS, the API server's CPU and the bytes its
    metrics count for lists and watch events over that span; then the API
    server is killed and restarted, and the resync measured: from the API
    server's restart to the binding of a pod created once it is back, the
    scheduler's and the API server's CPU over it."""
    import gen  # noqa: E402 (bench/gen.py)
    nn, npods, npend = a.envelope_nodes, a.envelope_pods, a.envelope_pending
    log(f"envelope: {nn} nodes, {npods} bound pods, {npend} pending per scheduler")
    d = os.path.join(OUT, "work", "envelope")
    os.makedirs(d, exist_ok=True)
    names = [f"env-node-{i:05d}" for i in range(nn)]
    path = os.path.join(d, f"cluster-{nn}-{npods}.api.jsonl")
    if not os.path.exists(path):
        with open(path + ".tmp", "w") as f:
            f.write(json.dumps(gen.namespace("env")) + "\n")
            for i, nm in enumerate(names):
                f.write(json.dumps(gen.node(nm, f"zone{i % 3}")) + "\n")
            for i in range(npods):
                f.write(json.dumps(gen.pod("pod-default", f"pod-{i:06d}", "env", names[i % nn])) + "\n")
        os.rename(path + ".tmp", path)
    c = start_cluster(["--profiling=true"] if a.envelope_profile or a.envelope_gc else [])
    out = []
    try:
        load(c, [path], "envelope cluster")
        if a.envelope_warm:
            # the API server's first list of every pod after the load costs
            # it 4-6 s more than the next ones: paid here, by a plain client,
            # so that no runner's position decides the comparison
            pl = plain_list(c)
            log(f"  warm-up list by a plain client: first byte {pl['first_byte_s']:.2f} s, "
                f"last byte {pl['last_byte_s']:.2f} s, {pl['bytes'] / 1e6:.1f} MB" if pl else "  warm-up list failed")
        for runner in runners:
            if runner == "ceiling":
                continue
            ns = "env-" + runner
            with open(os.path.join(d, ns + ".jsonl"), "w") as f:
                f.write(json.dumps(gen.namespace(ns)) + "\n")
                for i in range(npend):
                    f.write(json.dumps(gen.pod("pod-default", f"pending-{i:05d}", ns)) + "\n")
            load(c, [os.path.join(d, ns + ".jsonl")], f"{ns}: {npend} pending pods")
            try:
                r = envelope_one(c, runner, ns, npend, a)
            except (RuntimeError, OSError, ValueError) as e:
                log(f"  {runner}: {e}")
                continue
            out.append(r)
            log(f"  {runner}: first binding {fmt(r['first_binding_s'], '%.2f')} s, all {npend} bound "
                f"{fmt(r['all_bound_s'], '%.2f')} s, CPU {r['cpu_s']:.2f} s, RSS {r['peak_rss_mb']:.0f} MiB, "
                f"apiserver CPU {r['apiserver_cpu_s']:.2f} s ({r['apiserver_cpu_s_net']:.2f} s over its "
                f"{r['apiserver_rest_cpu_per_s']:.3f} s/s at rest), LIST {r['api']['list_bytes'] / 1e6:.1f} MB, "
                f"watch events {r['api']['watch_event_bytes'] / 1e6:.1f} MB; resync "
                f"{fmt(r['resync_s'], '%.2f')} s after the API server's restart "
                f"(ready after {fmt(r['apiserver_ready_s'], '%.0f')} s; apiserver CPU {fmt(r['resync_apiserver_cpu_s'], '%.2f')} s, "
                f"scheduler CPU {fmt(r['resync_cpu_s'], '%.2f')} s); load {os.getloadavg()[0]:.2f}")
            pl = r.get("plain_list_before")
            if pl:
                log(f"  the same pods listed by a plain client just before it: first byte {pl['first_byte_s']:.2f} s, "
                    f"last byte {pl['last_byte_s']:.2f} s, {pl['bytes'] / 1e6:.1f} MB")
            pl = r.get("plain_list")
            if pl:
                log(f"  the same pods listed by a plain client after it: first byte {pl['first_byte_s']:.2f} s, "
                    f"last byte {pl['last_byte_s']:.2f} s, {pl['bytes'] / 1e6:.1f} MB ({pl['content_type']})")
            if r.get("apiserver_profile"):
                log(f"  {runner}: the API server's profile (s): " +
                    " ".join(f"{k} {v}" for k, v in r["apiserver_profile"].items() if k != "path" and v))
            if r.get("threads_cpu_s"):
                log(f"  {runner}: CPU s by thread: " +
                    ", ".join(f"{k} {v:.2f}" for k, v in r["threads_cpu_s"].items() if v >= 0.005))
    finally:
        c.stop(keep=a.keep)
    return out


def envelope_one(c, runner, ns, count, a):
    cfg = os.path.join(c.dir, f"{runner}-env-config.json")
    scheduler_config(c, runner, a.qps, a.burst, cfg)
    w = subprocess.Popen(apitool(c, "watch", "-ns", ns, "-count", str(count), "-timeout", "900"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = w.stderr.readline()
    if line.strip() != "ready":
        raise RuntimeError(f"watch: {line}{w.stderr.read()}")
    # the API server's own CPU with no scheduler running (after a load of
    # 150,000 pods it is not idle for minutes): subtracted from what it
    # spends over the scheduler's span, so that the order of the runners
    # does not decide the comparison
    b0, bt0 = cpu_s(c.apiserver.pid), time.monotonic()
    time.sleep(a.envelope_rest)
    rest_rate = (cpu_s(c.apiserver.pid) - b0) / (time.monotonic() - bt0)
    before = plain_list(c) if a.envelope_plain_before else None
    if a.envelope_gc:
        # a GC in the API server now: the runner does not pay (or escape) a
        # collection of garbage left by what ran before it (a GC of the
        # envelope's heap costs the API server 1.3-3.9 s)
        import list_study  # noqa: E402
        list_study.force_gc(c)
        time.sleep(1)
    prof = None
    if a.envelope_profile:
        # the API server's own CPU profile over the runner's start
        # (bench/list_study.py reads it: where its CPU goes)
        import list_study  # noqa: E402
        prof = {"path": os.path.join(OUT, f"envelope-{runner}-{int(time.time())}.apiserver.pb.gz")}
        prof["thread"] = threading.Thread(target=list_study.profile, args=(c, a.envelope_profile, prof["path"]))
        prof["thread"].start()
        time.sleep(0.3)
    m0 = apiserver_metrics(c)
    api0, etcd0 = cpu_s(c.apiserver.pid), cpu_s(c.etcd.pid)
    t0 = time.time_ns()
    port = C.free_port()
    p = c.spawn(f"{runner}-envelope", runner_cmd(c, runner, cfg, port))
    last = {"rss": 0.0}

    def sample():
        while p.poll() is None and not last.get("stop"):
            last["rss"] = max(last["rss"], peak_rss_mb(p.pid))
            time.sleep(0.2)
    sm = threading.Thread(target=sample, daemon=True)
    sm.start()
    outw, _ = w.communicate()
    t1 = time.time_ns()
    m1 = apiserver_metrics(c)
    api_cpu, etcd_cpu = cpu_s(c.apiserver.pid) - api0, cpu_s(c.etcd.pid) - etcd0
    sched_cpu = cpu_s(p.pid)
    threads = thread_cpu_s(p.pid)
    res = json.loads(outw) if outw.strip() else {"bound": [], "complete": False}
    bound = res["bound"]
    r = {"workload": "Envelope", "runner": runner, "pods": count, "bound": len(bound),
         "threads_cpu_s": threads,
         "nodes": a.envelope_nodes, "bound_pods": a.envelope_pods,
         "first_binding_s": (bound[0] - t0) / 1e9 if bound else None,
         "all_bound_s": (bound[-1] - t0) / 1e9 if bound else None,
         "throughput": throughput(bound, t0), "cpu_s": sched_cpu,
         "cpu_s_per_1000": sched_cpu * 1000 / max(1, len(bound)),
         "apiserver_cpu_s": api_cpu, "etcd_cpu_s": etcd_cpu, "apiserver_etcd_cpu_s": api_cpu + etcd_cpu,
         "apiserver_cpu_s_per_1000": api_cpu * 1000 / max(1, len(bound)),
         "apiserver_rest_cpu_per_s": rest_rate,
         "apiserver_cpu_s_net": max(0.0, api_cpu - rest_rate * (t1 - t0) / 1e9),
         "api": delta(m0, m1), "span_s": (t1 - t0) / 1e9}
    # The same list of pods as a plain client (Go, HTTP/2, protobuf, not
    # decoded): what the API server takes to encode and send it to anyone,
    # against the runner's time to its first binding.
    if prof:
        prof["thread"].join()
        import list_study  # noqa: E402
        r["apiserver_profile"] = {"path": prof["path"], **list_study.breakdown(prof["path"])}
    r["plain_list"] = plain_list(c)
    r["plain_list_before"] = before
    # resync: the API server killed and restarted under the running scheduler
    r["resync_s"] = r["resync_apiserver_cpu_s"] = r["resync_cpu_s"] = None
    r["apiserver_ready_s"] = None
    if a.envelope_no_resync:
        return finish_envelope(r, p, last, sm)
    log(f"  {runner}: all bound; killing and restarting the API server")
    if p.poll() is None:
        s0 = cpu_s(p.pid)
        c.kill_apiserver()
        c.start_apiserver()
        t2 = time.monotonic()
        try:
            # an API server with the envelope in etcd takes minutes to fill its watch cache
            c.wait_ready(timeout=1200)
        except RuntimeError as e:
            log(f"  {runner}: the API server did not come back: {e}")
            return finish_envelope(r, p, last, sm)
        r["apiserver_ready_s"] = time.monotonic() - t2
        api1 = 0.0  # the new API server's CPU from its start: the same start-up for every runner
        with open(os.path.join(c.dir, ns + "-probe.jsonl"), "w") as f:
            import gen  # noqa: E402
            f.write(json.dumps(gen.pod("pod-default", "probe", ns)) + "\n")
        w2 = subprocess.Popen(apitool(c, "watch", "-ns", ns, "-count", "1", "-timeout", "600"),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if w2.stderr.readline().strip() == "ready":
            load(c, [os.path.join(c.dir, ns + "-probe.jsonl")], "the probe pod")
            o2, _ = w2.communicate()
            got = json.loads(o2) if o2.strip() else {"bound": []}
            if got["bound"]:
                r["resync_s"] = time.monotonic() - t2
        else:
            w2.kill()
        r["resync_apiserver_cpu_s"] = cpu_s(c.apiserver.pid) - api1
        r["resync_cpu_s"] = cpu_s(p.pid) - s0
        r["cpu_s_total"] = cpu_s(p.pid)
    return finish_envelope(r, p, last, sm)


def plain_list(c):
    """apitool list of every pod, as a scheduler's pod informer asks."""
    fs = "status.phase!=Succeeded,status.phase!=Failed"
    lp = subprocess.run(apitool(c, "list", "-path", "/api/v1/pods?limit=500&resourceVersion=0&fieldSelector=" +
                                urllib.parse.quote(fs, safe="")), capture_output=True, text=True)
    return json.loads(lp.stdout) if lp.returncode == 0 and lp.stdout.strip() else None


def finish_envelope(r, p, last, sm):
    r["peak_rss_mb"] = max(peak_rss_mb(p.pid), last["rss"])
    last["stop"] = True
    if p.poll() is None:
        os.killpg(p.pid, 9)
        p.wait()
    sm.join()
    return r


def envelope_report(rs):
    if not rs:
        return
    by = {r["runner"]: r for r in rs}
    k, u = by.get("ksched"), by.get("kube-scheduler")
    r0 = rs[0]
    print(f"\nEnvelope: {r0['nodes']} nodes, {r0['bound_pods']} bound pods, {r0['pods']} pending per scheduler")
    rows = [("", "first bind s", "all bound s", "sched CPU s", "peak RSS MiB", "apiserver CPU s",
             "apiserver CPU s over rest",
             "apiserver CPU s/1000 pods", "LIST MB", "watch events MB", "apiserver back s", "resync s",
             "resync apiserver CPU s")]
    for r in rs:
        rows.append((r["runner"], fmt(r["first_binding_s"], "%.2f"), fmt(r["all_bound_s"], "%.2f"),
                     fmt(r["cpu_s"], "%.2f"), fmt(r["peak_rss_mb"], "%.0f"), fmt(r["apiserver_cpu_s"], "%.2f"),
                     fmt(r.get("apiserver_cpu_s_net"), "%.2f"),
                     fmt(r["apiserver_cpu_s_per_1000"], "%.2f"), fmt(r["api"]["list_bytes"] / 1e6, "%.1f"),
                     fmt(r["api"]["watch_event_bytes"] / 1e6, "%.1f"), fmt(r.get("apiserver_ready_s"), "%.0f"),
                     fmt(r["resync_s"], "%.2f"), fmt(r["resync_apiserver_cpu_s"], "%.2f")))
    if k and u:
        def ratio(key, f=lambda r, key: r[key]):
            x, y = f(k, key), f(u, key)
            return f"{x / y:.2f}" if x is not None and y else "-"
        rows.append(("ksched/kube-scheduler", ratio("first_binding_s"), ratio("all_bound_s"), ratio("cpu_s"),
                     ratio("peak_rss_mb"), ratio("apiserver_cpu_s"), ratio("apiserver_cpu_s_net"),
                     ratio("apiserver_cpu_s_per_1000"),
                     ratio("list_bytes", lambda r, key: r["api"][key]),
                     ratio("watch_event_bytes", lambda r, key: r["api"][key]), "", ratio("resync_s"),
                     ratio("resync_apiserver_cpu_s")))
    wid = [max(len(str(x[i])) for x in rows) for i in range(len(rows[0]))]
    for x in rows:
        print("  ".join(str(v).ljust(wid[i]) for i, v in enumerate(x)))


# ---- report ----------------------------------------------------------------------

def fmt(v, f="%.0f"):
    return "-" if v is None else f % v


def report(results, a, sims):
    print(f"\nbench-api: {a.nodes} nodes, ksched and kube-scheduler at qps {a.qps}/burst {a.burst}"
          f" (kube-scheduler-default: 50/100); load {os.getloadavg()[0]:.2f}")
    hdr = ("workload", "runner", "pods/s avg", "p50", "p90", "first bind s", "half bound s", "all bound s",
           "CPU s/1000 pods",
           "peak RSS MiB", "apiserver+etcd CPU s", "attempts/pod", "victims", "evictions", "bound")
    rows = [hdr]
    for r in results:
        t = r["throughput"]
        rows.append((r["workload"], r["runner"], fmt(t.get("average")), fmt(t.get("p50")),
                     fmt(t.get("p90")), fmt(r["first_binding_s"], "%.2f"),
                     fmt(r.get("half_bound_s"), "%.2f"), fmt(r.get("all_bound_s"), "%.2f"),
                     fmt(r["cpu_s_per_1000"], "%.2f"), fmt(r["peak_rss_mb"], "%.1f"),
                     fmt(r["apiserver_etcd_cpu_s"], "%.1f"), fmt(r.get("attempts_per_pod"), "%.2f"),
                     fmt(r.get("preemption_victims")), fmt(r.get("evictions")),
                     f"{r['bound']}/{r['pods']}"))
    wid = [max(len(str(x[i])) for x in rows) for i in range(len(hdr))]
    for x in rows:
        print("  ".join(str(v).ljust(wid[i]) for i, v in enumerate(x)))
    print()
    by = {}
    for r in results:
        by.setdefault(r["workload"], {})[r["runner"]] = r
    for w, rs in by.items():
        if w == "ColdStart":
            continue
        get = lambda k: rs[k]["throughput"].get("average") if k in rs else None  # noqa: E731
        x, y, z = get("ksched"), get("kube-scheduler"), get("ceiling")
        ratio = f"{x / y:.1f}x" if x and y else "-"
        # how near ksched comes to what the API server takes (the other
        # criterion where the ceiling is below twice kube-scheduler's)
        of_ceiling = f"  ksched/ceiling {100 * x / z:.0f} %" if x and z else ""
        print(f"{w}  ksched {fmt(x)} pods/s  kube-scheduler {fmt(y)} pods/s  ceiling {fmt(z)} pods/s  {ratio}"
              f"{of_ceiling}")
        if is_preemption(w):
            parts = [f"simulate victims {fmt(sims.get(w))}"]
            for k in ("ksched", "kube-scheduler", "kube-scheduler-default", "ceiling"):
                if k in rs:
                    r = rs[k]
                    parts.append(f"{k} victims {fmt(r.get('preemption_victims'))} evictions {fmt(r.get('evictions'))} "
                                 f"attempts/preemptor {fmt(r.get('attempts_per_pod'), '%.2f')} "
                                 f"evictions/preemptor {fmt(r.get('evictions_per_preemptor'), '%.2f')}")
            print(f"{w}  " + "  ".join(parts))
    cold = by.get("ColdStart", {})
    if cold:
        print("ColdStart  " + "  ".join(f"{k} {fmt(v['first_binding_s'], '%.2f')} s"
                                        for k, v in cold.items()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--workloads", default=",".join(DEFAULT_WORKLOADS))
    ap.add_argument("--runners", default=",".join(r for r in RUNNERS if r not in ("ksched-json", "ksched-curl")))
    ap.add_argument("--qps", type=float, default=5000)
    ap.add_argument("--burst", type=int, default=5000)
    ap.add_argument("--cold-nodes", type=int, default=5000)
    ap.add_argument("--cold-pods", type=int, default=30000)
    ap.add_argument("--no-cold", action="store_true", help="skip the cold-start measurement")
    ap.add_argument("--cold-only", action="store_true")
    ap.add_argument("--envelope", action="store_true",
                    help="only the envelope (5000 nodes, 150,000 pods; long): cold start, CPU, RSS, API server "
                         "CPU and bytes, resync after an API server restart, each scheduler in turn")
    ap.add_argument("--envelope-nodes", type=int, default=5000)
    ap.add_argument("--envelope-pods", type=int, default=150000)
    ap.add_argument("--envelope-pending", type=int, default=1000)
    ap.add_argument("--envelope-warm", action="store_true",
                    help="list every pod once with a plain client before the first envelope runner")
    ap.add_argument("--envelope-profile", type=int, default=0, metavar="S",
                    help="the API server's CPU profile over S seconds from each envelope runner's start "
                         "(profiling on; its breakdown in results.json and the log)")
    ap.add_argument("--envelope-gc", action="store_true",
                    help="force a garbage collection in the API server before each envelope runner (profiling on)")
    ap.add_argument("--envelope-plain-before", action="store_true",
                    help="list every pod with a plain client just before each envelope runner starts")
    ap.add_argument("--envelope-no-resync", action="store_true",
                    help="skip the API server's restart under each envelope runner")
    ap.add_argument("--envelope-rest", type=float, default=30.0,
                    help="seconds the API server's CPU at rest is measured before each envelope runner")
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs per workload and runner; the median (by average throughput) is reported")
    ap.add_argument("--keep", action="store_true", help="keep each cluster's directory")
    ap.add_argument("--list", action="store_true", help="print the default workloads and exit")
    a = ap.parse_args()
    if a.list:
        print("\n".join(DEFAULT_WORKLOADS))
        return 0
    sys.path.insert(0, HERE)
    for tool in ("etcd", "kube-apiserver", "kube-scheduler", "kubectl"):
        if not os.access(os.path.join(C.BIN, tool), os.X_OK):
            log(f"{C.BIN}/{tool} missing (test/e2e/build.sh builds it)")
            return 2
    for b in (KSCHED, APITOOL):
        if not os.access(b, os.X_OK):
            log(f"{b} missing (bench/run.sh --api builds it)")
            return 2
    runners = [x for x in a.runners.split(",") if x]
    for x in runners:
        if x not in RUNNERS:
            log(f"unknown runner {x} (known: {', '.join(RUNNERS)})")
            return 2
    os.makedirs(OUT, exist_ok=True)
    results = []
    sims = {}
    t = time.monotonic()
    if a.envelope:
        a.cold_only, a.no_cold = True, True
        env = envelope(a, [x for x in runners if x in ("ksched", "kube-scheduler", "ksched-json", "ksched-curl")])
        results += env
    if not a.cold_only:
        for name in [x for x in a.workloads.split(",") if x]:
            d, meta = workload_files(name, a.nodes)
            if is_preemption(name):
                sims[name] = simulate_victims(name, d)
                log(f"{name}: ksched simulate chooses {fmt(sims[name])} victims")
            for runner in runners:
                log(f"{name} on {runner}")
                # --repeat: the run with the median average throughput
                runs = [run_one(name, runner, d, meta, a) for _ in range(a.repeat)]
                runs.sort(key=lambda x: x["throughput"].get("average", 0))
                r = runs[len(runs) // 2]
                if a.repeat > 1:
                    r["repeats"] = [x["throughput"].get("average", 0) for x in runs]
                results.append(r)
                log(f"  {runner}: {r['throughput'].get('average', 0):.0f} pods/s, "
                    f"{r['bound']}/{r['pods']} bound, CPU {r['cpu_s']:.1f} s, RSS {r['peak_rss_mb']:.0f} MiB, "
                    f"apiserver+etcd {r['apiserver_etcd_cpu_s']:.1f} s, "
                    f"attempts/pod {fmt(r.get('attempts_per_pod'), '%.2f')}, "
                    f"preemption victims {fmt(r.get('preemption_victims'))}, "
                    f"evictions {fmt(r.get('evictions'))}, load {os.getloadavg()[0]:.2f}")
                if r.get("threads_cpu_s"):
                    log(f"  {runner}: {r.get('threads')} threads; CPU s by thread: " +
                        ", ".join(f"{k} {v:.2f}" for k, v in r["threads_cpu_s"].items() if v >= 0.005))
    if not a.no_cold:
        results += cold_start(a, [x for x in runners if x != "kube-scheduler-default"])
    doc = {"nodes": a.nodes, "qps": a.qps, "burst": a.burst,
           "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                       "loadavg": os.getloadavg()},
           "seconds": time.monotonic() - t, "results": results, "simulate_victims": sims}
    with open(os.path.join(OUT, "results.json"), "w") as f:
        json.dump(doc, f, indent=1)
    if any(r["workload"] != "Envelope" for r in results):
        report([r for r in results if r["workload"] != "Envelope"], a, sims)
    envelope_report([r for r in results if r["workload"] == "Envelope"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
