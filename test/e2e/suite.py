#!/usr/bin/env python3
"""The end-to-end suite: ksched against a real kube-apiserver v1.34.1 + etcd.

Each test asserts what a user sees through kubectl or the API. Output, one
line per test: "ok   NAME (T s)", "FAIL NAME (T s): why" or
"skip NAME: why" (a skipped test is never counted as passed).

    suite.py [--ksched PATH] [--keep] [-k SUBSTRING]...

--keep leaves each cluster's directory (logs, audit log) behind.
"""

import json
import os
import subprocess
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster as C  # noqa: E402

ROOT = C.ROOT
KSCHED = os.path.join(ROOT, "build", "release", "ksched")
KEEP = False


class Skip(Exception):
    pass


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def kubectl(c, *args, kubeconfig=None, ok=True, stdin=None, timeout=60):
    """Run kubectl as the admin (or another kubeconfig); returns
    (status, stdout, stderr); with ok=True a non-zero status fails the test."""
    cmd = [os.path.join(C.BIN, "kubectl"),
           "--kubeconfig", kubeconfig or c.admin_kubeconfig] + list(args)
    p = subprocess.run(cmd, capture_output=True, text=True, input=stdin,
                       timeout=timeout)
    if ok and p.returncode != 0:
        raise Fail(f"kubectl {' '.join(args)}: status {p.returncode}: "
                   f"{p.stderr.strip()[:400]}")
    return p.returncode, p.stdout, p.stderr


def kjson(c, *args, **kw):
    return json.loads(kubectl(c, *args, "-o", "json", **kw)[1])


def wait_for(cond, timeout, what, step=0.2):
    end = time.monotonic() + timeout
    last = None
    while time.monotonic() < end:
        last = cond()
        if last:
            return last
        time.sleep(step)
    raise Fail(f"timed out after {timeout} s waiting for {what}")


def node(name, labels=None, cpu="4", memory="16Gi", pods="110", taints=None):
    n = {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": name, "labels": dict({"kubernetes.io/hostname": name},
                                                   **(labels or {}))},
         "spec": {},
         "status": {"capacity": {"cpu": cpu, "memory": memory, "pods": pods},
                    "allocatable": {"cpu": cpu, "memory": memory, "pods": pods},
                    "conditions": [{"type": "Ready", "status": "True",
                                    "reason": "KubeletReady",
                                    "message": "e2e node without a kubelet"}]}}
    if taints:
        n["spec"]["taints"] = taints
    return n


def create_node(c, n):
    """Nodes are created with their status (a kubelet would post it): the
    object, then its status subresource."""
    status = n["status"]
    c.post("/api/v1/nodes", n)
    cur = c.get(f"/api/v1/nodes/{n['metadata']['name']}")
    cur["status"] = status
    c.request("PUT", f"/api/v1/nodes/{n['metadata']['name']}/status", cur)


def pod(name, scheduler="default-scheduler", cpu="100m", ns="default", **spec):
    p = {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": name, "namespace": ns},
         "spec": dict({"schedulerName": scheduler,
                       "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                       "resources": {"requests": {"cpu": cpu}}}]},
                      **spec)}
    return p


def have_run():
    if not os.access(KSCHED, os.X_OK):
        return False, f"{KSCHED} not built"
    p = subprocess.run([KSCHED, "run", "--help"], capture_output=True, text=True)
    if p.returncode != 0:
        return False, "`ksched run` is not implemented yet"
    return True, ""


def need_run():
    ok, why = have_run()
    if not ok:
        raise Skip(why)


# ---- tests ---------------------------------------------------------------

def test_env_smoke(c):
    """The environment itself: versions, identities, and the audit log's
    count of bindings (which later tests rely on) seen to count."""
    _, out, _ = kubectl(c, "version", "-o", "json")
    v = json.loads(out)
    check(v["clientVersion"]["gitVersion"] == "v1.34.1", f"client version {v['clientVersion']}")
    check(v["serverVersion"]["gitVersion"] == "v1.34.1", f"server version {v['serverVersion']}")
    _, out, _ = kubectl(c, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}",
                        kubeconfig=c.ksched_kubeconfig)
    check(out == C.KSCHED_USER, f"ksched identity is {out!r}")
    # Without deploy/'s bindings ksched may not bind.
    rc, out, _ = kubectl(c, "auth", "can-i", "create", "pods", "--subresource=binding",
                         kubeconfig=c.ksched_kubeconfig, ok=False)
    check(out.strip() == "no", f"ksched can bind before deploy/ is applied: {out!r}")
    # No TaintNodesByCondition: a new node has no taint.
    create_node(c, node("smoke-node"))
    n = kjson(c, "get", "node", "smoke-node")
    check(not n["spec"].get("taints"), f"new node has taints {n['spec'].get('taints')}")
    # A binding by hand is counted once; a second one is refused (409) and
    # not counted.
    c.post("/api/v1/namespaces/default/pods", pod("smoke-pod", scheduler="nobody"))
    bind = {"apiVersion": "v1", "kind": "Binding",
            "metadata": {"name": "smoke-pod", "namespace": "default"},
            "target": {"apiVersion": "v1", "kind": "Node", "name": "smoke-node"}}
    c.post("/api/v1/namespaces/default/pods/smoke-pod/binding", bind)
    try:
        c.post("/api/v1/namespaces/default/pods/smoke-pod/binding", bind)
        raise Fail("a second binding was accepted")
    except C.ApiError as e:
        check(e.code == 409, f"second binding: {e}")
    _, out, _ = kubectl(c, "get", "pod", "smoke-pod", "-o", "jsonpath={.spec.nodeName}")
    check(out == "smoke-node", f"pod bound to {out!r}")
    b = wait_for(lambda: c.bindings().get("default/smoke-pod"), 10, "the audit log")
    check(b == ["smoke-node"], f"audit log bindings {b}")
    kubectl(c, "delete", "pod", "smoke-pod", "--grace-period=0", "--force")
    kubectl(c, "delete", "node", "smoke-node")


MANIFESTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "manifests")


def install_podgroup_crd(c):
    kubectl(c, "apply", "-f", os.path.join(MANIFESTS, "podgroup-crd.yaml"))
    kubectl(c, "wait", "--for=condition=Established", "--timeout=30s",
            "crd/podgroups.scheduling.x-k8s.io")


def apply_deploy(c):
    return kubectl(c, "apply", "-k", os.path.join(ROOT, "deploy"))


def test_deploy_apply(c):
    """deploy/ applies with kubectl apply -k, reads back as written, and
    grants the ksched identity what kube-scheduler may do and no more."""
    install_podgroup_crd(c)
    _, out, _ = apply_deploy(c)
    for what in ("serviceaccount/ksched", "configmap/ksched-config",
                 "deployment.apps/ksched", "clusterrolebinding.rbac.authorization.k8s.io/ksched:kube-scheduler"):
        check(what in out, f"apply -k did not create {what}: {out}")
    _, out, _ = apply_deploy(c)
    check(all(l.endswith(" unchanged") for l in out.strip().splitlines()),
          f"second apply changed something: {out}")
    d = kjson(c, "-n", "kube-system", "get", "deployment", "ksched")
    ct = d["spec"]["template"]["spec"]["containers"][0]
    for probe in ("livenessProbe", "readinessProbe"):
        g = ct[probe]["httpGet"]
        check(g["port"] == 10259 and g["scheme"] == "HTTPS", f"{probe} {g}")
    check(d["spec"]["template"]["spec"]["serviceAccountName"] == "ksched", "serviceAccountName")
    # No kubelet: the Deployment exists, no container runs.
    check(not d.get("status", {}).get("readyReplicas"), "ready replicas without a kubelet?")
    cm = kjson(c, "-n", "kube-system", "get", "configmap", "ksched-config")
    cfg = cm["data"]["config.yaml"]
    check("leaderElect: true" in cfg and "schedulerName: ksched" in cfg, f"config {cfg}")
    kc = c.ksched_kubeconfig
    allowed = [("create", "pods", "--subresource=binding"), ("list", "nodes"), ("watch", "pods"),
               ("patch", "pods", "--subresource=status"), ("delete", "pods"), ("create", "events.events.k8s.io"),
               ("list", "persistentvolumeclaims"), ("list", "storageclasses.storage.k8s.io"),
               ("list", "csinodes.storage.k8s.io"), ("list", "poddisruptionbudgets.policy"),
               ("list", "podgroups.scheduling.x-k8s.io"),
               ("create", "tokenreviews.authentication.k8s.io"),
               ("create", "subjectaccessreviews.authorization.k8s.io"),
               ("get", "configmaps/extension-apiserver-authentication", "-n", "kube-system"),
               ("update", "leases.coordination.k8s.io/ksched", "-n", "kube-system"),
               ("create", "leases.coordination.k8s.io", "-n", "kube-system")]
    denied = [("create", "pods"), ("delete", "nodes"), ("update", "nodes"),
              ("get", "secrets", "-n", "kube-system"),
              ("update", "leases.coordination.k8s.io/other", "-n", "kube-system")]
    for args in allowed + denied:
        _, out, _ = kubectl(c, "auth", "can-i", *args, kubeconfig=kc, ok=False)
        want = "yes" if args in allowed else "no"
        check(out.strip() == want, f"ksched can-i {' '.join(args)}: {out.strip()!r}, want {want}")


def test_deploy_config_valid(c):
    """The ConfigMap's KubeSchedulerConfiguration passes ksched check-config."""
    if not os.access(KSCHED, os.X_OK):
        raise Skip(f"{KSCHED} not built")
    cm = kjson(c, "-n", "kube-system", "get", "configmap", "ksched-config")
    path = os.path.join(c.dir, "deploy-config.yaml")
    with open(path, "w") as f:
        f.write(cm["data"]["config.yaml"])
    p = subprocess.run([KSCHED, "check-config", path], capture_output=True, text=True)
    check(p.returncode == 0, f"check-config: {p.returncode}: {p.stdout}{p.stderr}")


TESTS = [
    ("env_smoke", test_env_smoke),
    ("deploy_apply", test_deploy_apply),
    ("deploy_config_valid", test_deploy_config_valid),
]


def main(argv):
    global KSCHED, KEEP
    only = []
    i = 0
    while i < len(argv):
        if argv[i] == "--ksched":
            KSCHED = os.path.abspath(argv[i + 1]); i += 2
        elif argv[i] == "--keep":
            KEEP = True; i += 1
        elif argv[i] == "-k":
            only.append(argv[i + 1]); i += 2
        else:
            print(__doc__, file=sys.stderr)
            return 2
    tests = [t for t in TESTS if not only or any(o in t[0] for o in only)]
    t0 = time.monotonic()
    c = C.Cluster(lifetime=1800)
    try:
        c.start()
    except Exception as e:  # noqa: BLE001
        print(f"FAIL cluster_start ({time.monotonic() - t0:.1f} s): {e}")
        c.stop(keep=True)
        return 1
    print(f"ok   cluster_start ({time.monotonic() - t0:.1f} s)", flush=True)
    failed = 0
    try:
        for name, fn in tests:
            t = time.monotonic()
            try:
                fn(c)
                print(f"ok   {name} ({time.monotonic() - t:.1f} s)", flush=True)
            except Skip as e:
                print(f"skip {name}: {e}", flush=True)
            except Fail as e:
                failed += 1
                print(f"FAIL {name} ({time.monotonic() - t:.1f} s): {e}", flush=True)
            except Exception:  # noqa: BLE001
                failed += 1
                print(f"FAIL {name} ({time.monotonic() - t:.1f} s): exception", flush=True)
                traceback.print_exc(file=sys.stdout)
    finally:
        c.stop(keep=KEEP or failed > 0)
        if KEEP or failed:
            print(f"# cluster directory kept: {c.dir}")
    print(f"# total {time.monotonic() - t0:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
