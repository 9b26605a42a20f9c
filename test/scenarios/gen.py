#!/usr/bin/env python3
"""Random scheduling scenario generator for ksched differential tests.

    gen.py --seed N [--nodes K] -o DIR

writes DIR/cluster.yaml (and sometimes DIR/config.yaml, a
KubeSchedulerConfiguration).  The same seed always gives the same files.
Only objects the API server would accept are produced.  Python 3, stdlib only.
"""

import argparse
import json
import os
import random
import re
import sys

# --------------------------------------------------------------------------
# a small YAML emitter (block style; every string is double-quoted JSON,
# which is valid YAML)

_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_./-]*$")


def _key(k):
    return k if _PLAIN_KEY.match(k) else json.dumps(k)


def _scalar(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, (int, float)):
        return str(v)
    return json.dumps(v)


def _emit(v, indent, out):
    pad = "  " * indent
    if isinstance(v, dict):
        for k, x in v.items():
            if isinstance(x, dict) and x:
                out.append(f"{pad}{_key(k)}:")
                _emit(x, indent + 1, out)
            elif isinstance(x, list) and x:
                out.append(f"{pad}{_key(k)}:")
                _emit(x, indent, out)
            elif isinstance(x, dict):
                out.append(f"{pad}{_key(k)}: {{}}")
            elif isinstance(x, list):
                out.append(f"{pad}{_key(k)}: []")
            else:
                out.append(f"{pad}{_key(k)}: {_scalar(x)}")
    elif isinstance(v, list):
        for x in v:
            if isinstance(x, (dict, list)) and x:
                sub = []
                _emit(x, indent + 1, sub)
                first = sub[0].lstrip()
                out.append(f"{pad}- {first}")
                out.extend(sub[1:])
            elif isinstance(x, dict):
                out.append(f"{pad}- {{}}")
            elif isinstance(x, list):
                out.append(f"{pad}- []")
            else:
                out.append(f"{pad}- {_scalar(x)}")
    else:
        out.append(pad + _scalar(v))


def to_yaml(docs):
    out = []
    for d in docs:
        out.append("---")
        _emit(d, 0, out)
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------
# quantities

MI = 1024 * 1024
GI = 1024 * MI


def cpu_q(rng, millis):
    """A CPU quantity string for `millis` millicores, in a random valid form."""
    if millis % 1000 == 0 and rng.random() < 0.6:
        return str(millis // 1000)
    if millis % 100 == 0 and rng.random() < 0.2:
        return f"{millis / 1000:g}"
    return f"{millis}m"


def mem_q(rng, nbytes):
    """A memory quantity string for nbytes, in a random valid form."""
    r = rng.random()
    if nbytes % GI == 0 and r < 0.4:
        return f"{nbytes // GI}Gi"
    if nbytes % MI == 0 and r < 0.8:
        return f"{nbytes // MI}Mi"
    if nbytes % 1000000 == 0 and r < 0.9:
        return f"{nbytes // 1000000}M"
    return str(nbytes)


_SUFFIX = {"m": 0.001, "k": 1e3, "M": 1e6, "G": 1e9, "Ki": 1024, "Mi": MI, "Gi": GI}


def parse_q(q):
    """The value of a quantity string the generator writes (cpu in cores)."""
    m = re.match(r"^([0-9.]+)([A-Za-z]*)$", str(q))
    v = float(m.group(1)) * _SUFFIX.get(m.group(2), 1)
    return v if m.group(2) == "m" or "." in m.group(1) else int(v)


def ts(rng, base_day=None):
    day = base_day if base_day is not None else rng.randint(1, 28)
    return f"2024-03-{day:02d}T{rng.randint(0, 23):02d}:{rng.choice([0, 15, 30, 45]):02d}:00Z"


# --------------------------------------------------------------------------

ZONES = ["zone-a", "zone-b", "zone-c", "zone-d"]
IMAGES = [
    ("registry.example.com/web/nginx:1.25", 187 * MI),
    ("registry.example.com/db/postgres:16", 431 * MI),
    ("registry.example.com/ml/trainer:v3", 2100 * MI),
    ("registry.example.com/tools/busybox:1.36", 4 * MI),
    ("registry.example.com/app/api:2024.3", 96 * MI),
    ("registry.example.com/app/worker:2024.3", 250 * MI),
    ("registry.example.com/cache/redis:7", 45 * MI),
]
INSTANCE_TYPES = ["m5.large", "m5.xlarge", "c5.2xlarge", "r5.4xlarge", "p3.8xlarge"]
NAMESPACES = [
    ("default", {}),
    ("team-a", {"team": "a", "env": "prod"}),
    ("team-b", {"team": "b", "env": "dev"}),
    ("batch", {"env": "prod", "workload": "batch"}),
]


class Gen:
    def __init__(self, seed, nodes=None):
        self.rng = random.Random(seed)
        self.seed = seed
        r = self.rng.random()
        if nodes is None:
            if r < 0.70:
                nodes = self.rng.randint(3, 12)
            elif r < 0.90:
                nodes = self.rng.randint(13, 60)
            elif r < 0.98:
                nodes = self.rng.randint(61, 200)
            else:
                nodes = self.rng.randint(201, 500)
        self.n_nodes = max(1, nodes)
        self.docs = []
        self.nodes = []  # (name, dict, free-resources dict)
        self.uid = 0
        self.pod_names = set()
        self.profiles = ["default-scheduler"]
        self.config = None
        self.feature_gates = None  # --feature-gates for both schedulers (a file `feature-gates`)

    def next_uid(self, kind):
        self.uid += 1
        return f"{kind}-{self.seed}-{self.uid:05d}"

    # ---------------------------------------------------------------- config
    def gen_config(self):
        rng = self.rng
        if rng.random() >= 0.3:
            return
        prof = {"schedulerName": "default-scheduler"}
        plugins = {}
        plugin_config = []
        choice = rng.randrange(6)
        if choice == 0:
            strategy = rng.choice(["MostAllocated", "LeastAllocated", "RequestedToCapacityRatio"])
            ss = {"type": strategy, "resources": [{"name": "cpu", "weight": rng.randint(1, 3)},
                                                   {"name": "memory", "weight": rng.randint(1, 3)}]}
            if strategy == "RequestedToCapacityRatio":
                ss["requestedToCapacityRatio"] = {"shape": [{"utilization": 0, "score": 0},
                                                            {"utilization": 100, "score": 10}]}
            plugin_config.append({"name": "NodeResourcesFit", "args": {"scoringStrategy": ss}})
        elif choice == 1:
            plugin_config.append({"name": "PodTopologySpread", "args": {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": rng.randint(1, 3), "topologyKey": "topology.kubernetes.io/zone",
                     "whenUnsatisfiable": "ScheduleAnyway"}]}})
        elif choice == 2:
            plugins["score"] = {"disabled": [{"name": "ImageLocality"}],
                                "enabled": [{"name": "NodeResourcesBalancedAllocation", "weight": 5}]}
        elif choice == 3:
            plugin_config.append({"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": rng.randint(0, 100)}})
        elif choice == 4:
            plugin_config.append({"name": "NodeAffinity", "args": {"addedAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 30, "preference": {"matchExpressions": [
                        {"key": "disktype", "operator": "In", "values": ["ssd"]}]}}]}}})
        else:
            plugin_config.append({"name": "DefaultPreemption", "args": {
                "minCandidateNodesPercentage": rng.randint(0, 100), "minCandidateNodesAbsolute": rng.randint(1, 10)}})
        if plugins:
            prof["plugins"] = plugins
        if plugin_config:
            prof["pluginConfig"] = plugin_config
        profiles = [prof]
        if rng.random() < 0.3:
            profiles.append({"schedulerName": "batch-scheduler", "plugins": {
                "score": {"disabled": [{"name": "NodeResourcesFit"}],
                          "enabled": [{"name": "NodeResourcesFit", "weight": 3}]}},
                "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
                    "type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1},
                                                           {"name": "memory", "weight": 1}]}}}]})
            self.profiles.append("batch-scheduler")
        self.config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                       "profiles": profiles}

    # ---------------------------------------------------------------- cluster
    def gen_namespaces(self):
        self.docs.append({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "kata"},
                          "handler": "kata", "overhead": {"podFixed": {"cpu": "100m", "memory": "64Mi"}}})
        for name, labels in NAMESPACES:
            md = {"name": name}
            if labels:
                md["labels"] = dict(labels)
            self.docs.append({"apiVersion": "v1", "kind": "Namespace", "metadata": md})

    def gen_priority_classes(self):
        rng = self.rng
        pcs = [("low", 100, None), ("medium", 1000, None), ("high", 10000, None),
               ("critical-batch", 5000, "Never")]
        if rng.random() < 0.3:
            pcs.append(("everyday", 10, None))
            self.global_default = "everyday"
        else:
            self.global_default = None
        self.pcs = [p[0] for p in pcs]
        for name, value, policy in pcs:
            d = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                 "value": value}
            if policy:
                d["preemptionPolicy"] = policy
            if name == self.global_default:
                d["globalDefault"] = True
            self.docs.append(d)

    def gen_nodes(self):
        rng = self.rng
        n_zones = rng.randint(1, 4) if self.n_nodes > 1 else 1
        zones = ZONES[:n_zones]
        self.zones = zones
        width = max(2, len(str(self.n_nodes)))
        for i in range(self.n_nodes):
            zone = zones[i % n_zones] if rng.random() < 0.8 else rng.choice(zones)
            name = f"node-{i:0{width}d}" if rng.random() < 0.85 else f"{zone}-w{i}"
            cores = rng.choice([2, 4, 4, 8, 8, 16, 32, 64])
            mem_gi = cores * rng.choice([2, 4, 8])
            alloc_cpu = cores * 1000 - rng.choice([0, 0, 80, 100, 250])
            alloc_mem = mem_gi * GI - rng.choice([0, 0, 256 * MI, 512 * MI, 1000000000])
            pods = rng.choice([110, 110, 110, 32, 250, 8])
            gpu = rng.random() < 0.15
            labels = {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": rng.choice(["amd64", "amd64", "arm64"]),
                "topology.kubernetes.io/zone": zone,
                "topology.kubernetes.io/region": "region-1",
                "node.kubernetes.io/instance-type": rng.choice(INSTANCE_TYPES),
                "cores": str(cores),
            }
            if rng.random() < 0.6:
                labels["disktype"] = rng.choice(["ssd", "hdd"])
            if rng.random() < 0.3:
                labels["tier"] = rng.choice(["frontend", "backend", "infra"])
            if gpu:
                labels["accelerator"] = "nvidia"
            taints = []
            if gpu and rng.random() < 0.7:
                taints.append({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"})
            r = rng.random()
            if r < 0.10:
                taints.append({"key": "dedicated", "value": rng.choice(["infra", "db"]), "effect": "NoSchedule"})
            elif r < 0.16:
                taints.append({"key": "maintenance", "effect": "NoExecute"})
            elif r < 0.28:
                taints.append({"key": "spot", "value": "true", "effect": "PreferNoSchedule"})
            unschedulable = rng.random() < 0.05
            if unschedulable and rng.random() < 0.5:
                taints.append({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule",
                               "timeAdded": "2024-03-01T00:00:00Z"})
            alloc = {"cpu": cpu_q(rng, alloc_cpu), "memory": mem_q(rng, alloc_mem), "pods": str(pods),
                     "ephemeral-storage": rng.choice(["100Gi", "50Gi", "20Gi"])}
            cap = {"cpu": str(cores), "memory": mem_q(rng, mem_gi * GI), "pods": str(pods),
                   "ephemeral-storage": "120Gi"}
            free = {"cpu": alloc_cpu, "memory": alloc_mem, "pods": pods, "gpu": 0, "hp": 0}
            if gpu:
                g = rng.choice([1, 2, 4, 8])
                alloc["nvidia.com/gpu"] = str(g)
                cap["nvidia.com/gpu"] = str(g)
                free["gpu"] = g
            if rng.random() < 0.15:
                alloc["hugepages-2Mi"] = "1Gi"
                cap["hugepages-2Mi"] = "1Gi"
                free["hp"] = GI
            images = []
            for img, size in rng.sample(IMAGES, rng.randint(0, 4)):
                repo, tag = img.rsplit(":", 1)
                names = [img]
                if rng.random() < 0.5:
                    names.insert(0, f"{repo}@sha256:{'%064x' % rng.getrandbits(256)}")
                images.append({"names": names, "sizeBytes": size + rng.randint(0, 9999)})
            spec = {}
            if taints:
                spec["taints"] = taints
            if unschedulable:
                spec["unschedulable"] = True
            node = {"apiVersion": "v1", "kind": "Node",
                    "metadata": {"name": name, "labels": labels},
                    "spec": spec,
                    "status": {"capacity": cap, "allocatable": alloc, "images": images,
                               "conditions": [{"type": "Ready", "status": "True"}]}}
            if rng.random() < 0.1:
                del node["status"]["allocatable"]  # defaulted from capacity
                free["cpu"] = cores * 1000
                free["memory"] = mem_gi * GI
            self.nodes.append((name, node, free, labels, taints, unschedulable))
            self.docs.append(node)

    # ---------------------------------------------------------------- pods
    def resources(self, gpu=False, hugepages=False):
        """Returns (resources dict, cpu millis, mem bytes, gpu count)."""
        rng = self.rng
        r = rng.random()
        if r < 0.12 and not gpu and not hugepages:
            return {}, 0, 0, 0
        cpu = rng.choice([50, 100, 100, 250, 500, 500, 1000, 1500, 2000, 4000])
        mem = rng.choice([64, 128, 256, 512, 1024, 2048, 4096]) * MI
        req = {}
        if rng.random() < 0.9 or hugepages:
            req["cpu"] = cpu_q(rng, cpu)
        else:
            cpu = 0
        if rng.random() < 0.85 or hugepages:
            req["memory"] = mem_q(rng, mem)
        else:
            mem = 0
        if rng.random() < 0.1:
            req["ephemeral-storage"] = rng.choice(["1Gi", "500Mi", "10Gi"])
        res = {}
        g = 0
        lim = {}
        if gpu:
            g = rng.choice([1, 1, 2, 4])
            req["nvidia.com/gpu"] = str(g)
            lim["nvidia.com/gpu"] = str(g)
        if hugepages:
            req["hugepages-2Mi"] = "128Mi"
            lim["hugepages-2Mi"] = "128Mi"
        if rng.random() < 0.15 and cpu:
            # limits only for cpu: requests are defaulted from limits
            lim["cpu"] = req.pop("cpu")
        elif rng.random() < 0.2 and mem:
            lim["memory"] = mem_q(rng, mem * 2)
        if req:
            res["requests"] = req
        if lim:
            res["limits"] = lim
        return res, cpu, mem, g

    def container(self, name, image, gpu=False, hugepages=False, ports=None):
        res, cpu, mem, g = self.resources(gpu, hugepages)
        c = {"name": name, "image": image}
        if res:
            c["resources"] = res
        if ports:
            c["ports"] = ports
        return c, cpu, mem, g

    def pod_name(self, base):
        name = base
        i = 0
        while name in self.pod_names:
            i += 1
            name = f"{base}-{i}"
        self.pod_names.add(name)
        return name

    def gen_workloads(self):
        rng = self.rng
        n_nodes = self.n_nodes
        n_apps = max(2, min(60, int(n_nodes * rng.uniform(0.4, 1.2)) + rng.randint(1, 4)))
        self.apps = []
        for a in range(n_apps):
            ns = rng.choice(NAMESPACES)[0]
            app = f"app{a}"
            kind = rng.choice(["ReplicaSet", "ReplicaSet", "StatefulSet", "none", "none"])
            self.apps.append((app, ns, kind))
        for a, (app, ns, kind) in enumerate(self.apps):
            self.gen_app(a, app, ns, kind)
        # a few PDBs
        for app, ns, kind in rng.sample(self.apps, min(len(self.apps), rng.randint(0, 3))):
            spec = {"selector": {"matchLabels": {"app": app}}}
            if rng.random() < 0.5:
                spec["minAvailable"] = rng.randint(0, 3)
            else:
                spec["maxUnavailable"] = rng.choice([0, 1, "50%"])
            self.docs.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                              "metadata": {"name": f"{app}-pdb", "namespace": ns}, "spec": spec,
                              "status": {"disruptionsAllowed": rng.choice([0, 0, 1, 2]), "currentHealthy": 1,
                                         "desiredHealthy": 1, "expectedPods": 1}})

    def affinity(self, app, ns):
        rng = self.rng
        aff = {}
        # node affinity
        if rng.random() < 0.3:
            exprs = []
            for _ in range(rng.randint(1, 2)):
                op = rng.choice(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"])
                if op in ("In", "NotIn"):
                    key, vals = rng.choice([("disktype", ["ssd", "hdd"]), ("kubernetes.io/arch", ["amd64", "arm64"]),
                                            ("topology.kubernetes.io/zone", list(self.zones)),
                                            ("tier", ["frontend", "backend", "infra"])])
                    exprs.append({"key": key, "operator": op, "values": rng.sample(vals, rng.randint(1, len(vals)))})
                elif op in ("Exists", "DoesNotExist"):
                    exprs.append({"key": rng.choice(["disktype", "tier", "accelerator"]), "operator": op})
                else:
                    exprs.append({"key": "cores", "operator": op, "values": [str(rng.choice([2, 4, 8, 16]))]})
            terms = [{"matchExpressions": exprs}]
            if rng.random() < 0.15:
                # a single matchFields term: NodeAffinity's PreFilterResult
                names = [rng.choice(self.nodes)[0], "node-gone"]
                terms = [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                           "values": [rng.choice(names)]}]}]
            elif rng.random() < 0.2:
                node = rng.choice(self.nodes)[0]
                terms.append({"matchFields": [{"key": "metadata.name", "operator": rng.choice(["In", "NotIn"]),
                                               "values": [node]}]})
            na = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
            aff["nodeAffinity"] = na
        if rng.random() < 0.3:
            na = aff.setdefault("nodeAffinity", {})
            prefs = []
            for _ in range(rng.randint(1, 3)):
                key, vals = rng.choice([("disktype", ["ssd"]), ("topology.kubernetes.io/zone", [rng.choice(self.zones)]),
                                        ("node.kubernetes.io/instance-type", [rng.choice(INSTANCE_TYPES)])])
                prefs.append({"weight": rng.randint(1, 100),
                              "preference": {"matchExpressions": [{"key": key, "operator": "In", "values": vals}]}})
            na["preferredDuringSchedulingIgnoredDuringExecution"] = prefs
        # inter-pod affinity
        for kind in ("podAffinity", "podAntiAffinity"):
            if rng.random() >= 0.25:
                continue
            pa = {}
            if rng.random() < 0.6:
                pa["requiredDuringSchedulingIgnoredDuringExecution"] = [self.pod_affinity_term(app, ns, kind)]
            if rng.random() < 0.6:
                pa["preferredDuringSchedulingIgnoredDuringExecution"] = [
                    {"weight": rng.randint(1, 100), "podAffinityTerm": self.pod_affinity_term(app, ns, kind)}
                    for _ in range(rng.randint(1, 2))]
            if pa:
                aff[kind] = pa
        return aff

    def pod_affinity_term(self, app, ns, kind):
        rng = self.rng
        target = app if (kind == "podAntiAffinity" and rng.random() < 0.6) else rng.choice(self.apps)[0]
        sel = {"matchLabels": {"app": target}}
        if rng.random() < 0.2:
            sel = {"matchExpressions": [{"key": "app", "operator": "In", "values": [target, rng.choice(self.apps)[0]]}]}
        term = {"labelSelector": sel,
                "topologyKey": rng.choice(["kubernetes.io/hostname", "topology.kubernetes.io/zone"])}
        r = rng.random()
        if r < 0.2:
            term["namespaces"] = rng.sample([n for n, _ in NAMESPACES], rng.randint(1, 2))
        elif r < 0.35:
            term["namespaceSelector"] = rng.choice([{}, {"matchLabels": {"env": "prod"}},
                                                    {"matchExpressions": [{"key": "team", "operator": "Exists"}]}])
        if rng.random() < 0.2:
            if rng.random() < 0.5:
                term["matchLabelKeys"] = ["pod-template-hash"]
            else:
                term["mismatchLabelKeys"] = ["pod-template-hash"]
        return term

    def spread(self, app):
        rng = self.rng
        if rng.random() >= 0.3:
            return []
        out = []
        keys = rng.sample(["kubernetes.io/hostname", "topology.kubernetes.io/zone"], rng.randint(1, 2))
        for key in keys:
            when = rng.choice(["DoNotSchedule", "ScheduleAnyway"])
            c = {"maxSkew": rng.randint(1, 3), "topologyKey": key, "whenUnsatisfiable": when,
                 "labelSelector": {"matchLabels": {"app": app}}}
            if when == "DoNotSchedule" and rng.random() < 0.3:
                c["minDomains"] = rng.randint(1, 5)
            if rng.random() < 0.3:
                c["nodeAffinityPolicy"] = rng.choice(["Honor", "Ignore"])
            if rng.random() < 0.3:
                c["nodeTaintsPolicy"] = rng.choice(["Honor", "Ignore"])
            if rng.random() < 0.25:
                c["matchLabelKeys"] = ["pod-template-hash"]
            out.append(c)
        return out

    def tolerations(self):
        rng = self.rng
        out = []
        if rng.random() < 0.3:
            out.append({"key": "dedicated", "operator": "Equal", "value": rng.choice(["infra", "db"]),
                        "effect": "NoSchedule"})
        if rng.random() < 0.15:
            out.append({"key": "maintenance", "operator": "Exists", "effect": "NoExecute",
                        "tolerationSeconds": rng.choice([0, 60, 3600])})
        if rng.random() < 0.2:
            out.append({"key": "spot", "operator": "Exists"})
        if rng.random() < 0.05:
            out.append({"operator": "Exists"})
        if rng.random() < 0.05:
            out.append({"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"})
        return out

    def gen_app(self, a, app, ns, kind):
        rng = self.rng
        replicas = rng.choice([1, 1, 2, 3, 4, 6, 8])
        if self.n_nodes > 60:
            replicas = rng.choice([2, 5, 10, 20])
        image, _ = rng.choice(IMAGES)
        gpu = rng.random() < 0.08
        hugepages = rng.random() < 0.05
        hash_ = "%08x" % rng.getrandbits(32)
        labels = {"app": app, "pod-template-hash": hash_[:6]}
        if rng.random() < 0.3:
            labels["tier"] = rng.choice(["frontend", "backend"])
        owner = None
        if kind == "ReplicaSet":
            uid = self.next_uid("rs")
            self.docs.append({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                              "metadata": {"name": f"{app}-{hash_[:6]}", "namespace": ns, "uid": uid,
                                           "labels": labels},
                              "spec": {"replicas": replicas, "selector": {"matchLabels": dict(labels)},
                                       "template": {"metadata": {"labels": dict(labels)},
                                                    "spec": {"containers": [{"name": "main", "image": image}]}}}})
            owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"{app}-{hash_[:6]}", "uid": uid,
                     "controller": True, "blockOwnerDeletion": True}
        elif kind == "StatefulSet":
            uid = self.next_uid("sts")
            self.docs.append({"apiVersion": "apps/v1", "kind": "StatefulSet",
                              "metadata": {"name": app, "namespace": ns, "uid": uid},
                              "spec": {"replicas": replicas, "serviceName": app,
                                       "selector": {"matchLabels": {"app": app}},
                                       "template": {"metadata": {"labels": dict(labels)},
                                                    "spec": {"containers": [{"name": "main", "image": image}]}}}})
            owner = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": app, "uid": uid,
                     "controller": True, "blockOwnerDeletion": True}
        if kind != "none" or rng.random() < 0.3:
            self.docs.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": app, "namespace": ns},
                              "spec": {"selector": {"app": app}, "ports": [{"port": 80, "protocol": "TCP"}]}})
        node_selector = {}
        if rng.random() < 0.15:
            key, val = rng.choice([("disktype", "ssd"), ("kubernetes.io/arch", "amd64"), ("kubernetes.io/os", "linux"),
                                   ("topology.kubernetes.io/zone", rng.choice(self.zones))])
            node_selector[key] = val
        if gpu and rng.random() < 0.5:
            node_selector["accelerator"] = "nvidia"
        affinity = self.affinity(app, ns)
        spread = self.spread(app)
        tolerations = self.tolerations()
        if gpu:
            tolerations.append({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"})
        host_ports = None
        if rng.random() < 0.12:
            host_ports = [{"containerPort": rng.choice([8080, 9090]), "hostPort": rng.choice([8080, 9090, 30000]),
                           "protocol": rng.choice(["TCP", "TCP", "UDP"])}]
            if rng.random() < 0.3:
                host_ports[0]["hostIP"] = rng.choice(["0.0.0.0", "10.0.0.1"])
        prio = None
        r = rng.random()
        if r < 0.45:
            prio = rng.choice(self.pcs)
        scheduler = "default-scheduler"
        if len(self.profiles) > 1 and rng.random() < 0.3:
            scheduler = self.profiles[1]
        n_init = rng.choice([0, 0, 0, 1, 2])
        n_side = rng.choice([0, 0, 0, 1])
        n_main = rng.choice([1, 1, 1, 2, 3])
        overhead = rng.random() < 0.08
        gated = rng.random() < 0.04
        # the template's containers: fixed per app
        mains = []
        for i in range(n_main):
            c, cpu, mem, g = self.container(f"c{i}", image, gpu and i == 0, hugepages and i == 0,
                                            host_ports if i == 0 else None)
            mains.append((c, cpu, mem, g))
        inits = []
        for i in range(n_init):
            c, cpu, mem, g = self.container(f"init{i}", "registry.example.com/tools/busybox:1.36")
            inits.append((c, cpu, mem, g, False))
        for i in range(n_side):
            c, cpu, mem, g = self.container(f"sidecar{i}", "registry.example.com/tools/busybox:1.36")
            c["restartPolicy"] = "Always"
            inits.append((c, cpu, mem, g, True))
        # effective request (for placing running replicas)
        side_cpu = sum(x[1] for x in inits if x[4])
        side_mem = sum(x[2] for x in inits if x[4])
        eff_cpu = sum(x[1] for x in mains) + side_cpu
        eff_mem = sum(x[2] for x in mains) + side_mem
        acc_cpu = acc_mem = 0
        for c, cpu, mem, g, side in inits:
            if side:
                acc_cpu += cpu
                acc_mem += mem
            else:
                eff_cpu = max(eff_cpu, acc_cpu + cpu)
                eff_mem = max(eff_mem, acc_mem + mem)
        if overhead:
            eff_cpu += 100
            eff_mem += 64 * MI
        eff_gpu = sum(x[3] for x in mains)
        running_share = rng.random()
        for r_i in range(replicas):
            name = self.pod_name(f"{app}-{hash_[:5]}-{r_i}" if kind == "ReplicaSet" else f"{app}-{r_i}")
            spec = {"schedulerName": scheduler,
                    "containers": [json.loads(json.dumps(x[0])) for x in mains]}
            if scheduler == "default-scheduler" and rng.random() < 0.5:
                del spec["schedulerName"]
            if inits:
                spec["initContainers"] = [json.loads(json.dumps(x[0])) for x in inits]
            if node_selector:
                spec["nodeSelector"] = dict(node_selector)
            if affinity:
                spec["affinity"] = json.loads(json.dumps(affinity))
            if spread:
                spec["topologySpreadConstraints"] = json.loads(json.dumps(spread))
            if tolerations:
                spec["tolerations"] = json.loads(json.dumps(tolerations))
            if prio:
                spec["priorityClassName"] = prio
            if overhead:
                spec["runtimeClassName"] = "kata"
                spec["overhead"] = {"cpu": "100m", "memory": "64Mi"}
            md = {"name": name, "namespace": ns, "labels": dict(labels)}
            if rng.random() < 0.85:
                md["creationTimestamp"] = ts(rng, rng.choice([1, 2, 2, 3]))
            if owner:
                md["ownerReferences"] = [dict(owner)]
            pod = {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}
            # running or pending?
            node = None
            if rng.random() < running_share and not gated:
                node = self.place(eff_cpu, eff_mem, eff_gpu, host_ports, tolerations)
            if node is not None:
                spec["nodeName"] = node
                status = {"phase": "Running"}
                if rng.random() < 0.85:
                    status["startTime"] = ts(rng)
                pod["status"] = status
                if prio is None and rng.random() < 0.1:
                    # an explicit priority as kubectl shows it after admission
                    spec["priority"] = 0
            else:
                if gated:
                    spec["schedulingGates"] = [{"name": "example.com/quota"}]
                pod["status"] = {"phase": "Pending"}
                if rng.random() < 0.05:
                    pod["status"]["phase"] = rng.choice(["Succeeded", "Failed"])
            self.docs.append(pod)

    def place(self, cpu, mem, gpu, host_ports, tolerations):
        """Chooses a node with room for a running replica (resources only)."""
        rng = self.rng
        cands = []
        for name, node, free, labels, taints, unsched in self.nodes:
            if free["cpu"] >= cpu and free["memory"] >= mem and free["pods"] >= 1 and free["gpu"] >= gpu:
                cands.append((name, free))
        if not cands:
            return None
        name, free = rng.choice(cands)
        free["cpu"] -= cpu
        free["memory"] -= mem
        free["pods"] -= 1
        free["gpu"] -= gpu
        return name

    def gen_fillers(self):
        """Low-priority running pods that fill nodes up (preemption fodder)."""
        rng = self.rng
        if rng.random() >= 0.6:
            return
        guarded = rng.random() < 0.5
        if guarded:
            self.docs.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                              "metadata": {"name": "filler-pdb", "namespace": "batch"},
                              "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "filler"}}},
                              "status": {"disruptionsAllowed": rng.choice([0, 1, 2]), "currentHealthy": 3,
                                         "desiredHealthy": 2, "expectedPods": 3}})
        n = 0
        for name, node, free, labels, taints, unsched in self.nodes:
            if rng.random() < 0.3:
                continue
            share = rng.uniform(0.5, 0.98)
            for k in range(rng.randint(1, 3)):
                cpu = int(free["cpu"] * share / (k + 1)) // 10 * 10
                mem = int(free["memory"] * share / (k + 1)) // MI * MI
                if cpu < 10 or mem < MI or free["pods"] < 1:
                    break
                free["cpu"] -= cpu
                free["memory"] -= mem
                free["pods"] -= 1
                n += 1
                spec = {"nodeName": name, "containers": [{"name": "work", "image": "registry.example.com/app/worker:2024.3",
                                                          "resources": {"requests": {"cpu": cpu_q(rng, cpu),
                                                                                     "memory": mem_q(rng, mem)}}}]}
                pc = rng.choice(["low", "low", None, "medium"])
                if pc:
                    spec["priorityClassName"] = pc
                tol = [{"operator": "Exists"}] if taints else None
                if tol:
                    spec["tolerations"] = tol
                md = {"name": f"filler-{n}", "namespace": "batch",
                      "labels": {"app": "filler" if rng.random() < 0.7 else "filler-free"}}
                status = {"phase": "Running"}
                if rng.random() < 0.8:
                    status["startTime"] = ts(rng, rng.choice([1, 1, 2]))
                self.pod_names.add(md["name"])
                self.docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec, "status": status})

    def gen_urgent(self):
        """A few high-priority pending pods that need preemption."""
        rng = self.rng
        if rng.random() >= 0.6:
            return
        for i in range(rng.randint(1, 4)):
            node = rng.choice(self.nodes)
            cores = int(node[3]["cores"])
            cpu = int(cores * 1000 * rng.uniform(0.2, 0.7)) // 50 * 50
            spec = {"priorityClassName": rng.choice(["high", "high", "medium", "critical-batch"]),
                    "containers": [{"name": "c", "image": "registry.example.com/app/api:2024.3",
                                    "resources": {"requests": {"cpu": cpu_q(rng, max(cpu, 100)),
                                                               "memory": mem_q(rng, rng.choice([1, 2, 4]) * GI)}}}]}
            if rng.random() < 0.3:
                spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "urgent"}}, "topologyKey": "kubernetes.io/hostname"}]}}
            md = {"name": self.pod_name(f"urgent-{i}"), "namespace": "default", "labels": {"app": "urgent"}}
            if rng.random() < 0.8:
                md["creationTimestamp"] = ts(rng, 5)
            pod = {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}
            if rng.random() < 0.15:
                pod["status"] = {"phase": "Pending", "nominatedNodeName": node[0]}
            self.docs.append(pod)

    def gen_volumes(self):
        """PVs, PVCs and StorageClasses, and pods that use them."""
        rng = self.rng
        if rng.random() >= 0.3:
            return
        self.docs.append({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                          "metadata": {"name": "local-wffc"}, "provisioner": "kubernetes.io/no-provisioner",
                          "volumeBindingMode": "WaitForFirstConsumer"})
        self.docs.append({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                          "metadata": {"name": "standard"}, "provisioner": "example.com/csi"})
        # local PVs pinned to nodes, available for WaitForFirstConsumer claims
        for i, (name, node, free, labels, taints, unsched) in enumerate(rng.sample(self.nodes, min(len(self.nodes), rng.randint(1, 4)))):
            self.docs.append({"apiVersion": "v1", "kind": "PersistentVolume",
                              "metadata": {"name": f"local-pv-{i}"},
                              "spec": {"capacity": {"storage": rng.choice(["10Gi", "50Gi"])},
                                       "accessModes": ["ReadWriteOnce"], "storageClassName": "local-wffc",
                                       "persistentVolumeReclaimPolicy": "Retain",
                                       "local": {"path": f"/mnt/disk{i}"},
                                       "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                                           {"key": "kubernetes.io/hostname", "operator": "In", "values": [name]}]}]}}},
                              "status": {"phase": "Available"}})
        # a bound zonal volume
        zone = rng.choice(self.zones)
        self.docs.append({"apiVersion": "v1", "kind": "PersistentVolume",
                          "metadata": {"name": "zonal-pv", "labels": {"topology.kubernetes.io/zone": zone}},
                          "spec": {"capacity": {"storage": "20Gi"}, "accessModes": ["ReadWriteOnce"],
                                   "storageClassName": "standard", "persistentVolumeReclaimPolicy": "Delete",
                                   "csi": {"driver": "example.com/csi", "volumeHandle": "vol-1"},
                                   "claimRef": {"kind": "PersistentVolumeClaim", "namespace": "default",
                                                "name": "zonal-claim", "uid": "pvc-zonal-claim"},
                                   "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                                       {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}]}]}}},
                          "status": {"phase": "Bound"}})
        self.docs.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                          "metadata": {"name": "zonal-claim", "namespace": "default", "uid": "pvc-zonal-claim",
                                       "annotations": {"pv.kubernetes.io/bind-completed": "yes",
                                                       "pv.kubernetes.io/bound-by-controller": "yes"}},
                          "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "standard",
                                   "volumeName": "zonal-pv", "resources": {"requests": {"storage": "20Gi"}}},
                          "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "20Gi"}}})
        claims = ["zonal-claim"]
        for i in range(rng.randint(1, 4)):
            cname = f"local-claim-{i}"
            self.docs.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                              "metadata": {"name": cname, "namespace": "default"},
                              "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "local-wffc",
                                       "resources": {"requests": {"storage": rng.choice(["5Gi", "20Gi"])}}},
                              "status": {"phase": "Pending"}})
            claims.append(cname)
        self.docs.append({"apiVersion": "v1", "kind": "PersistentVolume",
                          "metadata": {"name": "exclusive-pv"},
                          "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOncePod"],
                                   "storageClassName": "standard", "persistentVolumeReclaimPolicy": "Delete",
                                   "csi": {"driver": "example.com/csi", "volumeHandle": "vol-2"},
                                   "claimRef": {"kind": "PersistentVolumeClaim", "namespace": "default",
                                                "name": "exclusive", "uid": "pvc-exclusive"}},
                          "status": {"phase": "Bound"}})
        self.docs.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                          "metadata": {"name": "exclusive", "namespace": "default", "uid": "pvc-exclusive",
                                       "annotations": {"pv.kubernetes.io/bind-completed": "yes",
                                                       "pv.kubernetes.io/bound-by-controller": "yes"}},
                          "spec": {"accessModes": ["ReadWriteOncePod"], "storageClassName": "standard",
                                   "volumeName": "exclusive-pv", "resources": {"requests": {"storage": "1Gi"}}},
                          "status": {"phase": "Bound", "accessModes": ["ReadWriteOncePod"],
                                     "capacity": {"storage": "1Gi"}}})
        claims += ["exclusive", "exclusive", "missing-claim"]
        for i, claim in enumerate(claims):
            md = {"name": self.pod_name(f"vol-user-{i}"), "namespace": "default", "labels": {"app": "vol-user"}}
            if rng.random() < 0.7:
                md["creationTimestamp"] = ts(rng, 4)
            spec = {"containers": [{"name": "c", "image": "registry.example.com/db/postgres:16",
                                    "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}],
                    "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]}
            if rng.random() < 0.3:
                spec["volumes"].append({"name": "scratch", "emptyDir": {}})
            self.docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec})
        self.gen_more_volumes()

    def gen_more_volumes(self):
        """CSINode limits, zonal and dynamically provisioned claims, inline
        disks, ephemeral volumes. A generator of its own, so that the
        documents above stay what they were for a given seed."""
        rng = random.Random(self.seed * 7919 + 1)
        csi = "example.com/csi"
        # per-node CSI volume limits; some nodes migrated the GCE PD plugin
        for (name, node, free, labels, taints, unsched) in self.nodes:
            if rng.random() >= 0.6:
                continue
            drivers = [{"name": csi, "nodeID": name, "allocatable": {"count": rng.randint(1, 3)}}]
            md = {"name": name}
            if rng.random() < 0.3:
                md["annotations"] = {"storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/gce-pd"}
                drivers.append({"name": "pd.csi.storage.gke.io", "nodeID": name,
                                "allocatable": {"count": rng.randint(1, 2)}})
            self.docs.append({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": md,
                              "spec": {"drivers": drivers}})
        zones = list(self.zones)
        self.docs.append({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                          "metadata": {"name": "dyn-zonal"}, "provisioner": csi,
                          "volumeBindingMode": "WaitForFirstConsumer",
                          "allowedTopologies": [{"matchLabelExpressions": [
                              {"key": "topology.kubernetes.io/zone",
                               "values": rng.sample(zones, rng.randint(1, len(zones)))}]}]})
        if rng.random() < 0.5:
            self.docs.append({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                              "metadata": {"name": "capacity-aware"}, "provisioner": "capacity.example.com",
                              "volumeBindingMode": "WaitForFirstConsumer"})
            self.docs.append({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
                              "metadata": {"name": "capacity.example.com"}, "spec": {"storageCapacity": True}})
            self.docs.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                              "metadata": {"name": "capacity-claim", "namespace": "default"},
                              "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "capacity-aware",
                                       "resources": {"requests": {"storage": "1Gi"}}}})
            self.more_vol_pod(rng, [{"name": "data", "persistentVolumeClaim": {"claimName": "capacity-claim"}}])
        # bound CSI volumes labelled with zones (GA, beta, several), each used by a pod
        for i in range(rng.randint(1, 5)):
            z = rng.choice(zones)
            labels = {}
            r = rng.random()
            if r < 0.4:
                labels["topology.kubernetes.io/zone"] = z
            elif r < 0.6:
                labels["failure-domain.beta.kubernetes.io/zone"] = z
            elif r < 0.8:
                labels["topology.kubernetes.io/zone"] = "__".join(rng.sample(zones, min(2, len(zones))))
            self.bound_csi(f"csi-vol-{i}", labels)
            self.more_vol_pod(rng, [{"name": "data", "persistentVolumeClaim": {"claimName": f"csi-vol-{i}"}}])
        # dynamically provisioned claims, some shared by two pods
        for i in range(rng.randint(1, 3)):
            cname = f"dyn-claim-{i}"
            self.docs.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                              "metadata": {"name": cname, "namespace": "default"},
                              "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "dyn-zonal",
                                       "resources": {"requests": {"storage": "1Gi"}}}})
            for _ in range(rng.choice([1, 1, 2])):
                self.more_vol_pod(rng, [{"name": "data", "persistentVolumeClaim": {"claimName": cname}}])
        # inline disks: running pods hold some, pending ones want them too
        disks = []
        for i in range(rng.randint(0, 3)):
            kind = rng.choice(["gce", "ebs"])
            src = ({"gcePersistentDisk": {"pdName": f"pd-{i}"}} if kind == "gce"
                   else {"awsElasticBlockStore": {"volumeID": f"vol-{i:04d}"}})
            disks.append(src)
            node = rng.choice(self.nodes)[0]
            self.more_vol_pod(rng, [dict({"name": "disk"}, **src)], node=node)
        for src in disks:
            ro = {k: dict(v, readOnly=rng.random() < 0.5) for k, v in src.items()}
            self.more_vol_pod(rng, [dict({"name": "disk"}, **ro)])
        # an ephemeral volume whose claim the controller already created
        if rng.random() < 0.5:
            name = self.pod_name("eph-user")
            uid = f"uid-pod-default/{name}"
            self.docs.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                              "metadata": {"name": f"{name}-scratch", "namespace": "default",
                                           "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": name,
                                                                "uid": uid, "controller": True}]},
                              "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "dyn-zonal",
                                       "resources": {"requests": {"storage": "1Gi"}}}})
            self.more_vol_pod(rng, [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
                "accessModes": ["ReadWriteOnce"], "storageClassName": "dyn-zonal",
                "resources": {"requests": {"storage": "1Gi"}}}}}}], name=name)

    def bound_csi(self, name, labels, driver="example.com/csi"):
        md = {"name": f"{name}-pv"}
        if labels:
            md["labels"] = labels
        self.docs.append({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": md,
                          "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"],
                                   "storageClassName": "standard", "persistentVolumeReclaimPolicy": "Delete",
                                   "csi": {"driver": driver, "volumeHandle": name},
                                   "claimRef": {"kind": "PersistentVolumeClaim", "namespace": "default",
                                                "name": name, "uid": f"pvc-{name}"}},
                          "status": {"phase": "Bound"}})
        self.docs.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                          "metadata": {"name": name, "namespace": "default", "uid": f"pvc-{name}",
                                       "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
                          "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "standard",
                                   "volumeName": f"{name}-pv", "resources": {"requests": {"storage": "10Gi"}}},
                          "status": {"phase": "Bound"}})

    def more_vol_pod(self, rng, volumes, node=None, name=None):
        md = {"name": name or self.pod_name("vol-pod"), "namespace": "default", "labels": {"app": "vol-pod"}}
        if rng.random() < 0.7:
            md["creationTimestamp"] = ts(rng, 5)
        spec = {"containers": [{"name": "c", "image": "registry.example.com/db/postgres:16",
                                "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}}}],
                "volumes": volumes}
        if node:
            spec["nodeName"] = node
        self.docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec})

    def gen_capacity(self):
        """Storage capacity tracking (a CSIDriver with storageCapacity,
        CSIStorageCapacity objects per node or zone, with and without
        maximumVolumeSize, WaitForFirstConsumer claims of several sizes) and
        VolumeAttachments on nodes whose CSINode limits a driver. A
        generator of its own: the documents above stay what they were."""
        rng = random.Random(self.seed * 104729 + 3)
        if rng.random() >= 0.4:
            return
        sto = "storage.k8s.io/v1"
        drv = "topo.example.com"
        self.docs.append({"apiVersion": sto, "kind": "CSIDriver", "metadata": {"name": drv},
                          "spec": {"storageCapacity": True}})
        classes = ["cap-fast", "cap-slow"]
        for cls in classes:
            self.docs.append({"apiVersion": sto, "kind": "StorageClass", "metadata": {"name": cls},
                              "provisioner": drv, "volumeBindingMode": "WaitForFirstConsumer"})
        # a driver that does not publish capacity: never checked
        self.docs.append({"apiVersion": sto, "kind": "StorageClass", "metadata": {"name": "cap-untracked"},
                          "provisioner": "untracked.example.com", "volumeBindingMode": "WaitForFirstConsumer"})
        if rng.random() < 0.5:
            self.docs.append({"apiVersion": sto, "kind": "CSIDriver", "metadata": {"name": "untracked.example.com"},
                              "spec": {"storageCapacity": False}})
        sizes = ["500Mi", "1Gi", "2Gi", "5Gi", "10Gi", "20Gi", "50Gi", "100Gi"]
        n = 0
        for (name, node, free, labels, taints, unsched) in self.nodes:
            if rng.random() < 0.25:
                continue
            for cls in classes:
                if rng.random() < 0.35:
                    continue
                obj = {"apiVersion": sto, "kind": "CSIStorageCapacity",
                       "metadata": {"name": f"csisc-{n}", "namespace": rng.choice(["kube-system", "default"])},
                       "storageClassName": cls}
                n += 1
                r = rng.random()
                if r < 0.7:
                    obj["nodeTopology"] = {"matchLabels": {"kubernetes.io/hostname": name}}
                elif r < 0.8:
                    other = rng.choice(self.nodes)[0]
                    obj["nodeTopology"] = {"matchExpressions": [
                        {"key": "kubernetes.io/hostname", "operator": "In", "values": sorted({name, other})}]}
                elif r < 0.9:
                    obj["nodeTopology"] = {"matchLabels": {"topology.kubernetes.io/zone": labels.get("topology.kubernetes.io/zone", "zone-a")}}
                # else: no nodeTopology, no node has access
                if rng.random() < 0.85:
                    obj["capacity"] = rng.choice(sizes)
                if rng.random() < 0.4:
                    obj["maximumVolumeSize"] = rng.choice(sizes)
                self.docs.append(obj)
        claim_classes = classes * 3 + ["cap-untracked"]
        for k in range(rng.randint(2, 8)):
            vols = []
            for j in range(rng.choice([1, 1, 1, 2])):
                cname = f"cap-claim-{k}-{j}"
                spec = {"accessModes": ["ReadWriteOnce"], "storageClassName": rng.choice(claim_classes),
                        "resources": {"requests": {"storage": rng.choice(sizes)}}}
                if rng.random() < 0.08:
                    spec["resources"] = {}  # no size requested: nothing to check
                self.docs.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                  "metadata": {"name": cname, "namespace": "default"}, "spec": spec})
                vols.append({"name": f"data-{j}", "persistentVolumeClaim": {"claimName": cname}})
            self.more_vol_pod(rng, vols)
        self.gen_attachments(rng)

    def gen_attachments(self, rng):
        att = "attach.example.com"
        sto = "storage.k8s.io/v1"
        csinodes = {d["metadata"]["name"]: d for d in self.docs if d.get("kind") == "CSINode"}
        limited = rng.sample(self.nodes, min(len(self.nodes), rng.randint(1, 4)))
        for (name, node, free, labels, taints, unsched) in limited:
            drv = {"name": att, "nodeID": name, "allocatable": {"count": rng.randint(1, 4)}}
            if name in csinodes:
                csinodes[name]["spec"]["drivers"].append(drv)
            else:
                self.docs.append({"apiVersion": sto, "kind": "CSINode", "metadata": {"name": name},
                                  "spec": {"drivers": [drv]}})
        # CSI volumes of the attaching driver, bound to claims
        vols = [f"att-vol-{i}" for i in range(rng.randint(2, 6))]
        for v in vols:
            self.bound_csi(v, {}, driver=att)
        # a volume that is not CSI
        self.docs.append({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "att-hostpath-pv"},
                          "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                                   "hostPath": {"path": "/mnt/x"}},
                          "status": {"phase": "Available"}})
        # running pods holding some of them
        for (name, node, free, labels, taints, unsched) in limited:
            if rng.random() < 0.5:
                v = rng.choice(vols)
                self.more_vol_pod(rng, [{"name": "data", "persistentVolumeClaim": {"claimName": v}}], node=name)
        # attachments: of held and unheld volumes, and the ones upstream skips
        for i in range(rng.randint(2, 8)):
            node = rng.choice(limited)[0]
            spec = {"attacher": att, "nodeName": node, "source": {"persistentVolumeName": f"{rng.choice(vols)}-pv"}}
            r = rng.random()
            if r < 0.08:
                spec["attacher"] = ""
            elif r < 0.16:
                spec["source"] = {}
            elif r < 0.24:
                spec["source"]["persistentVolumeName"] = "att-missing-pv"
            elif r < 0.32:
                spec["source"]["persistentVolumeName"] = "att-hostpath-pv"
            elif r < 0.40:
                spec["attacher"] = "other.example.com"
            self.docs.append({"apiVersion": sto, "kind": "VolumeAttachment", "metadata": {"name": f"va-{i}"},
                              "spec": spec, "status": {"attached": True}})
        # pending pods wanting one to three of the volumes
        for k in range(rng.randint(1, 5)):
            pick = rng.sample(vols, rng.randint(1, min(3, len(vols))))
            self.more_vol_pod(rng, [{"name": f"d{j}", "persistentVolumeClaim": {"claimName": v}}
                                    for j, v in enumerate(pick)])

    # ------------------------------------------------------------ extras
    def gen_extras(self):
        """Coverage the first generators lack: pod-level resources, host
        network ports, topology keys some nodes lack, an extended resource,
        untagged images, terminating and orphaned pods, explicit priorities,
        nominations, ReplicationControllers, preemption waves, more
        configurations. A generator
        of its own (own random stream, run last), so that the documents the
        others write stay what they were for a given seed."""
        rng = random.Random(self.seed * 7919 + 2)
        nodes = [d for d in self.docs if d["kind"] == "Node"]
        for node in nodes:
            labels = node["metadata"]["labels"]
            status = node["status"]
            if len(nodes) >= 4 and rng.random() < 0.05:
                del labels["topology.kubernetes.io/zone"]
            if rng.random() < 0.12:
                for k in ("capacity", "allocatable"):
                    if k in status:
                        status[k]["example.com/fpga"] = str(rng.choice([1, 2, 4]))
            if rng.random() < 0.2:
                status["images"].append({"names": ["registry.example.com/tools/jq:latest"],
                                         "sizeBytes": 30 * MI + rng.randint(0, 9999)})
            if rng.random() < 0.1:
                node["spec"].setdefault("taints", []).append(
                    {"key": "noisy", "value": "true", "effect": "PreferNoSchedule"})
        # per app decisions, so that replicas stay alike
        apps = {}
        for d in self.docs:
            if d["kind"] != "Pod":
                continue
            app = d["metadata"].get("labels", {}).get("app", "")
            if not re.match(r"^app[0-9]+$", app):
                continue
            if app not in apps:
                apps[app] = self.extra_app(rng, d)
            self.apply_extra(rng, d, apps[app])
        node_names = [n["metadata"]["name"] for n in nodes]
        pods = [d for d in self.docs if d["kind"] == "Pod"]
        for d in pods:
            spec, md = d["spec"], d["metadata"]
            running = "nodeName" in spec
            if rng.random() < (0.03 if running else 0.02):
                md["deletionTimestamp"] = "2024-03-28T00:00:00Z"
                md["deletionGracePeriodSeconds"] = 30
                if running and rng.random() < 0.5:
                    # evicted by an earlier preemption: the preemptor nominated
                    # to this node waits for it instead of preempting again
                    d.setdefault("status", {})["conditions"] = [
                        {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
                         "message": "default-scheduler: preempting to accommodate a higher priority pod"}]
            if running:
                continue
            if "priorityClassName" not in spec and "priority" not in spec and rng.random() < 0.04:
                spec["priority"] = rng.choice([0, 500, 20000])
                if rng.random() < 0.3:
                    spec["preemptionPolicy"] = "Never"
            if rng.random() < 0.02 and "nominatedNodeName" not in d.get("status", {}):
                d.setdefault("status", {"phase": "Pending"})["nominatedNodeName"] = \
                    rng.choice(node_names + ["node-gone"])
        if rng.random() < 0.1:
            # a running pod whose node is gone: invisible to the snapshot
            self.docs.append({"apiVersion": "v1", "kind": "Pod",
                              "metadata": {"name": self.pod_name("orphan"), "namespace": "default",
                                           "labels": {"app": "orphan"}},
                              "spec": {"nodeName": "node-gone", "containers": [
                                  {"name": "c", "image": "registry.example.com/app/api:2024.3",
                                   "resources": {"requests": {"cpu": "100m"}}}]},
                              "status": {"phase": "Running"}})
        if rng.random() < 0.2:
            self.gen_rc_app(rng)
        if rng.random() < 0.3:
            self.gen_preemption_wave(rng)
        if self.config is None and rng.random() < 0.15:
            self.gen_extra_config(rng)

    def extra_app(self, rng, pod):
        """What gen_extras changes in every replica of one app."""
        x = {}
        spec = pod["spec"]
        conts = spec["containers"] + spec.get("initContainers", [])
        if rng.random() < 0.06:
            cpu = sum(parse_q((c.get("resources", {}).get("requests", {}).get("cpu")
                               or c.get("resources", {}).get("limits", {}).get("cpu") or "0")) for c in conts)
            mem = sum(parse_q((c.get("resources", {}).get("requests", {}).get("memory")
                               or c.get("resources", {}).get("limits", {}).get("memory") or "0")) for c in conts)
            lim = sum(parse_q(c.get("resources", {}).get("limits", {}).get("memory") or "0") for c in conts)
            cpu_m = (int(cpu * 1000) // 100 + rng.randint(1, 10)) * 100
            mem_b = (int(max(mem, lim)) // MI + rng.choice([64, 256, 1024])) * MI
            form = rng.choice(["requests", "limits", "both"])
            res = {}
            if form in ("requests", "both"):
                res["requests"] = {"cpu": cpu_q(rng, cpu_m), "memory": mem_q(rng, mem_b)}
            if form in ("limits", "both"):
                res["limits"] = {"cpu": cpu_q(rng, cpu_m * 2), "memory": mem_q(rng, mem_b * 2)}
            x["resources"] = res
        if rng.random() < 0.04 and not any(c.get("ports") for c in conts):
            x["host_network_port"] = rng.choice([7000, 7001])
        elif rng.random() < 0.3 and any(c.get("restartPolicy") == "Always" for c in spec.get("initContainers", [])):
            x["sidecar_port"] = rng.choice([8080, 9090, 9100])
        if rng.random() < 0.08:
            x["spread"] = {"maxSkew": rng.randint(1, 2), "topologyKey": rng.choice(["disktype", "tier"]),
                           "whenUnsatisfiable": rng.choice(["DoNotSchedule", "ScheduleAnyway"])}
        if rng.random() < 0.08:
            x["affinity_kind"] = rng.choice(["podAffinity", "podAntiAffinity"])
            x["affinity_key"] = rng.choice(["disktype", "tier"])
            x["affinity_required"] = rng.random() < 0.5
        if rng.random() < 0.05:
            x["fpga"] = rng.choice([1, 1, 2])
        if rng.random() < 0.05:
            x["jq"] = True
        if rng.random() < 0.06:
            x["tolerations"] = rng.choice([
                [{"key": "dedicated", "operator": "Equal", "value": "db"}],
                [{"key": "noisy", "operator": "Exists", "effect": "PreferNoSchedule"}],
                [{"key": "dedicated", "operator": "Exists"}]])
        return x

    def apply_extra(self, rng, pod, x):
        spec = pod["spec"]
        app = pod["metadata"]["labels"]["app"]
        c0 = spec["containers"][0]
        if "resources" in x:
            spec["resources"] = json.loads(json.dumps(x["resources"]))
        if "host_network_port" in x:
            spec["hostNetwork"] = True
            c0["ports"] = [{"containerPort": x["host_network_port"]}]
        if "sidecar_port" in x:
            side = [c for c in spec["initContainers"] if c.get("restartPolicy") == "Always"][0]
            side["ports"] = [{"containerPort": 9100, "hostPort": x["sidecar_port"]}]
        if "spread" in x:
            c = dict(x["spread"], labelSelector={"matchLabels": {"app": app}})
            spec.setdefault("topologySpreadConstraints", []).append(c)
        if "affinity_kind" in x:
            term = {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": x["affinity_key"]}
            pa = spec.setdefault("affinity", {}).setdefault(x["affinity_kind"], {})
            if x["affinity_required"]:
                pa.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(term)
            else:
                pa.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                    {"weight": 50, "podAffinityTerm": term})
        if "fpga" in x:
            res = c0.setdefault("resources", {})
            res.setdefault("requests", {})["example.com/fpga"] = str(x["fpga"])
            res.setdefault("limits", {})["example.com/fpga"] = str(x["fpga"])
        if x.get("jq"):
            c0["image"] = "registry.example.com/tools/jq"
        if "tolerations" in x:
            spec.setdefault("tolerations", []).extend(json.loads(json.dumps(x["tolerations"])))

    def gen_preemption_wave(self, rng):
        """Nodes filled with pods of mixed priorities, some guarded by a
        PDB, and a wave of pending pods that can only land by preempting."""
        guarded = rng.random() < 0.5
        if guarded:
            self.docs.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                              "metadata": {"name": "wave-pdb", "namespace": "team-a"},
                              "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "wave-filler"}}},
                              "status": {"disruptionsAllowed": rng.choice([0, 1, 3]), "currentHealthy": 3,
                                         "desiredHealthy": 1, "expectedPods": 3}})
        n = 0
        for name, node, free, labels, taints, unsched in self.nodes:
            if rng.random() < 0.5:
                continue
            for k in range(rng.randint(1, 4)):
                cpu = int(free["cpu"] * rng.uniform(0.3, 0.95)) // 10 * 10
                mem = int(free["memory"] * rng.uniform(0.1, 0.6)) // MI * MI
                if cpu < 10 or mem < MI or free["pods"] < 1:
                    break
                free["cpu"] -= cpu
                free["memory"] -= mem
                free["pods"] -= 1
                n += 1
                spec = {"nodeName": name, "tolerations": [{"operator": "Exists"}],
                        "containers": [{"name": "c", "image": "registry.example.com/app/worker:2024.3",
                                        "resources": {"requests": {"cpu": cpu_q(rng, cpu), "memory": mem_q(rng, mem)}}}]}
                r = rng.random()
                if r < 0.4:
                    spec["priorityClassName"] = rng.choice(["low", "medium"])
                elif r < 0.6:
                    spec["priority"] = rng.choice([50, 500, 5000])
                md = {"name": self.pod_name(f"wave-filler-{n}"), "namespace": "team-a",
                      "labels": {"app": "wave-filler" if rng.random() < 0.5 else "wave-other"}}
                status = {"phase": "Running"}
                if rng.random() < 0.8:
                    status["startTime"] = ts(rng, rng.choice([1, 2, 3]))
                self.docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec, "status": status})
        for i in range(rng.randint(2, 8)):
            node = rng.choice(self.nodes)
            cores = int(node[3]["cores"])
            cpu = max(100, int(cores * 1000 * rng.uniform(0.1, 0.8)) // 50 * 50)
            spec = {"containers": [{"name": "c", "image": "registry.example.com/app/api:2024.3",
                                    "resources": {"requests": {"cpu": cpu_q(rng, cpu),
                                                               "memory": mem_q(rng, rng.choice([256, 512, 2048]) * MI)}}}]}
            r = rng.random()
            if r < 0.6:
                spec["priorityClassName"] = rng.choice(["medium", "high", "high", "critical-batch"])
            else:
                spec["priority"] = rng.choice([600, 3000, 20000])
            if rng.random() < 0.3:
                spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "wave"}}, "topologyKey": "kubernetes.io/hostname"}]}}
            elif rng.random() < 0.3:
                spec["nodeSelector"] = {"topology.kubernetes.io/zone": rng.choice(self.zones)}
            if rng.random() < 0.3:
                spec["tolerations"] = [{"operator": "Exists"}]
            md = {"name": self.pod_name(f"wave-{i}"), "namespace": rng.choice(["team-a", "default"]),
                  "labels": {"app": "wave"}}
            if rng.random() < 0.8:
                md["creationTimestamp"] = ts(rng, 6)
            pod = {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}
            if rng.random() < 0.1:
                pod["status"] = {"phase": "Pending", "nominatedNodeName": node[0]}
            self.docs.append(pod)

    def gen_rc_app(self, rng):
        """A ReplicationController's pods (default spreading by its selector)."""
        ns = rng.choice(NAMESPACES)[0]
        labels = {"app": "rcapp", "rc": "yes"}
        uid = self.next_uid("rc")
        n = rng.randint(2, 5)
        self.docs.append({"apiVersion": "v1", "kind": "ReplicationController",
                          "metadata": {"name": "rcapp", "namespace": ns, "uid": uid},
                          "spec": {"replicas": n, "selector": dict(labels),
                                   "template": {"metadata": {"labels": dict(labels)},
                                                "spec": {"containers": [{"name": "c", "image": "registry.example.com/cache/redis:7"}]}}}})
        for i in range(n):
            md = {"name": self.pod_name(f"rcapp-{i}"), "namespace": ns, "labels": dict(labels),
                  "ownerReferences": [{"apiVersion": "v1", "kind": "ReplicationController", "name": "rcapp",
                                       "uid": uid, "controller": True}]}
            spec = {"containers": [{"name": "c", "image": "registry.example.com/cache/redis:7",
                                    "resources": {"requests": {"cpu": "200m", "memory": "256Mi"}}}]}
            pod = {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}
            if i == 0 and rng.random() < 0.5:
                spec["nodeName"] = rng.choice(self.nodes)[0]
                pod["status"] = {"phase": "Running"}
            self.docs.append(pod)

    def gen_extra_config(self, rng):
        """Profiles with arguments the first configuration generator never writes."""
        prof = {"schedulerName": "default-scheduler"}
        choice = rng.randrange(7)
        if choice == 0:
            args = rng.choice([{"ignoredResources": ["example.com/fpga"]}, {"ignoredResourceGroups": ["example.com"]}])
            prof["pluginConfig"] = [{"name": "NodeResourcesFit", "args": args}]
        elif choice == 1:
            prof["pluginConfig"] = [{"name": "NodeResourcesBalancedAllocation", "args": {"resources": [
                {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1},
                {"name": rng.choice(["nvidia.com/gpu", "example.com/fpga"]), "weight": 1}]}}]
        elif choice == 2:
            prof["pluginConfig"] = [{"name": "InterPodAffinity", "args": {"ignorePreferredTermsOfExistingPods": True}}]
        elif choice == 3:
            prof["plugins"] = {"score": {"enabled": [{"name": "TaintToleration", "weight": rng.randint(1, 10)},
                                                     {"name": "ImageLocality", "weight": rng.randint(1, 10)}]}}
        elif choice == 4:
            prof["plugins"] = {"filter": {"disabled": [{"name": rng.choice(["NodePorts", "TaintToleration",
                                                                             "PodTopologySpread"])}]}}
        elif choice == 5:
            strategy = rng.choice(["MostAllocated", "RequestedToCapacityRatio", "LeastAllocated"])
            ss = {"type": strategy, "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1},
                                                   {"name": rng.choice(["nvidia.com/gpu", "example.com/fpga"]),
                                                    "weight": rng.randint(1, 5)}]}
            if strategy == "RequestedToCapacityRatio":
                ss["requestedToCapacityRatio"] = {"shape": [{"utilization": 0, "score": 10},
                                                            {"utilization": 40, "score": 3},
                                                            {"utilization": 100, "score": rng.randint(0, 10)}]}
            prof["pluginConfig"] = [{"name": "NodeResourcesFit", "args": {"scoringStrategy": ss}}]
        else:
            prof["pluginConfig"] = [{"name": "PodTopologySpread", "args": {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway"},
                    {"maxSkew": rng.randint(1, 3), "topologyKey": "topology.kubernetes.io/zone",
                     "whenUnsatisfiable": rng.choice(["ScheduleAnyway", "DoNotSchedule"])}]}}]
        self.config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                       "profiles": [prof]}

    def gen_dra(self):
        """Dynamic Resource Allocation: GPU drivers publishing ResourceSlices
        (models, memory, NUMA node, driver versions), DeviceClasses with CEL
        selectors, claims and templates (counts, All, firstAvailable,
        matchAttribute, admin access, a shared claim, a claim allocated
        before), and the pods that use them. A generator of its own, so that
        the documents above stay what they were for a given seed. Each
        driver has at most one pool per node and classes select by driver:
        upstream tries pools in Go map order, ksched in name order, which
        only matters when several pools hold matching devices."""
        rng = random.Random(self.seed * 104729 + 7)
        if rng.random() >= 0.45:
            return
        gpu, nic = "gpu.example.com", "nic.example.com"
        models = [("a100", "40Gi", "550.54.15"), ("a100", "80Gi", "550.54.15"), ("h100", "80Gi", "560.28.3"),
                  ("l4", "24Gi", "535.104.5")]
        nodes = [n for n in self.nodes if rng.random() < 0.7] or self.nodes[:1]
        devices_on = {}
        for (name, node, free, labels, taints, unsched) in nodes:
            devs = []
            model, mem, ver = rng.choice(models)
            for d in range(rng.randint(1, 6)):
                if rng.random() < 0.2:
                    model, mem, ver = rng.choice(models)
                attrs = {"model": {"string": model}, "numa": {"int": d % 2 if rng.random() < 0.8 else rng.randint(0, 3)},
                         "driverVersion": {"version": ver}}
                if rng.random() < 0.3:
                    attrs["mig"] = {"bool": rng.random() < 0.5}
                if rng.random() < 0.2:
                    attrs["gpu.example.com/pcieRoot"] = {"string": f"pci0000:{(d // 2) * 40:02x}"}
                devs.append({"name": f"gpu-{d}", "attributes": attrs, "capacity": {"memory": {"value": mem}}})
            devices_on[name] = len(devs)
            count = 1
            if rng.random() < 0.05:
                count = 2  # the pool's other slice is not published yet
            self.docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                              "metadata": {"name": f"{name}-{gpu}"},
                              "spec": {"driver": gpu, "nodeName": name,
                                       "pool": {"name": name, "generation": rng.choice([1, 1, 2]),
                                                "resourceSliceCount": count},
                                       "devices": devs}})
            if rng.random() < 0.3:
                self.docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                                  "metadata": {"name": f"{name}-{nic}"},
                                  "spec": {"driver": nic, "nodeName": name,
                                           "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                                           "devices": [{"name": f"eth{k}", "attributes": {"speedGbps": {"int": rng.choice([25, 100])}}}
                                                       for k in range(rng.randint(1, 2))]}})
        self.docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                          "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{gpu}"'}}]}})
        self.docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu-large"},
                          "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{gpu}"'}},
                                                 {"cel": {"expression": f'device.capacity["{gpu}"].memory.compareTo(quantity("64Gi")) >= 0'}}]}})
        self.docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "nic"},
                          "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{nic}"'}}]}})
        if rng.random() < 0.3:
            self.docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu-new-driver"},
                              "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{gpu}" && device.attributes["{gpu}"].driverVersion.isGreaterThan(semver("555.0.0"))'}}]}})

        def req(name, cls="gpu", count=None, sel=None, mode=None, admin=None):
            ex = {"deviceClassName": cls}
            if mode:
                ex["allocationMode"] = mode
            if count:
                ex["count"] = count
            if sel:
                ex["selectors"] = [{"cel": {"expression": e}} for e in sel]
            if admin:
                ex["adminAccess"] = True
            return {"name": name, "exactly": ex}

        model = rng.choice(models)[0]
        specs = {
            "one-gpu": {"requests": [req("gpu")]},
            "two-gpus": {"requests": [req("gpus", count=2)]},
            "two-same-numa": {"requests": [req("gpus", count=2)],
                              "constraints": [{"matchAttribute": f"{gpu}/numa"}]},
            "model": {"requests": [req("gpu", sel=[f'device.attributes["{gpu}"].model == "{model}"'])]},
            "gpu-and-nic": {"requests": [req("gpu"), req("nic", cls="nic")]},
            "first-available": {"requests": [{"name": "gpu", "firstAvailable": [
                {"name": "big", "deviceClassName": "gpu-large", "count": 2},
                {"name": "h100", "deviceClassName": "gpu",
                 "selectors": [{"cel": {"expression": f'device.attributes["{gpu}"].model == "h100"'}}]},
                {"name": "any", "deviceClassName": "gpu"}]}]},
            "all-model": {"requests": [req("gpus", mode="All", sel=[f'device.attributes["{gpu}"].model == "{model}"'])]},
            "new-driver": {"requests": [req("gpu", cls="gpu-new-driver")]},
            "monitor": {"requests": [req("gpus", mode="All", admin=True)]},
            "mig": {"requests": [req("gpu", sel=[f'device.attributes["{gpu}"].mig'])]},
        }
        weights = ["one-gpu", "one-gpu", "two-gpus", "two-same-numa", "model", "gpu-and-nic", "first-available",
                   "all-model", "new-driver", "monitor"]
        if rng.random() < 0.15:
            weights.append("mig")  # not every GPU says whether it has MIG: a CEL runtime error
        for tname in sorted(set(weights)):
            self.docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                              "metadata": {"name": tname, "namespace": "default"},
                              "spec": {"spec": {"devices": specs[tname]}}})
        # a claim shared by several pods
        self.docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                          "metadata": {"name": "shared-gpu", "namespace": "default"},
                          "spec": {"devices": specs[rng.choice(["one-gpu", "model"])]}})
        claims = ["shared-gpu"] * rng.randint(1, 3)
        # a claim allocated before (a device in use), reserved or not
        with_dev = [n for n in devices_on if devices_on[n] > 0]
        if with_dev and rng.random() < 0.6:
            node = rng.choice(with_dev)
            st = {"allocation": {"devices": {"results": [{"request": "gpu", "driver": gpu, "pool": node, "device": "gpu-0"}]},
                                 "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                     {"key": "metadata.name", "operator": "In", "values": [node]}]}]}}}
            if rng.random() < 0.5:
                st["reservedFor"] = [{"resource": "pods", "name": "someone", "uid": "uid-someone"}]
            self.docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                              "metadata": {"name": "allocated-gpu", "namespace": "default"},
                              "spec": {"devices": specs["one-gpu"]}, "status": st})
            claims += ["allocated-gpu"] * rng.randint(0, 2)
        if rng.random() < 0.1:
            claims.append("missing-claim")
        for i in range(rng.randint(2, 12)):
            entries = []
            if i < len(claims):
                entries.append({"name": "gpu", "resourceClaimName": claims[i]})
            else:
                entries.append({"name": "gpu", "resourceClaimTemplateName": rng.choice(weights)})
                if rng.random() < 0.15:
                    entries.append({"name": "extra", "resourceClaimTemplateName": rng.choice(["one-gpu", "gpu-and-nic"])})
            if rng.random() < 0.03:
                entries.append({"name": "gone", "resourceClaimTemplateName": "no-such-template"})
            md = {"name": self.pod_name(f"dra-{i}"), "namespace": "default", "labels": {"app": "dra"}}
            if rng.random() < 0.7:
                md["creationTimestamp"] = ts(rng, 5)
            spec = {"containers": [{"name": "c", "image": "registry.example.com/ml/trainer:2",
                                    "resources": {"requests": {"cpu": rng.choice(["100m", "500m", "1"]),
                                                               "memory": "256Mi"}}}],
                    "resourceClaims": entries}
            if rng.random() < 0.15:
                spec["nodeSelector"] = {"topology.kubernetes.io/zone": rng.choice(self.zones)}
            self.docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec})

    def gen_dra_alternatives(self):
        """DRA firstAvailable lists mixing counted, "All" and selector-only
        subrequests, a matchAttribute constraint across them, and pools
        partly allocated by claims held before (the shape of issue #37: a
        counted subrequest followed by an All one). Only for seeds gen_dra
        made a DRA cluster for, with a generator of its own so the documents
        before stay what they were for a given seed."""
        slices = [d for d in self.docs if d.get("kind") == "ResourceSlice" and d["spec"]["driver"] == "gpu.example.com"]
        if not slices:
            return
        rng = random.Random(self.seed * 15485863 + 29)
        if rng.random() >= 0.7:
            return
        gpu = "gpu.example.com"

        def model_is(m):
            return [{"cel": {"expression": f'device.attributes["{gpu}"].model == "{m}"'}}]

        def sub(name, cls="gpu", count=None, mode=None, model=None):
            s = {"name": name, "deviceClassName": cls}
            if count:
                s["count"] = count
            if mode:
                s["allocationMode"] = mode
            if model:
                s["selectors"] = model_is(model)
            return s

        ms = ["a100", "h100", "l4"]
        m1, m2 = rng.sample(ms, 2)
        templates = {
            "alt-pair-or-all": {"requests": [{"name": "gpu", "firstAvailable": [
                sub("pair", count=2, model=m1), sub("all", mode="All", model=m2), sub("one")]}]},
            "alt-all-first": {"requests": [{"name": "gpu", "firstAvailable": [
                sub("all", mode="All", model=rng.choice(ms)), sub("two", count=2), sub("one")]}]},
            "alt-two-all": {"requests": [{"name": "gpu", "firstAvailable": [
                sub("all-a", mode="All", model=m1), sub("all-b", mode="All", model=m2),
                sub("big", cls="gpu-large", count=rng.randint(1, 2))]}]},
            "alt-numa": {"requests": [{"name": "gpu", "firstAvailable": [
                sub("pair", count=2, model=rng.choice(ms)), sub("all", mode="All", model=rng.choice(ms)),
                sub("two", count=2)]},
                {"name": "extra", "exactly": {"deviceClassName": "gpu"}}],
                "constraints": [{"requests": rng.choice([["gpu", "extra"], ["gpu/all", "extra"], []]),
                                 "matchAttribute": f"{gpu}/numa"}]},
        }
        for name in sorted(templates):
            self.docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                              "metadata": {"name": name, "namespace": "default"},
                              "spec": {"spec": {"devices": templates[name]}}})
        # pools partly allocated: devices held by claims allocated before
        for i, sl in enumerate(slices):
            devs = [d["name"] for d in sl["spec"]["devices"]]
            if len(devs) < 2 or rng.random() >= 0.5:
                continue
            held = rng.sample(devs[1:], rng.randint(1, min(2, len(devs) - 1)))
            node = sl["spec"]["nodeName"]
            self.docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                              "metadata": {"name": f"held-{i}", "namespace": "default"},
                              "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                                  "deviceClassName": "gpu", "count": len(held)}}]}},
                              "status": {"allocation": {
                                  "devices": {"results": [{"request": "gpu", "driver": gpu, "pool": sl["spec"]["pool"]["name"],
                                                           "device": d} for d in held]},
                                  "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                      {"key": "metadata.name", "operator": "In", "values": [node]}]}]}},
                                  "reservedFor": [{"resource": "pods", "name": f"holder-{i}", "uid": f"uid-holder-{i}"}]}})
        names = sorted(templates)
        for i in range(rng.randint(2, 6)):
            spec = {"containers": [{"name": "c", "image": "registry.example.com/ml/trainer:2",
                                    "resources": {"requests": {"cpu": rng.choice(["100m", "500m"]), "memory": "128Mi"}}}],
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": rng.choice(names)}]}
            md = {"name": self.pod_name(f"alt-{i}"), "namespace": "default", "labels": {"app": "dra-alt"}}
            self.docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec})

    def gen_dra_gates(self):
        """DRA behind feature gates: device taints (taints in slices,
        DeviceTaintRules, tolerations; DRADeviceTaints), partitionable
        devices (shared counters, devices consuming them, per-device node
        selection; DRAPartitionableDevices), devices shared by claims
        (allowMultipleAllocations, capacities with request policies,
        capacity requests, distinctAttribute; DRAConsumableCapacity), each
        with its gate on or off,
        and the default-on gates turned off (DynamicResourceAllocation,
        DRAPrioritizedList, DRAAdminAccess, DRASchedulerFilterTimeout).
        The gates go to `feature-gates`. Only for seeds gen_dra made a DRA
        cluster for, with a generator of its own; every driver still has at
        most one pool a node sees."""
        if not any(d.get("kind") == "DeviceClass" for d in self.docs):
            return
        rng = random.Random(self.seed * 7919 + 13)
        gates = []
        p = rng.random()
        if p < 0.06:
            gates = ["DynamicResourceAllocation=false"]
        elif p < 0.12:
            gates = [rng.choice(["DRAPrioritizedList=false", "DRAAdminAccess=false", "DRASchedulerFilterTimeout=false"])]
        taints, parts, caps = rng.random() < 0.35, rng.random() < 0.35, rng.random() < 0.3
        # each alpha feature mostly with its gate on; off, its fields are
        # ignored (taints, counters) or refused (capacity requests)
        for on, gate in ((taints, "DRADeviceTaints"), (parts, "DRAPartitionableDevices"), (caps, "DRAConsumableCapacity")):
            if on and rng.random() < 0.8:
                gates.append(gate + "=true")
        if not (taints or parts or caps or gates):
            return
        if rng.random() < 0.2 and gates:
            gates = [("kube:" + g) for g in gates]
        self.feature_gates = ",".join(gates) if gates else None
        gpu = "gpu.example.com"
        templates, pods = {}, []
        if taints:
            effects = ["NoSchedule", "NoExecute"]
            for d in self.docs:
                if d.get("kind") != "ResourceSlice" or d["spec"]["driver"] != gpu:
                    continue
                for dev in d["spec"]["devices"]:
                    if rng.random() < 0.3:
                        t = {"key": rng.choice(["maintenance", "ecc"]), "effect": rng.choice(effects)}
                        if rng.random() < 0.5:
                            t["value"] = rng.choice(["planned", "true"])
                        dev["taints"] = [t]
            nodes = [d["spec"]["pool"]["name"] for d in self.docs
                     if d.get("kind") == "ResourceSlice" and d["spec"]["driver"] == gpu]
            rules = []
            if nodes and rng.random() < 0.7:
                rules.append({"deviceSelector": {"driver": gpu, "pool": rng.choice(nodes), "device": "gpu-0"},
                              "taint": {"key": "rule-maintenance", "value": "planned", "effect": "NoSchedule"}})
            if rng.random() < 0.5:
                rules.append({"deviceSelector": {"deviceClassName": "gpu-large"},
                              "taint": {"key": "large", "effect": rng.choice(effects)}})
            if rng.random() < 0.5:
                rules.append({"deviceSelector": {"selectors": [{"cel": {"expression":
                              f'device.attributes["{gpu}"].model == "{rng.choice(["a100", "h100", "l4"])}"'}}]},
                              "taint": {"key": "model", "value": "deprecated", "effect": "NoSchedule"}})
            if rng.random() < 0.3:
                # a runtime error (not every GPU has "mig") leaves the device alone
                rules.append({"deviceSelector": {"driver": gpu, "selectors": [{"cel": {"expression":
                              f'device.attributes["{gpu}"].mig'}}]},
                              "taint": {"key": "mig", "effect": "NoExecute"}})
            if rng.random() < 0.2:
                rules.append({"deviceSelector": {"deviceClassName": "no-such-class"},
                              "taint": {"key": "never", "effect": "NoSchedule"}})
            for i, r in enumerate(rules):
                self.docs.append({"apiVersion": "resource.k8s.io/v1alpha3", "kind": "DeviceTaintRule",
                                  "metadata": {"name": f"rule-{i}"}, "spec": r})
            tol_any = {"operator": "Exists"}
            tol_maint = {"key": "maintenance", "operator": "Exists"}
            tol_planned = {"key": "rule-maintenance", "operator": "Equal", "value": "planned", "effect": "NoSchedule"}
            tol_model = {"key": "model", "value": "deprecated"}
            templates["tolerate-all"] = {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu",
                                                                                   "tolerations": [tol_any]}}]}
            templates["tolerate-some"] = {"requests": [{"name": "gpus", "exactly": {
                "deviceClassName": "gpu", "count": rng.randint(1, 2),
                "tolerations": [tol_maint, tol_planned, tol_model][:rng.randint(1, 3)]}}]}
            templates["tolerate-first"] = {"requests": [{"name": "gpu", "firstAvailable": [
                {"name": "clean", "deviceClassName": "gpu-large"},
                {"name": "tainted", "deviceClassName": "gpu", "tolerations": [{"effect": "NoSchedule", "operator": "Exists"}]}]}]}
            pods += ["tolerate-all", "tolerate-some", "tolerate-first", "tolerate-some"]
        if parts:
            part, link = "part.example.com", "link.example.com"
            part_nodes = [n for n in self.nodes if rng.random() < 0.5] or self.nodes[:1]
            for (name, node, free, labels, tts, unsched) in part_nodes:
                counters, devs = [], []
                for g in range(rng.randint(1, 2)):
                    mem = rng.choice([40, 80])
                    counters.append({"name": f"gpu{g}", "counters": {"memory": {"value": f"{mem}Gi"},
                                                                     "slices": {"value": "7"}}})
                    shapes = [("whole", mem, 7), ("3g", mem // 2, 3), ("3g", mem // 2, 3), ("1g", mem // 8, 1),
                              ("1g", mem // 8, 1)]
                    for k, (kind, m, sl) in enumerate(shapes):
                        if kind != "whole" and rng.random() < 0.2:
                            continue
                        devs.append({"name": f"gpu{g}-{kind}-{k}",
                                     "attributes": {"profile": {"string": kind}, "gpu": {"int": g}},
                                     "capacity": {"memory": {"value": f"{m}Gi"}},
                                     "consumesCounters": [{"counterSet": f"gpu{g}",
                                                           "counters": {"memory": {"value": f"{m}Gi"},
                                                                        "slices": {"value": str(sl)}}}]})
                self.docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                                  "metadata": {"name": f"{name}-{part}"},
                                  "spec": {"driver": part, "nodeName": name,
                                           "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                                           "sharedCounters": counters, "devices": devs}})
            # a device already allocated takes its counters
            if rng.random() < 0.5:
                node = part_nodes[0][0]
                self.docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                  "metadata": {"name": "allocated-part", "namespace": "default"},
                                  "spec": {"devices": {"requests": [{"name": "p", "exactly": {"deviceClassName": "part"}}]}},
                                  "status": {"allocation": {
                                      "devices": {"results": [{"request": "p", "driver": part, "pool": node,
                                                               "device": rng.choice(["gpu0-3g-1", "gpu0-1g-3", "gpu0-whole-0"])}]},
                                      "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                          {"key": "metadata.name", "operator": "In", "values": [node]}]}]}},
                                      "reservedFor": [{"resource": "pods", "name": "someone", "uid": "uid-someone"}]}})
            # links shared between nodes, each device where it is reachable
            link_devs = []
            for k, (name, node, free, labels, tts, unsched) in enumerate(self.nodes[:8]):
                if rng.random() < 0.3:
                    link_devs.append({"name": f"link-{k}", "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
                        {"key": "topology.kubernetes.io/zone", "operator": "In",
                         "values": [rng.choice(self.zones)]}]}]}})
                else:
                    link_devs.append({"name": f"link-{k}", "nodeName": name})
            if rng.random() < 0.2:
                link_devs.append({"name": "link-any", "allNodes": True})
            self.docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                              "metadata": {"name": "fabric-links"},
                              "spec": {"driver": link, "perDeviceNodeSelection": True,
                                       "pool": {"name": "fabric", "generation": 1, "resourceSliceCount": 1},
                                       "devices": link_devs}})
            self.docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "part"},
                              "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{part}"'}}]}})
            self.docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "part-small"},
                              "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{part}"'}},
                                                     {"cel": {"expression": f'device.capacity["{part}"].memory.compareTo(quantity("20Gi")) <= 0'}}]}})
            self.docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "link"},
                              "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{link}"'}}]}})
            templates["part-one"] = {"requests": [{"name": "p", "exactly": {"deviceClassName": "part"}}]}
            templates["part-two"] = {"requests": [{"name": "p", "exactly": {"deviceClassName": "part", "count": 2}}],
                                     "constraints": [{"matchAttribute": f"{part}/gpu"}] if rng.random() < 0.5 else []}
            templates["part-small"] = {"requests": [{"name": "p", "exactly": {"deviceClassName": "part-small",
                                                                               "count": rng.randint(1, 3)}}]}
            templates["part-all"] = {"requests": [{"name": "p", "exactly": {"deviceClassName": "part", "allocationMode": "All",
                                                                             "selectors": [{"cel": {"expression": f'device.attributes["{part}"].profile == "1g"'}}]}}]}
            templates["link-one"] = {"requests": [{"name": "l", "exactly": {"deviceClassName": "link"}}]}
            templates["part-and-link"] = {"requests": [{"name": "p", "exactly": {"deviceClassName": "part"}},
                                                       {"name": "l", "exactly": {"deviceClassName": "link"}}]}
            pods += ["part-one", "part-one", "part-two", "part-small", "part-all", "link-one", "part-and-link"]
        if caps:
            snic = "snic.example.com"
            snic_nodes = [n for n in self.nodes if rng.random() < 0.5] or self.nodes[:1]
            for (name, node, free, labels, tts, unsched) in snic_nodes:
                devs = []
                for k in range(rng.randint(1, 2)):
                    bw = rng.choice([40, 100])
                    dev = {"name": f"snic-{k}", "allowMultipleAllocations": True,
                           "attributes": {"port": {"int": k}, "speed": {"int": bw}},
                           "capacity": {"bandwidth": {"value": f"{bw}Gi", "requestPolicy": {
                                            "default": "10Gi", "validRange": {"min": "1Gi", "max": f"{bw}Gi", "step": "1Gi"}}},
                                        "queues": {"value": "16", "requestPolicy": {"default": "1", "validValues": ["1", "2", "4", "8"]}}}}
                    if rng.random() < 0.2:
                        dev["capacity"]["bandwidth"].pop("requestPolicy")
                    devs.append(dev)
                devs.append({"name": "snic-dedicated", "attributes": {"port": {"int": 9}, "speed": {"int": 25}},
                             "capacity": {"bandwidth": {"value": "25Gi"}, "queues": {"value": "4"}}})
                self.docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                                  "metadata": {"name": f"{name}-{snic}"},
                                  "spec": {"driver": snic, "nodeName": name,
                                           "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                                           "devices": devs}})
            if rng.random() < 0.5:
                node = snic_nodes[0][0]
                self.docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                  "metadata": {"name": "allocated-share", "namespace": "default"},
                                  "spec": {"devices": {"requests": [{"name": "n", "exactly": {"deviceClassName": "snic"}}]}},
                                  "status": {"allocation": {
                                      "devices": {"results": [{"request": "n", "driver": snic, "pool": node, "device": "snic-0",
                                                               "shareID": "7b0f1c2e-0000-4000-8000-000000000001",
                                                               "consumedCapacity": {"bandwidth": f"{rng.choice([20, 35])}Gi",
                                                                                    "queues": "8"}}]},
                                      "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                          {"key": "metadata.name", "operator": "In", "values": [node]}]}]}},
                                      "reservedFor": [{"resource": "pods", "name": "someone", "uid": "uid-someone"}]}})
            self.docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "snic"},
                              "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{snic}"'}}]}})
            self.docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "snic-shared"},
                              "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{snic}" && device.allowMultipleAllocations'}}]}})
            templates["snic-default"] = {"requests": [{"name": "nic", "exactly": {"deviceClassName": "snic"}}]}
            templates["snic-bw"] = {"requests": [{"name": "nic", "exactly": {"deviceClassName": "snic", "capacity": {"requests": {
                "bandwidth": f"{rng.randint(5, 45)}Gi", "queues": str(rng.choice([1, 2, 3, 4, 8]))}}}}]}
            templates["snic-two"] = {"requests": [{"name": "nic", "exactly": {"deviceClassName": "snic-shared", "count": 2,
                                                                                "capacity": {"requests": {"bandwidth": f"{rng.choice([15, 30])}Gi"}}}}]}
            templates["snic-distinct"] = {"requests": [{"name": "a", "exactly": {"deviceClassName": "snic"}},
                                                       {"name": "b", "exactly": {"deviceClassName": "snic"}}],
                                          "constraints": [{"distinctAttribute": f"{snic}/port"}]}
            templates["snic-odd"] = {"requests": [{"name": "nic", "exactly": {"deviceClassName": "snic", "capacity": {"requests": {
                rng.choice(["power", "bandwidth"]): rng.choice(["1", "200Gi"])}}}}]}
            pods += ["snic-default", "snic-default", "snic-bw", "snic-bw", "snic-two", "snic-distinct", "snic-odd"]
        for tname in sorted(templates):
            self.docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                              "metadata": {"name": tname, "namespace": "default"},
                              "spec": {"spec": {"devices": templates[tname]}}})
        rng.shuffle(pods)
        for i, tname in enumerate(pods[:rng.randint(2, len(pods))] if pods else []):
            md = {"name": self.pod_name(f"dra-g-{i}"), "namespace": "default", "labels": {"app": "dra"}}
            if rng.random() < 0.7:
                md["creationTimestamp"] = ts(rng, 5)
            spec = {"containers": [{"name": "c", "image": "registry.example.com/ml/trainer:2",
                                    "resources": {"requests": {"cpu": rng.choice(["100m", "500m"]), "memory": "256Mi"}}}],
                    "resourceClaims": [{"name": "dev", "resourceClaimTemplateName": tname}]}
            self.docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec})

    def run(self):
        self.gen_config()
        self.gen_namespaces()
        self.gen_priority_classes()
        self.gen_nodes()
        self.gen_workloads()
        self.gen_fillers()
        self.gen_urgent()
        self.gen_volumes()
        self.gen_extras()
        self.gen_dra()
        self.gen_dra_gates()
        self.gen_capacity()
        self.gen_dra_alternatives()
        # shuffle documents a little: object order must not matter except pods
        return self.docs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--nodes", type=int, default=None, help="number of nodes (default: chosen by the seed)")
    ap.add_argument("-o", "--output", required=True, help="scenario directory to write")
    args = ap.parse_args(argv)
    g = Gen(args.seed, args.nodes)
    docs = g.run()
    os.makedirs(args.output, exist_ok=True)
    with open(os.path.join(args.output, "cluster.yaml"), "w") as f:
        f.write(f"# generated by test/scenarios/gen.py --seed {args.seed}"
                + (f" --nodes {args.nodes}" if args.nodes is not None else "") + "\n")
        f.write(to_yaml(docs))
    cfg_path = os.path.join(args.output, "config.yaml")
    if g.config is not None:
        with open(cfg_path, "w") as f:
            f.write(to_yaml([g.config]))
    elif os.path.exists(cfg_path):
        os.remove(cfg_path)
    gates_path = os.path.join(args.output, "feature-gates")
    if g.feature_gates:
        with open(gates_path, "w") as f:
            f.write(g.feature_gates + "\n")
    elif os.path.exists(gates_path):
        os.remove(gates_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
