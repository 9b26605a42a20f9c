#!/usr/bin/env python3
"""scheduler_perf workloads as manifests, for ksched_bench and kschedref --bench.

    gen.py --nodes N [--workloads A,B] [--init-pending] [--jsonl] -o DIR

writes, for every workload, DIR/<Workload>/:

  cluster.yaml    namespaces, services, nodes and the init pods
  measured.yaml   the measured pods (pending, in creation order)
  churn.yaml      the objects the churn op creates, in creation order
                  (only for workloads with a churn op)
  workload.json   what the runners need to know (counts, the measured
                  namespace, the churn op)

The workloads, templates and counts are upstream's
(k8s.io/kubernetes v1.34.1 test/integration/scheduler_perf, the
performance-config.yaml files and templates/), see WORKLOADS below.

Init pods are written already bound (spec.nodeName), init pod i on node
i mod N: every init pod template requests the same resources, so the
scheduler spreads them evenly over identical nodes (LeastAllocated,
BalancedAllocation), which is what round robin gives, and the benchmark
does not measure them anyway. --init-pending writes them unbound instead;
the runners then schedule them first, unmeasured.

Python 3, stdlib only. The same arguments always give the same files.
"""

import argparse
import json
import os
import re
import sys

# --------------------------------------------------------------------------
# upstream's templates (test/integration/scheduler_perf/templates), as the
# API server would store them: generateName replaced by a name, node
# allocatable defaulted from capacity, kubernetes.io/hostname added by the
# node preparer (node_util.go).

PAUSE = "registry.k8s.io/pause:3.10.1"


def container(cpu=None, mem=None, limits=True, port=True):
    c = {"image": PAUSE, "name": "pause"}
    if port:
        c["ports"] = [{"containerPort": 80}]
    if cpu is not None:
        req = {"cpu": cpu, "memory": mem}
        c["resources"] = {"limits": dict(req), "requests": dict(req)} if limits else {"requests": req}
    return c


def pod_default():
    return {"generateName": "pod-", "spec": {"containers": [container("100m", "500Mi")]}}


def pod_with_pod_anti_affinity():
    return {
        "generateName": "anti-affinity-pod-",
        "labels": {"color": "green"},
        "spec": {
            "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
                "labelSelector": {"matchLabels": {"color": "green"}},
                "topologyKey": "kubernetes.io/hostname",
                "namespaces": ["sched-1", "sched-0"]}]}},
            "containers": [container("100m", "500Mi")],
        },
    }


def pod_with_pod_affinity():
    return {
        "generateName": "affinity-pod-",
        "labels": {"color": "blue"},
        "spec": {
            "affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
                "labelSelector": {"matchLabels": {"color": "blue"}},
                "topologyKey": "topology.kubernetes.io/zone",
                "namespaces": ["sched-1", "sched-0"]}]}},
            "containers": [container("100m", "500Mi")],
        },
    }


def pod_with_preferred_pod_affinity():
    return {
        "generateName": "preferred-affinity-pod-",
        "labels": {"color": "red"},
        "spec": {
            "affinity": {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
                "podAffinityTerm": {
                    "labelSelector": {"matchLabels": {"color": "red"}},
                    "topologyKey": "kubernetes.io/hostname",
                    "namespaces": ["sched-1", "sched-0"]},
                "weight": 1}]}},
            "containers": [container("100m", "500Mi")],
        },
    }


def pod_with_node_affinity():
    return {
        "generateName": "node-affinity-",
        "spec": {
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{
                    "key": "topology.kubernetes.io/zone", "operator": "In",
                    "values": ["zone1", "zone2"]}]}]}}},
            "containers": [container("100m", "500Mi")],
        },
    }


def pod_with_topology_spreading(when):
    return {
        "generateName": "spreading-pod-",
        "labels": {"color": "blue"},
        "spec": {
            "topologySpreadConstraints": [{
                "maxSkew": 5,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": when,
                "labelSelector": {"matchLabels": {"color": "blue"}}}],
            "containers": [container("100m", "500Mi")],
        },
    }


def pod_with_label():
    return {"generateName": "pod-", "labels": {"app": "scheduler-perf"},
            "spec": {"containers": [container(port=False)]}}


def pod_low_priority():
    return {"generateName": "pod-",
            "spec": {"terminationGracePeriodSeconds": 0, "containers": [container("900m", "500Mi")]}}


def pod_high_priority():
    return {"generateName": "pod-high-priority-",
            "spec": {"priority": 10, "containers": [container("3000m", "500Mi")]}}


def pod_high_priority_large_cpu():
    return {"generateName": "pod-h-",
            "spec": {"priority": 10, "containers": [container("9", "500Mi", limits=False)]}}


# ksched's own (not upstream's): PreemptionMinimum's pods, sized so that
# the number of victims needed is known exactly
def pod_low_priority_1cpu():
    return {"generateName": "pod-",
            "spec": {"terminationGracePeriodSeconds": 0, "containers": [container("1", "500Mi")]}}


def pod_high_priority_2cpu():
    return {"generateName": "pod-high-priority-",
            "spec": {"priority": 10, "containers": [container("2", "500Mi")]}}


def pod_with_claim_template():
    # dra/templates/pod-with-claim-template.yaml
    c = container(port=False)
    c["resources"] = {"claims": [{"name": "resource"}]}
    return {"generateName": "test-dra",
            "spec": {"containers": [c],
                     "resourceClaims": [{"name": "resource", "resourceClaimTemplateName": "test-claim-template"}]}}


POD_TEMPLATES = {
    "pod-default": pod_default,
    "pod-with-pod-anti-affinity": pod_with_pod_anti_affinity,
    "pod-with-pod-affinity": pod_with_pod_affinity,
    "pod-with-preferred-pod-affinity": pod_with_preferred_pod_affinity,
    "pod-with-node-affinity": pod_with_node_affinity,
    "pod-with-topology-spreading": lambda: pod_with_topology_spreading("DoNotSchedule"),
    "pod-with-preferred-topology-spreading": lambda: pod_with_topology_spreading("ScheduleAnyway"),
    "pod-with-label": pod_with_label,
    "pod-low-priority": pod_low_priority,
    "pod-high-priority": pod_high_priority,
    "pod-high-priority-large-cpu": pod_high_priority_large_cpu,
    "pod-with-claim-template": pod_with_claim_template,
    "pod-low-priority-1cpu": pod_low_priority_1cpu,
    "pod-high-priority-2cpu": pod_high_priority_2cpu,
}

# --------------------------------------------------------------------------
# DRA (dra/performance-config.yaml, dra.go): the test driver publishes one
# ResourceSlice per node with maxClaimsPerNode devices; pods take one
# device each through a ResourceClaimTemplate.

DRA_DRIVER = "test-driver.cdi.k8s.io"


def dra_node(name):
    # dra/templates/node-with-dra-test-driver.yaml
    n = node(name)
    n["metadata"]["labels"]["node-with-dra"] = "true"
    return n


def dra_slice(node_name, devices):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": node_name},
            "spec": {"driver": DRA_DRIVER, "nodeName": node_name,
                     "pool": {"name": node_name, "resourceSliceCount": 1},
                     "devices": [{"name": f"instance-{i}",
                                  "attributes": {"model": {"string": "A100"}, "family": {"string": "GPU"},
                                                 "driverVersion": {"version": "1.2.3"},
                                                 "dra.example.com/numa": {"int": i}},
                                  "capacity": {"memory": {"value": "1Gi"}}} for i in range(devices)]}}


def dra_class():
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "test-class"},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRA_DRIVER}"'}}]}}


def dra_template(ns):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "test-claim-template", "namespace": ns},
            "spec": {"spec": {"devices": {"requests": [{"name": "req-0",
                                                        "exactly": {"deviceClassName": "test-class"}}]}}}}


def dra_bound_pod(name, ns, node_name, device):
    """An init pod already bound, as after its scheduling: its claim
    (created from the template, named as the claim controller names it)
    allocated to a device of its node and reserved for it."""
    p = pod("pod-with-claim-template", name, ns, node_name)
    claim = f"{name}-resource-bound"
    uid = f"uid-pod-{ns}/{name}"
    p["metadata"]["uid"] = uid
    p["status"] = {"resourceClaimStatuses": [{"name": "resource", "resourceClaimName": claim}]}
    c = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": claim, "namespace": ns,
                      "annotations": {"resource.kubernetes.io/pod-claim-name": "resource"},
                      "finalizers": ["resource.kubernetes.io/delete-protection"],
                      "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": name, "uid": uid,
                                           "controller": True, "blockOwnerDeletion": True}]},
         "spec": dra_template(ns)["spec"]["spec"],
         "status": {"allocation": {"devices": {"results": [{"request": "req-0", "driver": DRA_DRIVER,
                                                             "pool": node_name, "device": device}]},
                                   "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                       {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}},
                    "reservedFor": [{"resource": "pods", "name": name, "uid": uid}]}}
    return p, c


def pod(template, name, ns, node=None):
    t = POD_TEMPLATES[template]()
    meta = {"name": name, "namespace": ns}
    if "labels" in t:
        meta["labels"] = t["labels"]
    spec = dict(t["spec"])
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def node(name, zone=None):
    # templates/node-default.yaml
    cap = {"pods": "110", "cpu": "4", "memory": "32Gi"}
    labels = {"kubernetes.io/hostname": name}
    if zone:
        labels["topology.kubernetes.io/zone"] = zone
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "spec": {},
            "status": {"capacity": cap, "allocatable": dict(cap),
                       "conditions": [{"status": "True", "type": "Ready"}],
                       "phase": "Running"}}


def churn_node(name):
    # templates/churn/node-default.yaml: no kubernetes.io/hostname (the
    # churn op creates it directly, not through the node preparer)
    cap = {"pods": "0"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name},
            "status": {"capacity": cap, "allocatable": dict(cap),
                       "conditions": [{"status": "True", "type": "Ready"}],
                       "phase": "Running"}}


def service(name, ns, app, port, target):
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"selector": {"app": app},
                     "ports": [{"protocol": "TCP", "port": port, "targetPort": target}]}}


def namespace(name):
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


# --------------------------------------------------------------------------
# the workloads. Counts per node count: upstream's "performance, short"
# variant where there is one (the one meant for local before/after runs),
# else its only performance variant. 15000 nodes: upstream has none for
# these workloads; the 5000-node counts times three.
#
# Namespaces are upstream's: createPods without a namespace uses
# "namespace-<op index>", createNamespaces makes sched-0 and sched-1.

ZONE1 = ["zone1"]
MOONS = ["moon-1", "moon-2", "moon-3"]

WORKLOADS = {
    # misc/performance-config.yaml
    "SchedulingBasic": dict(
        init="pod-default", measured="pod-default", init_ns="namespace-1", measured_ns="namespace-2",
        counts={500: (500, 1000), 5000: (1000, 1000)}),
    # affinity/performance-config.yaml
    "SchedulingPodAntiAffinity": dict(
        init="pod-with-pod-anti-affinity", measured="pod-with-pod-anti-affinity",
        init_ns="sched-0", measured_ns="sched-1", namespaces=["sched-0", "sched-1"],
        counts={500: (100, 400), 5000: (1000, 1000)}),
    "SchedulingPodAffinity": dict(
        init="pod-with-pod-affinity", measured="pod-with-pod-affinity", zones=ZONE1,
        init_ns="sched-0", measured_ns="sched-1", namespaces=["sched-0", "sched-1"],
        counts={500: (500, 1000), 5000: (5000, 1000)}),
    "SchedulingPreferredPodAffinity": dict(
        init="pod-with-preferred-pod-affinity", measured="pod-with-preferred-pod-affinity",
        init_ns="sched-0", measured_ns="sched-1", namespaces=["sched-0", "sched-1"],
        counts={500: (500, 1000), 5000: (5000, 1000)}),
    "SchedulingNodeAffinity": dict(
        init="pod-with-node-affinity", measured="pod-with-node-affinity", zones=ZONE1,
        init_ns="namespace-1", measured_ns="namespace-2",
        counts={500: (500, 1000), 5000: (5000, 1000)}),
    # topology_spreading/performance-config.yaml
    "TopologySpreading": dict(
        init="pod-default", measured="pod-with-topology-spreading", zones=MOONS,
        init_ns="namespace-1", measured_ns="namespace-2",
        counts={500: (1000, 1000), 5000: (5000, 2000)}),
    "PreferredTopologySpreading": dict(
        init="pod-default", measured="pod-with-preferred-topology-spreading", zones=MOONS,
        init_ns="namespace-1", measured_ns="namespace-2",
        counts={500: (1000, 1000), 5000: (5000, 2000)}),
    "DefaultTopologySpreading": dict(
        init="pod-default", measured="pod-with-label", zones=MOONS,
        init_ns="namespace-2", measured_ns="service-ns",
        services=[("service-0", "service-ns", "scheduler-perf", 80, 8000)],
        counts={500: (1000, 1000), 5000: (5000, 10000)}),
    # misc: four low-priority pods per node (1000Nodes: 4000/1000). The
    # 5000-node variant is commented out upstream ("always seems to fail");
    # its 20000 init pods are kept, with 1000 preemptors: 5000 take
    # upstream's scheduler most of an hour here.
    "PreemptionBasic": dict(
        init="pod-low-priority", measured="pod-high-priority",
        init_ns="namespace-1", measured_ns="namespace-2",
        counts={500: (2000, 500), 5000: (20000, 1000)}),
    # ksched's own: 100 nodes (whatever --nodes says) of 4 CPUs, each full
    # with four 1-CPU low-priority pods; 100 high-priority 2-CPU
    # preemptors arrive at once. Each needs two victims on a node of its
    # own: exactly 200 victims are needed, so any more is an eviction for
    # nothing.
    "PreemptionMinimum": dict(
        init="pod-low-priority-1cpu", measured="pod-high-priority-2cpu", nodes=100,
        init_ns="namespace-1", measured_ns="namespace-2",
        counts={100: (400, 100)}),
    # a churn op (index 2) creates a 9-CPU high-priority pod every 200 ms
    "Unschedulable": dict(
        init="pod-default", measured="pod-default", init_ns="namespace-1", measured_ns="namespace-3",
        churn=dict(mode="create", number=0, interval_ms=200, namespace="namespace-2",
                   templates=["pod-high-priority-large-cpu"]),
        counts={500: (10, 1000), 5000: (100, 1000)}),
    # a churn op (index 1) recreates a node, a 9-CPU pod and a service
    # every second; 1000Nodes is 0/1000, 5000Nodes 0/2000
    # dra/performance-config.yaml, 5000pods_500nodes: 10 devices per node
    "SchedulingWithResourceClaimTemplate": dict(
        init="pod-with-claim-template", measured="pod-with-claim-template",
        init_ns="init", measured_ns="test", dra=dict(devices=10),
        counts={500: (2500, 2500), 5000: (10000, 5000)}),
    "SchedulingWithMixedChurn": dict(
        init=None, measured="pod-default", init_ns=None, measured_ns="namespace-2",
        churn=dict(mode="recreate", number=1, interval_ms=1000, namespace="namespace-1",
                   templates=["node", "pod-high-priority-large-cpu", "service"]),
        counts={500: (0, 1000), 5000: (0, 2000)}),
}

# Run when named (--workloads) only: upstream takes minutes on these.
OPT_IN = {"SchedulingWithResourceClaimTemplate"}
ORDER = [w for w in WORKLOADS if w not in OPT_IN]

# Churn objects written ahead: ten minutes of churn. A run that outlasts
# them stops churning (and says so).
CHURN_SECONDS = 600


def counts(w, n):
    c = w["counts"]
    if n in c:
        return c[n]
    if n == 15000:
        i, m = c[5000]
        return 3 * i, 3 * m
    # any other size: scale the nearest upstream variant by node count
    base = min(c, key=lambda k: abs(k - n))
    i, m = c[base]
    return max(0, round(i * n / base)), max(1, round(m * n / base))


# --------------------------------------------------------------------------
# a small YAML emitter (block style, strings double-quoted)

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_./-]*$")


def _key(k):
    return k if _PLAIN.match(k) else json.dumps(k)


def _scalar(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    return json.dumps(v)


def _emit(v, pad, out):
    for k, x in v.items():
        if isinstance(x, dict):
            if x:
                out.append(f"{pad}{_key(k)}:")
                _emit(x, pad + "  ", out)
            else:
                out.append(f"{pad}{_key(k)}: {{}}")
        elif isinstance(x, list):
            if not x:
                out.append(f"{pad}{_key(k)}: []")
                continue
            out.append(f"{pad}{_key(k)}:")
            for item in x:
                if isinstance(item, dict):
                    sub = []
                    _emit(item, pad + "    ", sub)
                    out.append(pad + "  - " + sub[0][len(pad) + 4:])
                    out.extend(sub[1:])
                else:
                    out.append(f"{pad}  - {_scalar(item)}")
        else:
            out.append(f"{pad}{_key(k)}: {_scalar(x)}")


# --jsonl: the same documents also as JSON, one object a line (what
# bench/api.py loads through the API server), beside each YAML file.
JSONL = False


def write_docs(path, docs):
    if JSONL:
        with open(os.path.splitext(path)[0] + ".jsonl", "w") as f:
            for d in docs:
                f.write(json.dumps(d, separators=(",", ":")))
                f.write("\n")
    with open(path, "w") as f:
        for d in docs:
            out = ["---"]
            _emit(d, "", out)
            f.write("\n".join(out))
            f.write("\n")


# --------------------------------------------------------------------------

def generate(name, n, outdir, init_pending):
    w = WORKLOADS[name]
    n = w.get("nodes", n)  # a workload of a fixed size
    ninit, nmeas = counts(w, n)
    d = os.path.join(outdir, name)
    os.makedirs(d, exist_ok=True)

    zones = w.get("zones")
    node_names = [f"scheduler-perf-{i:05d}" for i in range(n)]
    nss = set(w.get("namespaces", []))
    for key in ("init_ns", "measured_ns"):
        if w.get(key):
            nss.add(w[key])
    for s in w.get("services", []):
        nss.add(s[1])
    churn = w.get("churn")
    if churn:
        nss.add(churn["namespace"])

    docs = [namespace(x) for x in sorted(nss)]
    docs += [service(*s) for s in w.get("services", [])]
    dra = w.get("dra")
    if dra:
        node_names = [f"scheduler-perf-dra-{i:05d}" for i in range(n)]
        docs += [dra_node(nm) for nm in node_names]
        docs += [dra_slice(nm, dra["devices"]) for nm in node_names]
        docs += [dra_class(), dra_template(w["init_ns"])]
        gen = POD_TEMPLATES[w["init"]]()["generateName"]
        for i in range(ninit):
            pname = f"{gen}{i:05d}"
            if init_pending:
                docs.append(pod(w["init"], pname, w["init_ns"]))
            else:
                p, c = dra_bound_pod(pname, w["init_ns"], node_names[i % n], f"instance-{i // n}")
                docs += [c, p]
        ninit_done = True
    else:
        ninit_done = False
        # the label strategy patches nodes round robin over its values
        docs += [node(nm, zones[i % len(zones)] if zones else None) for i, nm in enumerate(node_names)]
    if ninit and not ninit_done:
        gen = POD_TEMPLATES[w["init"]]()["generateName"]
        for i in range(ninit):
            docs.append(pod(w["init"], f"{gen}{i:05d}", w["init_ns"],
                            None if init_pending else node_names[i % n]))
    write_docs(os.path.join(d, "cluster.yaml"), docs)

    gen = POD_TEMPLATES[w["measured"]]()["generateName"]
    # measured names must not clash with init names in the same namespace
    base = ninit if w.get("init_ns") == w["measured_ns"] else 0
    mdocs = [dra_template(w["measured_ns"])] if dra else []
    write_docs(os.path.join(d, "measured.yaml"),
               mdocs + [pod(w["measured"], f"{gen}{base + i:05d}", w["measured_ns"]) for i in range(nmeas)])

    meta = {
        "workload": name,
        "nodes": n,
        "init_pods": ninit,
        "init_bound": not init_pending,
        "init_namespace": w.get("init_ns"),
        "measured_pods": nmeas,
        "measured_namespace": w["measured_ns"],
        "churn": None,
    }
    if churn:
        ticks = CHURN_SECONDS * 1000 // churn["interval_ms"]
        if churn["mode"] == "recreate":
            ticks //= 2  # every other tick deletes
        objs = []
        ns = churn["namespace"]
        for k in range(ticks):
            for t in churn["templates"]:
                if t == "node":
                    objs.append(churn_node(f"node-churn-{k:05d}"))
                elif t == "service":
                    objs.append(service(f"service-churn-{k:05d}", ns, "foo", 8080, 8080))
                else:
                    gen = POD_TEMPLATES[t]()["generateName"]
                    objs.append(pod(t, f"{gen}{k:05d}", ns))
        write_docs(os.path.join(d, "churn.yaml"), objs)
        meta["churn"] = {
            "mode": churn["mode"],
            "number": churn["number"],
            "interval_ms": churn["interval_ms"],
            "per_tick": len(churn["templates"]),
            # the kind each template of a tick creates, in tick order
            "kinds": [{"node": "Node", "service": "Service"}.get(t, "Pod") for t in churn["templates"]],
            "objects": len(objs),
        }
    with open(os.path.join(d, "workload.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    return ninit, nmeas


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int)
    ap.add_argument("--workloads", default="", help="comma-separated (default: all but %s)" % ", ".join(sorted(OPT_IN)))
    ap.add_argument("--init-pending", action="store_true",
                    help="write init pods unbound (the runners schedule them first)")
    ap.add_argument("--list", action="store_true", help="print the default workloads' names and exit")
    ap.add_argument("--list-all", action="store_true", help="print every workload's name and exit")
    ap.add_argument("--jsonl", action="store_true",
                    help="also write every file as JSON lines (.jsonl)")
    ap.add_argument("-o", "--out", default="")
    a = ap.parse_args()
    global JSONL
    JSONL = a.jsonl
    if a.list or a.list_all:
        print("\n".join(ORDER if a.list else WORKLOADS))
        return 0
    if not a.out or a.nodes is None:
        ap.error("--nodes N and -o DIR are required")
    names = [x for x in a.workloads.split(",") if x] or ORDER
    for x in names:
        if x not in WORKLOADS:
            print(f"gen.py: unknown workload {x} (known: {', '.join(WORKLOADS)})", file=sys.stderr)
            return 2
    if a.nodes < 1:
        ap.error("--nodes must be positive")
    for x in names:
        generate(x, a.nodes, a.out, a.init_pending)
    return 0


if __name__ == "__main__":
    sys.exit(main())
