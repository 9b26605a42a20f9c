#!/usr/bin/env python3
"""The table of a bench/run.sh run, and build/bench/results.json.

    report.py --nodes N --runs RUNS.jsonl --out RESULTS.json [--quick]

RUNS.jsonl holds one JSON object per run (ksched_bench or kschedref
--bench output). With several runs of a workload on one side, the run
with the median average throughput is reported. --quick prints one line
per workload: "NAME  ksched X pods/s  upstream Y pods/s  Rx".
Python 3, stdlib only.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time

# Issue 9's targets (5000 nodes, default profile, 2 cores).
AFFINITY_SPREADING = {
    "SchedulingPodAntiAffinity", "SchedulingPodAffinity", "SchedulingPreferredPodAffinity",
    "SchedulingNodeAffinity", "TopologySpreading", "PreferredTopologySpreading",
    "DefaultTopologySpreading",
}


def target_ratio(name):
    if name == "SchedulingBasic":
        return 10.0
    return 20.0 if name in AFFINITY_SPREADING else 5.0


def machine():
    m = {"nproc": os.cpu_count(), "cpu": "", "memory_gib": 0.0, "kernel": platform.release()}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    m["cpu"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    m["memory_gib"] = round(int(line.split()[1]) / 1024 / 1024, 1)
        with open("/proc/loadavg") as f:
            m["loadavg_at_report"] = f.read().split()[:3]
    except OSError:
        pass
    try:
        m["go"] = subprocess.run(["go", "version"], capture_output=True, text=True).stdout.strip()
    except OSError:
        pass
    return m


def pick(runs):
    ok = [r for r in runs if "throughput" in r and not r.get("error")]
    if not ok:
        return runs[-1] if runs else None
    ok.sort(key=lambda r: r["throughput"]["average"])
    return ok[(len(ok) - 1) // 2]


def per_pod(d):
    """Scheduling attempts per pod attempted in the measured phase."""
    if not d or not d.get("attempted_pods"):
        return None
    return d["attempts"] / d["attempted_pods"]


def fmt(x, nd=0):
    if x is None:
        return "-"
    return f"{x:.{nd}f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, required=True)
    ap.add_argument("--runs", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()

    order, by = [], {}
    with open(a.runs) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            r = json.loads(line)
            w = r.get("workload", "?")
            if w not in by:
                order.append(w)
                by[w] = {"ksched": [], "upstream": []}
            by[w].setdefault(r.get("scheduler", "?"), []).append(r)

    rows = []
    for w in order:
        k, u = pick(by[w]["ksched"]), pick(by[w]["upstream"])
        row = {"workload": w, "ksched": k, "upstream": u, "runs": {s: len(v) for s, v in by[w].items()}}
        kt = k and k.get("throughput", {}).get("average")
        ut = u and u.get("throughput", {}).get("average")
        if kt and ut:
            row["throughput_ratio"] = round(kt / ut, 2)
        if k and u and k.get("peak_rss_mb") and u.get("peak_rss_mb"):
            row["rss_ratio"] = round(u["peak_rss_mb"] / k["peak_rss_mb"], 2)
        if k and u and k.get("cpu_s") and u.get("cpu_s") and k.get("scheduled") and u.get("scheduled"):
            # CPU time per pod: less sensitive than wall time to other work
            # on the machine
            row["cpu_ratio"] = round((u["cpu_s"] / u["scheduled"]) / (k["cpu_s"] / k["scheduled"]), 2)
        if per_pod(k) is not None:
            row["ksched_attempts_per_pod"] = round(per_pod(k), 3)
        if per_pod(u) is not None:
            row["upstream_attempts_per_pod"] = round(per_pod(u), 3)
        if a.nodes == 5000 and "throughput_ratio" in row:
            t = {"throughput_ratio": target_ratio(w)}
            miss = []
            if row["throughput_ratio"] < t["throughput_ratio"]:
                miss.append(f"<{t['throughput_ratio']:.0f}x")
            if row.get("rss_ratio", 0) < 5:
                miss.append("RSS>1/5")
            if w == "SchedulingBasic":
                t["pods_per_s"] = 10000
                t["latency_p99_ms"] = 1.0
                if kt < 10000:
                    miss.append("<10000/s")
                if k["latency_ms"]["p99"] > 1.0:
                    miss.append("p99>1ms")
            row["targets"] = t
            row["missed"] = miss
        rows.append(row)

    res = {
        "nodes": a.nodes,
        "quick": a.quick,
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": machine(),
        "metrics": {
            "throughput": "pods/s: SchedulingThroughput average and percentiles of per-window samples",
            "latency_ms": "scheduling attempt (pop to end of the scheduling cycle) percentiles",
            "peak_rss_mb": "VmHWM of the runner process from the end of loading",
            "cpu_s": "process user+system time over the measured phase",
            "attempts_per_pod": "scheduling attempts in the measured phase / pods attempted in it",
        },
        "workloads": rows,
    }
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                             cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
        res["git"] = rev
    except OSError:
        pass
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")

    if a.quick:
        for r in rows:
            k, u = r["ksched"], r["upstream"]
            kt = fmt(k and k.get("throughput", {}).get("average"))
            ut = fmt(u and u.get("throughput", {}).get("average"))
            ratio = f"{r['throughput_ratio']:.1f}x" if "throughput_ratio" in r else "-"
            att = ""
            if "ksched_attempts_per_pod" in r or "upstream_attempts_per_pod" in r:
                att = (f"  attempts/pod ksched {fmt(r.get('ksched_attempts_per_pod'), 2)}"
                       f" upstream {fmt(r.get('upstream_attempts_per_pod'), 2)}")
            print(f"{r['workload']}  ksched {kt} pods/s  upstream {ut} pods/s  {ratio}{att}")
        return 0

    m = res["machine"]
    print(f"{a.nodes} nodes; {m['nproc']} CPUs ({m['cpu']}), {m['memory_gib']} GiB; "
          f"load average {' '.join(m.get('loadavg_at_report', []))}")
    hdr = ("workload", "side", "avg", "p50", "p90", "p99", "lat50ms", "lat99ms", "RSS MiB", "cpu s", "pods",
           "att/pod")
    lines = [hdr]
    for r in rows:
        for side in ("ksched", "upstream"):
            d = r[side]
            if not d:
                continue
            if d.get("error") and "throughput" not in d:
                lines.append((r["workload"], side, "error: " + d["error"], "", "", "", "", "", "", "", "", ""))
                continue
            t = d["throughput"]
            lines.append((r["workload"] if side == "ksched" else "", side,
                          fmt(t["average"]), fmt(t["p50"]), fmt(t["p90"]), fmt(t["p99"]),
                          fmt(d["latency_ms"]["p50"], 3), fmt(d["latency_ms"]["p99"], 3),
                          fmt(d["peak_rss_mb"], 1), fmt(d.get("cpu_s"), 2),
                          f"{d['scheduled']}/{d['measured_pods']}", fmt(per_pod(d), 2)))
        ratio = []
        if "throughput_ratio" in r:
            ratio.append(f"throughput {r['throughput_ratio']:.1f}x")
        if "cpu_ratio" in r:
            ratio.append(f"cpu/pod {r['cpu_ratio']:.1f}x")
        if "rss_ratio" in r:
            ratio.append(f"RSS 1/{r['rss_ratio']:.1f}")
        if "missed" in r:
            ratio.append("targets met" if not r["missed"] else "MISSED " + " ".join(r["missed"]))
        lines.append(("", "ratio", "  ".join(ratio), "", "", "", "", "", "", "", "", ""))
    widths = [max(len(str(l[i])) for l in lines if not (l[1] == "ratio" and i == 2)) for i in range(len(hdr))]
    for l in lines:
        if l[1] == "ratio":
            print(f"{'':<{widths[0]}}  {'ratio':<{widths[1]}}  {l[2]}")
            continue
        cells = [f"{str(l[0]):<{widths[0]}}", f"{str(l[1]):<{widths[1]}}"]
        cells += [f"{str(x):>{widths[i + 2]}}" for i, x in enumerate(l[2:])]
        print("  ".join(cells))
    print(f"results: {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
