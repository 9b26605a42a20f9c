#!/usr/bin/env python3
"""Upstream's own [sig-scheduling] end-to-end tests (e2e.test v1.34.1)
against ksched and against kube-scheduler v1.34.1, on the same environment.

Each run gets a cluster of its own (cluster.py: etcd + kube-apiserver),
kube-controller-manager v1.34.1 (namespace deletion, ReplicaSets,
ReplicationControllers, garbage collection, default service accounts),
KWOK's fake kubelets (pods reach Running and Ready without containers) on
NODES fake nodes, and the scheduler under test as `default-scheduler`.
Then e2e.test runs with --ginkgo.focus on [sig-scheduling] (minus SKIPS,
each with its reason). Per scheduler: JUnit XML and the e2e log in
OUT/<scheduler>/; for the whole run: OUT/summary.md (test by test), and
the last lines are

    ksched: P passed, F failed, S skipped
    kube-scheduler: P passed, F failed, S skipped

With both schedulers the exit status is 1 when a test that passes with
kube-scheduler does not pass with ksched; with one, when a test failed.

    upstream.py [--ksched PATH] [--schedulers ksched,kube-scheduler]
                [--quick] [--focus REGEX] [--jobs N] [--out DIR] [--keep]

--quick runs QUICK (the subset `make test` runs); --focus narrows further;
--jobs 2 runs the two schedulers at once (two clusters; slower each, and
timing-sensitive tests may suffer on a loaded machine).
"""

import json
import os
import re
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster as C  # noqa: E402

ROOT = C.ROOT
BIN = C.BIN
KSCHED = os.path.join(ROOT, "build", "release", "ksched")
OUT = os.path.join(ROOT, "build", "upstream-e2e")
FOCUS = r"\[sig-scheduling\]"

# Tests that cannot run here, with the reason (regex on the full name).
# Skipped alike for both schedulers; everything else runs.
SKIPS = [
]

# The subset `make test` runs (test/sh/upstream_e2e.sh): short tests, one
# or two of each family that exercises the scheduler (filters, scores,
# gates, preemption, overhead); about a minute of tests per scheduler.
QUICK = [
    r"validates that NodeSelector is respected if matching",
    r"validates that required NodeAffinity setting is respected if matching",
    r"validates that taints-tolerations is respected if not matching",
    r"PodTopologySpread Filtering",
    r"non-empty schedulingGates",
    r"verify pod overhead is accounted for",
    r"validates basic preemption works",
    r"pod disruption condition is added to the preempted pod",
    r"don't match the PodAntiAffinity terms",
    r"PodTopologySpread Scoring",
]

# Fake nodes: 4 of them in 2 zones, a modest machine each (the tests fill
# nodes to a fraction of their allocatable; bigger nodes mean more filler
# pods, not better coverage).
NODES = 4
ZONES = ("zone-a", "zone-b")
NODE_CAPACITY = {"cpu": "4", "memory": "8Gi", "pods": "110",
                 "ephemeral-storage": "50Gi"}

# Per-node system pods e2e's node health check (WaitForTotalHealthy) looks
# for by name; without them every Serial test waits a minute and then goes
# on anyway. One pod per node whose name matches all three patterns.
SYSTEM_POD = "kube-proxy-fluentd-elasticsearch-node-problem-detector-{node}"


def log(msg):
    print(msg, flush=True)


def kubectl(c, *args, stdin=None, check=True):
    p = subprocess.run([os.path.join(BIN, "kubectl"), "--kubeconfig", c.admin_kubeconfig]
                       + list(args), capture_output=True, text=True, input=stdin, timeout=120)
    if check and p.returncode != 0:
        raise RuntimeError(f"kubectl {' '.join(args)}: {p.stderr.strip()[:400]}")
    return p.stdout


def wait_for(cond, timeout, what):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.5)
    raise RuntimeError(f"timed out after {timeout} s waiting for {what}")


def create_nodes(c):
    for i in range(NODES):
        name = f"kwok-node-{i}"
        labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                  "kubernetes.io/arch": "amd64", "type": "kwok",
                  "topology.kubernetes.io/zone": ZONES[i % len(ZONES)],
                  "topology.kubernetes.io/region": "region-1"}
        # Created with its capacity, as a kubelet registers (a node's status
        # may be set on create); KWOK keeps it and adds the conditions,
        # addresses and node info.
        c.post("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node",
                                 "metadata": {"name": name, "labels": labels},
                                 "spec": {},
                                 "status": {"capacity": dict(NODE_CAPACITY),
                                            "allocatable": dict(NODE_CAPACITY)}})
    return [f"kwok-node-{i}" for i in range(NODES)]


def create_system_pods(c, nodes):
    # Bound through pods/binding, as a scheduler binds: the API server then
    # sets PodScheduled, which e2e's GetPodsScheduled requires of every pod
    # on a node (a kubelet would add it; KWOK's pod stages do not).
    for n in nodes:
        name = SYSTEM_POD.format(node=n)
        c.post("/api/v1/namespaces/kube-system/pods", {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "kube-system"},
            "spec": {"schedulerName": "e2e-none", "priorityClassName": "system-node-critical",
                     "tolerations": [{"operator": "Exists"}],
                     "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}})
        c.post(f"/api/v1/namespaces/kube-system/pods/{name}/binding", {
            "apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
            "target": {"apiVersion": "v1", "kind": "Node", "name": n}})


def nodes_ready(c, nodes):
    items = c.get("/api/v1/nodes")["items"]
    ready = {n["metadata"]["name"] for n in items
             if any(x["type"] == "Ready" and x["status"] == "True"
                    for x in n.get("status", {}).get("conditions", []))
             and not n["spec"].get("taints")}
    return set(nodes) <= ready


def pods_running(c, ns):
    items = c.get(f"/api/v1/namespaces/{ns}/pods")["items"]
    return items and all(p.get("status", {}).get("phase") == "Running" for p in items)


def sa_ready(c):
    try:
        c.get("/api/v1/namespaces/default/serviceaccounts/default")
        return True
    except C.ApiError:
        return False


def start_kcm(c):
    ca, _, _, sa = c.certs
    return c.spawn("kube-controller-manager", [
        os.path.join(BIN, "kube-controller-manager"),
        f"--kubeconfig={c.admin_kubeconfig}",
        "--leader-elect=false", "--secure-port=0",
        f"--service-account-private-key-file={sa}", f"--root-ca-file={ca}",
        "--use-service-account-credentials=false",
        # No cloud, no node IPAM: KWOK gives pods their IPs.
        "--allocate-node-cidrs=false", "--v=1"])


def start_kwok(c):
    return c.spawn("kwok", [
        os.path.join(BIN, "kwok"), f"--kubeconfig={c.admin_kubeconfig}",
        f"--config={os.path.join(BIN, 'kwok-stages.yaml')}",
        "--manage-all-nodes", "--cidr=10.244.0.0/16", "--node-ip=10.99.0.1",
        "--node-lease-duration-seconds=40"])


def start_scheduler(c, impl, ksched):
    if impl == "ksched":
        kc = c.ksched_kubeconfig
    else:
        kc = c.kube_scheduler_kubeconfig
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1",
           "kind": "KubeSchedulerConfiguration",
           "clientConnection": {"kubeconfig": kc},
           "leaderElection": {"leaderElect": False},
           "profiles": [{"schedulerName": "default-scheduler"}]}
    path = os.path.join(c.dir, impl + "-config.yaml")
    with open(path, "w") as f:
        json.dump(cfg, f, indent=1)
    if impl == "ksched":
        cmd = [ksched, "run", "--config", path, "-v=2"]
        h = subprocess.run([ksched, "run", "--help"], capture_output=True, text=True)
        if "--secure-port" in h.stdout + h.stderr:
            cmd.append("--secure-port=0")
    else:
        cmd = [os.path.join(BIN, "kube-scheduler"), "--config", path,
               "--bind-address=127.0.0.1", f"--secure-port={C.free_port()}", "-v=2"]
    return c.spawn(impl, cmd)


def list_tests(focus):
    """Full names of the tests the focus selects (e2e.test --list-tests)."""
    p = subprocess.run([os.path.join(BIN, "e2e.test"), "--list-tests"],
                       capture_output=True, text=True, timeout=300)
    names = []
    for line in p.stdout.splitlines():
        # "    <file>:<line>: <name>"
        m = re.match(r"\s*\S+:\d+: (.*)$", line)
        if m and re.search(focus, m.group(1)):
            names.append(m.group(1).strip())
    return names


def parse_junit(path):
    """{name: (state, message, seconds)} with state passed|failed|skipped."""
    out = {}
    if not os.path.exists(path):
        return out
    for tc in ET.parse(path).getroot().iter("testcase"):
        name = tc.get("name", "")
        if name.startswith("[It] "):
            name = name[len("[It] "):]
        secs = float(tc.get("time") or 0)
        state, msg = "passed", ""
        for child in tc:
            if child.tag in ("failure", "error"):
                state = "failed"
                msg = (child.get("message") or child.text or "").strip()
                break
            if child.tag == "skipped":
                state = "skipped"
                msg = (child.get("message") or "").strip()
        # Ginkgo's suite-level nodes ([BeforeSuite]...) are not tests, but a
        # failure there is reported.
        if name.startswith("[") and not name.startswith("[sig-") and state != "failed":
            continue
        out[name] = (state, msg, secs)
    return out


def run_one(impl, args, names):
    """One scheduler, one cluster: returns {name: (state, message, seconds)}."""
    out = os.path.join(args.out, impl)
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        if f.startswith("junit") and f.endswith(".xml"):
            os.unlink(os.path.join(out, f))
    t0 = time.monotonic()
    c = C.Cluster(lifetime=args.lifetime)
    failed = True
    try:
        c.start()
        kubectl(c, "apply", "-f", os.path.join(ROOT, "deploy", "serviceaccount.yaml"),
                "-f", os.path.join(ROOT, "deploy", "rbac.yaml"))
        start_kcm(c)
        start_kwok(c)
        nodes = create_nodes(c)
        wait_for(lambda: sa_ready(c), 60, "the default service account (kube-controller-manager)")
        wait_for(lambda: nodes_ready(c, nodes), 60, "KWOK to make the nodes Ready")
        create_system_pods(c, nodes)
        wait_for(lambda: pods_running(c, "kube-system"), 60, "the per-node system pods to run")
        start_scheduler(c, impl, args.ksched)
        log(f"# {impl}: environment ready in {time.monotonic() - t0:.1f} s "
            f"({NODES} KWOK nodes); directory {c.dir}")
        skip = "|".join(f"(?:{r})" for r, _ in SKIPS)
        cmd = [os.path.join(BIN, "e2e.test"),
               "--provider=skeleton", f"--kubeconfig={c.admin_kubeconfig}",
               f"--kubectl-path={os.path.join(BIN, 'kubectl')}",
               f"--report-dir={out}", f"--e2e-output-dir={out}",
               f"--ginkgo.focus={args.focus}",
               "--ginkgo.no-color", "--ginkgo.timeout=85m",
               "--ginkgo.flake-attempts=1",
               "--node-schedulable-timeout=2m", "--system-pods-startup-timeout=2m",
               "--minStartupPods=0", "--dump-logs-on-failure=false",
               "--disable-log-dump"]
        if skip:
            cmd.append(f"--ginkgo.skip={skip}")
        with open(os.path.join(out, "e2e.log"), "w") as lf:
            t1 = time.monotonic()
            p = subprocess.run(cmd, stdout=lf, stderr=subprocess.STDOUT, cwd=out,
                               env=c.env(), timeout=max(60, c.deadline - time.monotonic() - 30))
        log(f"# {impl}: e2e.test exited {p.returncode} after {time.monotonic() - t1:.0f} s")
        failed = False
    except Exception as e:  # noqa: BLE001
        log(f"# {impl}: run broken: {e}")
    finally:
        # The scheduler's and the other components' logs are kept with the
        # results.
        for name in (impl, "kube-controller-manager", "kwok", "kube-apiserver"):
            src = os.path.join(c.dir, name + ".log")
            if os.path.exists(src):
                with open(src, "rb") as fi, open(os.path.join(out, name + ".log"), "wb") as fo:
                    fo.write(fi.read())
        c.stop(keep=args.keep or failed)
        if args.keep or failed:
            log(f"# {impl}: cluster directory kept: {c.dir}")
    res = parse_junit(os.path.join(out, "junit_01.xml"))
    results = {}
    for n in names:
        reason = next((why for r, why in SKIPS if re.search(r, n)), None)
        if reason:
            results[n] = ("skipped", reason, 0.0)
        elif n in res:
            results[n] = res[n]
        else:
            results[n] = ("failed", "no result (run broken or timed out)", 0.0)
    for n, r in res.items():
        if n not in results and r[0] == "failed":
            results[n] = r
    results["__wall__"] = time.monotonic() - t0
    return results


def go_escape(s):
    return re.sub(r"([\\.+*?()|\[\]{}^$])", r"\\\1", s)


def first_line(s, n=160):
    s = re.sub(r"0x[0-9a-f]+", "0x…", " ".join(s.split()))
    return s[:n] + ("…" if len(s) > n else "")


def summary(all_res, impls, names, path):
    lines = ["| test | " + " | ".join(impls) + " | note |",
             "|---|" + "---|" * len(impls) + "---|"]
    extra = sorted({n for r in all_res.values() for n in r if n not in names and n != "__wall__"})
    for n in names + extra:
        cells, notes = [], []
        for i in impls:
            st, msg, secs = all_res[i].get(n, ("-", "", 0))
            cells.append(f"{st} ({secs:.0f} s)" if st != "skipped" else "skipped")
            if msg and st != "passed" and first_line(msg) not in notes:
                notes.append(first_line(msg))
        short = n.replace("[sig-scheduling] ", "")
        lines.append(f"| {short} | " + " | ".join(cells) + " | " + "; ".join(notes).replace("|", "\\|") + " |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return lines


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ksched", default=KSCHED)
    ap.add_argument("--schedulers", default="ksched,kube-scheduler")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--focus", default=None)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--lifetime", type=int, default=95 * 60)
    args = ap.parse_args(argv)
    args.ksched = os.path.abspath(args.ksched)
    args.out = os.path.abspath(args.out)
    impls = [s for s in args.schedulers.split(",") if s]
    for tool in ("etcd", "kube-apiserver", "kubectl", "kube-scheduler",
                 "kube-controller-manager", "kwok", "e2e.test", "kwok-stages.yaml"):
        if not os.path.exists(os.path.join(BIN, tool)):
            log(f"{BIN}/{tool} missing: run test/e2e/build.sh upstream")
            return 1
    # Python selects the tests; ginkgo gets their names (Go's regexp has
    # no lookahead to combine the filters).
    names = list_tests(FOCUS)
    if args.quick:
        names = [n for n in names if any(re.search(q, n) for q in QUICK)]
    if args.focus:
        names = [n for n in names if re.search(args.focus, n)]
    if args.quick or args.focus:
        focus = "|".join(go_escape(n) for n in names)
    else:
        focus = FOCUS
    args.focus = focus
    if not names:
        log("no test selected")
        return 1
    os.makedirs(args.out, exist_ok=True)
    log(f"# {len(names)} tests selected; schedulers: {', '.join(impls)}")
    t0 = time.monotonic()
    all_res = {}
    if args.jobs > 1 and len(impls) > 1:
        ths = [threading.Thread(target=lambda i=i: all_res.__setitem__(i, run_one(i, args, names)))
               for i in impls]
        for t in ths:
            t.start()
        for t in ths:
            t.join()
    else:
        for i in impls:
            all_res[i] = run_one(i, args, names)
    # One line per test and scheduler; test/run.sh counts the "ok" and
    # "FAIL" lines. kube-scheduler is the reference: its results are
    # reported ("ref") next to ksched's, not counted as ksched's are.
    for i in impls:
        for n in names:
            st, msg, secs = all_res[i][n]
            short = n.replace("[sig-scheduling] ", "")
            if i != "ksched" and "ksched" in impls:
                log(f"ref  {i}: {st}: {short}" + (f": {first_line(msg)}" if st == "failed" else ""))
            elif st == "passed":
                log(f"ok   {i}: {short} ({secs:.0f} s)")
            elif st == "skipped":
                log(f"skip {i}: {short}: {first_line(msg)}")
            else:
                log(f"FAIL {i}: {short}: {first_line(msg)}")
    lines = summary(all_res, impls, names, os.path.join(args.out, "summary.md"))
    print("\n".join(lines))
    log(f"# total {time.monotonic() - t0:.0f} s; " + ", ".join(
        f"{i} {all_res[i]['__wall__']:.0f} s" for i in impls) + f"; table in {args.out}/summary.md")
    status = 0
    if "ksched" in all_res and "kube-scheduler" in all_res:
        worse = [n for n in names if all_res["kube-scheduler"][n][0] == "passed"
                 and all_res["ksched"][n][0] != "passed"]
        for n in worse:
            log(f"# passes with kube-scheduler, not with ksched: {n}")
        status = 1 if worse else 0
    for i in impls:
        r = [v for k, v in all_res[i].items() if k != "__wall__"]
        p = sum(1 for v in r if v[0] == "passed")
        f = sum(1 for v in r if v[0] == "failed")
        s = sum(1 for v in r if v[0] == "skipped")
        if len(impls) == 1 and f:
            status = 1
        log(f"{i}: {p} passed, {f} failed, {s} skipped")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
