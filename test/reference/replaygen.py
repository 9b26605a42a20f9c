#!/usr/bin/env python3
"""Random event sequences for the event replay mode (docs/reference-harness.md).

    replaygen.py --seed N [--events E] -o DIR

writes DIR/cluster.yaml (nodes, running pods, pending pods, volumes) and
DIR/events.jsonl (one step a line: add/update/delete of an object,
attempt, tick, flush).  The pending pods are built to be rejected by every
default Filter/PreFilter/PreEnqueue plugin, and the events touch what
each plugin registered (nodes: add, delete, labels, taints, allocatable,
unschedulable, annotations; assigned pods: add, delete, labels, scale
down; unscheduled pods: add, delete, labels, tolerations, scheduling
gates removed, scale down; PVs, PVCs, StorageClasses, CSINodes).  The same
seed always gives the same files.  Python 3, stdlib only.
"""

import argparse
import copy
import json
import os
import random

ZONES = ["z0", "z1", "z2"]
APPS = ["a", "b", "c", "d"]


class Gen:
    def __init__(self, seed, nevents):
        self.r = random.Random(seed)
        self.nevents = nevents
        self.nodes = {}       # name -> object
        self.assigned = {}    # name -> pod
        self.pending = {}     # name -> pod
        self.pvcs = {}
        self.pvs = {}
        self.scs = {}
        self.csinodes = {}
        self.next_node = 0
        self.next_pod = 0
        self.events = []
        self.in_flight = False  # writing an attempt's "during" steps

    # ---- objects ----
    def node(self):
        r = self.r
        name = f"n{self.next_node}"
        self.next_node += 1
        cpu = r.choice([2, 4, 8])
        n = {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {
                "kubernetes.io/hostname": name,
                "topology.kubernetes.io/zone": r.choice(ZONES),
                "disk": r.choice(["ssd", "hdd"]),
            }},
            "spec": {},
            "status": {"capacity": {"cpu": str(cpu), "memory": f"{cpu * 2}Gi", "pods": "110"},
                       "allocatable": {"cpu": str(cpu), "memory": f"{cpu * 2}Gi", "pods": "110"}},
        }
        if r.random() < 0.25:
            n["spec"]["taints"] = [{"key": "dedicated", "value": r.choice(APPS), "effect": "NoSchedule"}]
        if r.random() < 0.1:
            n["spec"]["unschedulable"] = True
        return n

    def container(self, cpu_m, mem_mi, port=None):
        c = {"name": "c", "image": "x",
             "resources": {"requests": {"cpu": f"{cpu_m}m", "memory": f"{mem_mi}Mi"}}}
        if port:
            c["ports"] = [{"containerPort": port, "hostPort": port}]
        return c

    def pod(self, node=None, kind=None):
        r = self.r
        name = f"p{self.next_pod}"
        self.next_pod += 1
        app = r.choice(APPS)
        p = {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {"app": app}},
            "spec": {"containers": [self.container(r.choice([100, 250, 500, 1000]), r.choice([128, 512, 1024]))]},
        }
        s = p["spec"]
        prio = r.choice([None, None, None, "low", "mid"])
        if prio:
            s["priorityClassName"] = prio
        if node:
            s["nodeName"] = node
            if r.random() < 0.2:
                s["containers"][0] = self.container(100, 128, r.choice([8080, 9090]))
            return p
        kind = kind or r.choice(["fit", "affinity", "selector", "taint", "ports", "antiaffinity",
                                 "podaffinity", "spread", "nodename", "gates", "pvc", "plain",
                                 "unschedulable", "preempt"])
        if kind == "fit":
            s["containers"][0] = self.container(r.choice([3000, 6000, 9000]), 1024)
        elif kind == "affinity":
            s["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [r.choice(ZONES + ["z9"])]},
                    {"key": "disk", "operator": "In", "values": ["ssd"]}]}]}}}
        elif kind == "selector":
            s["nodeSelector"] = {"special": r.choice(["yes", "gpu"])}
        elif kind == "taint":
            s["tolerations"] = [{"key": "other", "operator": "Exists", "effect": "NoSchedule"}]
            s["nodeSelector"] = {"disk": r.choice(["ssd", "hdd"])}
        elif kind == "ports":
            s["containers"][0] = self.container(100, 128, r.choice([8080, 9090]))
        elif kind == "antiaffinity":
            s["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": r.choice(APPS)}},
                 "topologyKey": r.choice(["kubernetes.io/hostname", "topology.kubernetes.io/zone"])}]}}
        elif kind == "podaffinity":
            s["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": r.choice(["x", "y"] + APPS)}},
                 "topologyKey": "topology.kubernetes.io/zone"}]}}
        elif kind == "spread":
            s["topologySpreadConstraints"] = [{
                "maxSkew": 1, "topologyKey": r.choice(["topology.kubernetes.io/zone", "kubernetes.io/hostname"]),
                "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": app}}}]
            s["nodeSelector"] = {"disk": "ssd"}
        elif kind == "nodename":
            s["nodeName"] = ""
            s["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [f"n{self.next_node + r.randint(0, 3)}"]}]}]}}}
            del s["nodeName"]
        elif kind == "gates":
            s["schedulingGates"] = [{"name": "g1"}] + ([{"name": "g2"}] if r.random() < 0.5 else [])
        elif kind == "pvc":
            claim = f"claim{r.randint(0, 5)}"
            s["volumes"] = [{"name": "v", "persistentVolumeClaim": {"claimName": claim}}]
        elif kind == "unschedulable":
            s["nodeSelector"] = {"kubernetes.io/hostname": r.choice(list(self.nodes) or ["n0"])}
        elif kind == "preempt":
            s["priorityClassName"] = "high"
            s["containers"][0] = self.container(r.choice([1500, 3000]), 512)
        return p

    def pvc(self, name):
        r = self.r
        c = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
             "metadata": {"name": name, "namespace": "default"},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                      "storageClassName": r.choice(["fast", "slow", "wait"])}}
        if r.random() < 0.3:
            pv = f"pv-{name}"
            c["spec"]["volumeName"] = pv
        return c

    def pv(self, name):
        r = self.r
        return {"apiVersion": "v1", "kind": "PersistentVolume",
                "metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": r.choice(ZONES)}},
                "spec": {"capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce"],
                         "storageClassName": r.choice(["fast", "wait"]),
                         "csi": {"driver": "csi.example.com", "volumeHandle": name}}}

    def sc(self, name):
        mode = "WaitForFirstConsumer" if name == "wait" else "Immediate"
        return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                "metadata": {"name": name}, "provisioner": "csi.example.com", "volumeBindingMode": mode}

    def csinode(self, node):
        r = self.r
        return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": node},
                "spec": {"drivers": [{"name": "csi.example.com", "nodeID": node,
                                      "allocatable": {"count": r.randint(0, 3)}}]}}

    # ---- steps ----
    def emit(self, op, obj=None, **kw):
        st = {"op": op}
        if obj is not None:
            st["object"] = obj
        st.update(kw)
        self.events.append(st)

    def delete(self, obj):
        m = obj["metadata"]
        kw = {"kind": obj["kind"], "name": m["name"]}
        if "namespace" in m:
            kw["namespace"] = m["namespace"]
        self.emit("delete", **kw)

    def node_event(self):
        r = self.r
        x = r.random()
        if x < 0.2 or not self.nodes:
            n = self.node()
            self.nodes[n["metadata"]["name"]] = n
            self.emit("add", copy.deepcopy(n))
            return
        name = r.choice(sorted(self.nodes))
        if x < 0.3 and len(self.nodes) > 2 and not self.in_flight:
            self.delete(self.nodes.pop(name))
            for k in [k for k, p in self.assigned.items() if p["spec"]["nodeName"] == name]:
                self.delete(self.assigned.pop(k))
            return
        n = copy.deepcopy(self.nodes[name])
        what = r.choice(["label", "taint", "alloc", "unsched", "annotation", "special"])
        labels = n["metadata"]["labels"]
        if what == "label":
            labels["disk"] = "ssd" if labels.get("disk") == "hdd" else "hdd"
        elif what == "special":
            if "special" in labels:
                del labels["special"]
            else:
                labels["special"] = r.choice(["yes", "gpu"])
        elif what == "taint":
            if n["spec"].get("taints"):
                del n["spec"]["taints"]
            else:
                n["spec"]["taints"] = [{"key": r.choice(["dedicated", "other"]), "value": "v", "effect": "NoSchedule"}]
        elif what == "alloc":
            cpu = r.choice([2, 4, 8, 16])
            n["status"]["allocatable"]["cpu"] = str(cpu)
            n["status"]["capacity"]["cpu"] = str(cpu)
        elif what == "unsched":
            if n["spec"].get("unschedulable"):
                del n["spec"]["unschedulable"]
            else:
                n["spec"]["unschedulable"] = True
        else:
            n["metadata"].setdefault("annotations", {})["note"] = str(r.randint(0, 99))
        self.nodes[name] = n
        self.emit("update", copy.deepcopy(n))

    def assigned_event(self):
        r = self.r
        x = r.random()
        if (x < 0.4 or not self.assigned) and self.nodes:
            p = self.pod(node=r.choice(sorted(self.nodes)))
            self.assigned[p["metadata"]["name"]] = p
            self.emit("add", copy.deepcopy(p))
            return
        if not self.assigned:
            return
        name = r.choice(sorted(self.assigned))
        if x < 0.75:
            self.delete(self.assigned.pop(name))
            return
        p = copy.deepcopy(self.assigned[name])
        if r.random() < 0.5:
            p["metadata"]["labels"]["app"] = r.choice(APPS + ["x"])
        else:
            req = p["spec"]["containers"][0]["resources"]["requests"]
            req["cpu"] = "50m"
        self.assigned[name] = p
        self.emit("update", copy.deepcopy(p))

    def pending_event(self):
        r = self.r
        x = r.random()
        if x < 0.35 or not self.pending:
            p = self.pod()
            self.pending[p["metadata"]["name"]] = p
            self.emit("add", copy.deepcopy(p))
            return
        name = r.choice(sorted(self.pending))
        if x < 0.5:
            self.delete(self.pending.pop(name))
            return
        p = copy.deepcopy(self.pending[name])
        s = p["spec"]
        what = r.choice(["label", "toleration", "gates", "scale", "annotation"])
        if what == "label":
            p["metadata"]["labels"]["app"] = r.choice(APPS)
        elif what == "toleration":
            s.setdefault("tolerations", []).append(
                {"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"})
        elif what == "gates" and s.get("schedulingGates"):
            s["schedulingGates"] = s["schedulingGates"][1:]
            if not s["schedulingGates"]:
                del s["schedulingGates"]
        elif what == "scale":
            s["containers"][0]["resources"]["requests"]["cpu"] = "100m"
        else:
            p["metadata"].setdefault("annotations", {})["note"] = str(r.randint(0, 99))
        self.pending[name] = p
        self.emit("update", copy.deepcopy(p))

    def volume_event(self):
        r = self.r
        x = r.random()
        if x < 0.3:
            name = f"claim{r.randint(0, 5)}"
            if name in self.pvcs:
                if r.random() < 0.5:
                    self.delete(self.pvcs.pop(name))
                else:
                    c = copy.deepcopy(self.pvcs[name])
                    c["metadata"].setdefault("annotations", {})["note"] = str(r.randint(0, 99))
                    self.pvcs[name] = c
                    self.emit("update", copy.deepcopy(c))
            else:
                c = self.pvc(name)
                self.pvcs[name] = c
                self.emit("add", copy.deepcopy(c))
        elif x < 0.55:
            name = f"pv-claim{r.randint(0, 5)}"
            if name in self.pvs:
                self.delete(self.pvs.pop(name))
            else:
                v = self.pv(name)
                self.pvs[name] = v
                self.emit("add", copy.deepcopy(v))
        elif x < 0.7:
            name = r.choice(["fast", "slow", "wait"])
            if name in self.scs:
                self.delete(self.scs.pop(name))
            else:
                self.scs[name] = self.sc(name)
                self.emit("add", copy.deepcopy(self.scs[name]))
        elif self.nodes:
            node = r.choice(sorted(self.nodes))
            c = self.csinode(node)
            if node in self.csinodes and r.random() < 0.3:
                self.delete(self.csinodes.pop(node))
            else:
                op = "update" if node in self.csinodes else "add"
                self.csinodes[node] = c
                self.emit(op, copy.deepcopy(c))

    def during(self):
        """Steps while an attempt's pod is in flight: node adds and updates,
        running pods added, volumes, new pending pods (never a change of a
        pod that may be the one in flight, nor of a possible victim)."""
        r = self.r
        start = len(self.events)
        # no node deletes either: the pod in flight may have just been bound there
        self.in_flight = True
        for _ in range(r.randint(1, 2)):
            x = r.random()
            if x < 0.45:
                self.node_event()
            elif x < 0.6 and self.nodes:
                p = self.pod(node=r.choice(sorted(self.nodes)))
                self.assigned[p["metadata"]["name"]] = p
                self.emit("add", copy.deepcopy(p))
            elif x < 0.8:
                self.volume_event()
            else:
                p = self.pod()
                self.pending[p["metadata"]["name"]] = p
                self.emit("add", copy.deepcopy(p))
        self.in_flight = False
        steps = self.events[start:]
        del self.events[start:]
        return steps

    def run(self):
        r = self.r
        for _ in range(r.randint(4, 7)):
            n = self.node()
            self.nodes[n["metadata"]["name"]] = n
        initial_nodes = list(self.nodes.values())
        for _ in range(r.randint(6, 14)):
            p = self.pod(node=r.choice(sorted(self.nodes)))
            self.assigned[p["metadata"]["name"]] = p
        for _ in range(r.randint(20, 35)):
            p = self.pod()
            self.pending[p["metadata"]["name"]] = p
        for name in ["fast", "wait"]:
            self.scs[name] = self.sc(name)
        for i in range(3):
            c = self.pvc(f"claim{i}")
            self.pvcs[c["metadata"]["name"]] = c
        classes = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                    "metadata": {"name": n}, "value": v} for n, v in (("low", 10), ("mid", 100), ("high", 1000))]
        docs = classes + initial_nodes + list(self.assigned.values()) + list(self.pending.values()) + \
            list(self.scs.values()) + list(self.pvcs.values())
        cluster = copy.deepcopy(docs)
        # first, every pending pod gets its first attempt
        for _ in range(len(self.pending)):
            self.emit("attempt")
        while len(self.events) < self.nevents:
            x = r.random()
            if x < 0.20:
                self.emit("attempt")
            elif x < 0.28:
                self.emit("attempt", during=self.during())
            elif x < 0.40:
                self.node_event()
            elif x < 0.52:
                self.assigned_event()
            elif x < 0.68:
                self.pending_event()
            elif x < 0.80:
                self.volume_event()
            elif x < 0.92:
                self.emit("tick", seconds=r.choice([1, 2, 3, 5, 10, 15]))
            elif x < 0.99:
                self.emit("flush")
            else:
                self.emit("tick", seconds=301)
                self.emit("flush")
        return cluster


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--events", type=int, default=400)
    ap.add_argument("-o", dest="out", required=True)
    a = ap.parse_args()
    g = Gen(a.seed, a.events)
    cluster = g.run()
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "cluster.yaml"), "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": cluster}, f, sort_keys=True, indent=1)
        f.write("\n")
    with open(os.path.join(a.out, "events.jsonl"), "w") as f:
        for e in g.events:
            f.write(json.dumps(e, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
