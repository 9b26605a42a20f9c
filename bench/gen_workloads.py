#!/usr/bin/env python3
"""A cluster of N nodes and W Deployments of R replicas each, for timing
`ksched simulate` on workloads (docs/performance.md, "Workloads"):

    bench/gen_workloads.py OUT_DIR [--nodes 1000] [--workloads 100] [--replicas 100]

Nodes: 16 CPU / 64Gi, in 3 zones; Deployments: 100m-500m CPU, some with a
zone spread constraint, some with a node selector on a pool label."""
import argparse, os

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--nodes", type=int, default=1000)
ap.add_argument("--workloads", type=int, default=100)
ap.add_argument("--replicas", type=int, default=100)
a = ap.parse_args()
os.makedirs(a.out, exist_ok=True)
with open(os.path.join(a.out, "nodes.yaml"), "w") as f:
    for i in range(a.nodes):
        f.write(f"""---
apiVersion: v1
kind: Node
metadata:
  name: node-{i:05d}
  labels: {{kubernetes.io/hostname: node-{i:05d}, topology.kubernetes.io/zone: zone-{i % 3}, pool: p{i % 4}}}
status:
  allocatable: {{cpu: "16", memory: 64Gi, pods: "110"}}
  capacity: {{cpu: "16", memory: 64Gi, pods: "110"}}
""")
with open(os.path.join(a.out, "workloads.yaml"), "w") as f:
    for w in range(a.workloads):
        spread = ""
        if w % 3 == 0:
            spread = f"""      topologySpreadConstraints:
      - {{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{app: app{w}}}}}}}
"""
        sel = f"      nodeSelector: {{pool: p{w % 4}}}\n" if w % 5 == 0 else ""
        f.write(f"""---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: app{w}, namespace: ns{w % 10}}}
spec:
  replicas: {a.replicas}
  selector: {{matchLabels: {{app: app{w}}}}}
  template:
    metadata: {{labels: {{app: app{w}}}}}
    spec:
{spread}{sel}      containers:
      - name: main
        image: registry.example.com/app{w}:1.{w}
        resources: {{requests: {{cpu: {100 + (w % 5) * 100}m, memory: {256 + (w % 4) * 256}Mi}}}}
""")
