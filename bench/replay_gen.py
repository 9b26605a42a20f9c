#!/usr/bin/env python3
"""A synthetic day of a large cluster for `ksched replay` (docs/performance.md,
"Replay"): NODES nodes in 3 zones (8 to 64 CPUs) and a JSON-lines trace of
EVENTS events: pods arriving (Poisson, sized like a service/batch mix, some
spread over zones), finishing after a duration or deleted, nodes cordoned,
uncordoned, drained and added. Seeded: the same arguments, the same files.

    bench/replay_gen.py --nodes 5000 --events 100000 --out /tmp/replay5k
    ksched replay /tmp/replay5k/cluster.json /tmp/replay5k/trace.jsonl --pods /dev/null
"""
import argparse
import heapq
import json
import os
import random


def node(name, cpu, mem_gi, zone):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                  "topology.kubernetes.io/zone": zone}},
            "status": {"allocatable": {"cpu": str(cpu), "memory": f"{mem_gi}Gi", "pods": "110"}}}


def pod(name, cpu_m, mem_mi, spread):
    p = {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": name, "namespace": "default", "labels": {"app": name.rsplit("-", 1)[0]}},
         "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                  "resources": {"requests": {"cpu": f"{cpu_m}m", "memory": f"{mem_mi}Mi"}}}]}}
    if spread:
        p["spec"]["topologySpreadConstraints"] = [{
            "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": {"app": p["metadata"]["labels"]["app"]}}}]
    return p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--events", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--spread", type=float, default=0.2, help="share of pods spread over zones")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    r = random.Random(a.seed)
    os.makedirs(a.out, exist_ok=True)
    zones = ["zone-a", "zone-b", "zone-c"]
    shapes = [(8, 32), (16, 64), (32, 128), (64, 256)]
    nodes = []
    total_cpu = 0
    for i in range(a.nodes):
        cpu, mem = r.choice(shapes)
        total_cpu += cpu
        nodes.append(node(f"node-{i:05d}", cpu, mem, zones[i % 3]))
    with open(os.path.join(a.out, "cluster.json"), "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": nodes}, f)
    # arrivals fill about 70% of the CPUs at steady state: rate * mean
    # duration * mean request = 0.7 * total
    mean_cpu, mean_dur = 1.2, 3600.0
    rate = 0.7 * total_cpu / (mean_cpu * mean_dur)
    apps = [f"app{i}" for i in range(200)]
    t, n, seq = 0.0, 0, 0
    alive = []  # names of pods the trace deletes explicitly
    extra = 0
    later = []  # (time, seq, event): uncordons, 10 minutes after
    with open(os.path.join(a.out, "trace.jsonl"), "w") as f:
        def emit(ev):
            f.write(json.dumps(ev, separators=(",", ":")) + "\n")
        while n < a.events:
            t += r.expovariate(rate)
            while later and later[0][0] <= t and n < a.events:
                _, _, ev = heapq.heappop(later)
                emit(ev)
                n += 1
            x = r.random()
            at = f"{t:.3f}s"
            if x < 0.80 or not alive:
                seq += 1
                name = f"{r.choice(apps)}-{seq}"
                cpu_m = r.choice([100, 250, 500, 1000, 1000, 2000, 4000])
                ev = {"at": at, "create": pod(name, cpu_m, cpu_m * 2, r.random() < a.spread)}
                if r.random() < 0.75:
                    ev["duration"] = f"{int(r.expovariate(1 / mean_dur)) + 1}s"
                else:
                    alive.append(name)
                emit(ev)
            elif x < 0.97:
                emit({"at": at, "delete": "default/" + alive.pop(r.randrange(len(alive)))})
            elif x < 0.985:
                nm = f"node-{r.randrange(a.nodes):05d}"
                emit({"at": at, "node": {"name": nm, "op": "cordon"}})
                heapq.heappush(later, (t + 600, n, {"at": f"{t + 600:.3f}s", "node": {"name": nm, "op": "uncordon"}}))
            elif x < 0.995:
                nm = f"node-{r.randrange(a.nodes):05d}"
                emit({"at": at, "node": {"name": nm, "op": "drain"}})
                heapq.heappush(later, (t + 600, n, {"at": f"{t + 600:.3f}s", "node": {"name": nm, "op": "uncordon"}}))
            else:
                extra += 1
                cpu, mem = r.choice(shapes)
                emit({"at": at, "create": node(f"extra-{extra:04d}", cpu, mem, r.choice(zones))})
            n += 1
    print(f"{a.nodes} nodes, {n} events over {t:.0f} s of trace -> {a.out}")


if __name__ == "__main__":
    main()
