#!/usr/bin/env python3
"""A generated cluster for timing `ksched why` and `simulate --compare`.

    gen_why.py --nodes N --pods P --pending Q -o FILE

N nodes in three zones (general-purpose, high-memory and tainted GPU
nodes, a few cordoned), P running pods bound round robin with mixed
priorities and owners, and Q pending pods that do not fit for the
reasons people ask about: requests too large, a GPU without the
toleration, a nodeSelector no node has, a zone spread at its skew.
The same arguments always give the same file. Python 3, stdlib only.
"""
import argparse
import json

def node(i):
    kind = "gpu" if i % 20 == 0 else ("mem" if i % 5 == 0 else "cpu")
    name = "%s-%04d" % (kind, i)
    zone = "zone-%s" % "abc"[i % 3]
    alloc = {"cpu": "16", "memory": "64Gi", "pods": "110"}
    if kind == "mem":
        alloc = {"cpu": "16", "memory": "256Gi", "pods": "110"}
    if kind == "gpu":
        alloc = {"cpu": "32", "memory": "128Gi", "pods": "110", "nvidia.com/gpu": "8"}
    n = {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": name, "labels": {
             "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
             "topology.kubernetes.io/zone": zone, "node-type": kind}},
         "spec": {}, "status": {"capacity": alloc, "allocatable": alloc}}
    if kind == "gpu":
        n["spec"]["taints"] = [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]
    if i % 97 == 1:
        n["spec"]["unschedulable"] = True
    return n

def pod(ns, name, cpu, mem, extra=None, node_name=None, prio=None, owner=None, labels=None, ts=0):
    p = {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": name, "namespace": ns, "uid": "uid-%s-%s" % (ns, name),
                      "creationTimestamp": "2026-11-21T09:%02d:%02dZ" % (ts // 60 % 60, ts % 60),
                      "labels": labels or {"app": name.rsplit("-", 1)[0]}},
         "spec": {"containers": [{"name": "main", "image": "busybox",
                                  "resources": {"requests": {"cpu": cpu, "memory": mem}}}]}}
    if extra:
        p["spec"]["containers"][0]["resources"]["requests"].update(extra)
    if node_name:
        p["spec"]["nodeName"] = node_name
        p["status"] = {"phase": "Running"}
    if prio is not None:
        p["spec"]["priority"] = prio
    if owner:
        p["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner,
                                             "uid": "uid-rs-" + owner, "controller": True}]
    return p

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--pods", type=int, default=5000)
    ap.add_argument("--pending", type=int, default=1)
    ap.add_argument("-o", required=True)
    a = ap.parse_args()
    items = [node(i) for i in range(a.nodes)]
    names = [n["metadata"]["name"] for n in items]
    usable = [n["metadata"]["name"] for n in items if not n["spec"].get("unschedulable")
              and not n["spec"].get("taints")]
    for i in range(a.pods):
        rs = "svc%d" % (i % 50)
        items.append(pod("apps", "%s-%05d" % (rs, i), "%dm" % (1000 + 500 * (i % 5)), "%dGi" % (2 + i % 4),
                         node_name=usable[i % len(usable)], prio=[0, 100, 1000][i % 3], owner=rs,
                         labels={"app": rs}))
    for j in range(a.pending):
        r = j % 4
        name = "pend-%03d" % j
        if r == 0:    # larger than any node's free cpu
            p = pod("batch", name, "40", "8Gi", ts=3000 + j)
        elif r == 1:  # a GPU without the toleration
            p = pod("ml", name, "4", "16Gi", extra={"nvidia.com/gpu": "2"}, ts=3000 + j)
        elif r == 2:  # a label no node has
            p = pod("web", name, "500m", "1Gi", ts=3000 + j)
            p["spec"]["nodeSelector"] = {"disktype": "ssd"}
        else:         # spread: all its peers are in zone-a already
            p = pod("web", name, "500m", "1Gi", ts=3000 + j, labels={"app": "edge"})
            p["spec"]["nodeSelector"] = {"topology.kubernetes.io/zone": "zone-a"}
            p["spec"]["topologySpreadConstraints"] = [{
                "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "nodeAffinityPolicy": "Ignore",
                "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "edge"}}}]
        items.append(p)
    zone_a = [n["metadata"]["name"] for n in items if n.get("kind") == "Node" and n["metadata"]["name"] in usable
              and n["metadata"]["labels"]["topology.kubernetes.io/zone"] == "zone-a"]
    for k in range(3):  # the spread pods' peers, all in zone-a
        items.append(pod("web", "edge-%d" % k, "100m", "128Mi", node_name=zone_a[k], labels={"app": "edge"}))
    with open(a.o, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f)

if __name__ == "__main__":
    main()
