#!/bin/sh
# The metrics ksched writes, read by a real Prometheus text-format parser
# (the Python client's, prometheus_client.parser): `ksched simulate
# --metrics-file` (and --plugin-timing) on the demo cluster must parse, carry upstream's
# families, and count what the simulation did. Skipped (77) only when no
# prometheus_client can be had (Debian's python3-prometheus-client, which
# scripts/deps.sh installs, or pip into build/pydeps).
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
ksched=${KSCHED:-$here/build/release/ksched}
[ -x "$ksched" ] || { echo "FAIL metrics: $ksched not built"; exit 1; }

find_python() {
    for py in /usr/bin/python3 python3; do
        if command -v "$py" >/dev/null 2>&1 && PYTHONPATH="$here/build/pydeps" "$py" -c 'import prometheus_client.parser' 2>/dev/null; then
            echo "$py"
            return 0
        fi
    done
    return 1
}
py=$(find_python) || {
    "$here/scripts/deps.sh" >/dev/null 2>&1
    py=$(find_python)
} || {
    python3 -m pip install --quiet --target "$here/build/pydeps" prometheus-client >/dev/null 2>&1
    py=$(find_python)
} || {
    echo "skip metrics: no prometheus_client for Python (apt-get install python3-prometheus-client)"
    exit 77
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! "$ksched" simulate "$here/examples/clusters/demo" -o json --plugin-timing --metrics-file "$tmp/metrics.txt" >"$tmp/report.json" 2>"$tmp/err"; then
    echo "FAIL metrics: ksched simulate failed: $(head -3 "$tmp/err")"
    exit 1
fi
PYTHONPATH="$here/build/pydeps" "$py" - "$tmp/metrics.txt" "$tmp/report.json" <<'PY'
import json, math, sys
from prometheus_client.parser import text_string_to_metric_families

text = open(sys.argv[1]).read()
report = json.load(open(sys.argv[2]))
fails = []
def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + "metrics: " + name + ("" if cond else ": " + detail))
    if not cond:
        fails.append(name)

try:
    families = {f.name: f for f in text_string_to_metric_families(text)}
except Exception as e:  # the parser refuses the text
    check("parses", False, repr(e))
    sys.exit(1)
check("parses", len(families) > 10, "%d families" % len(families))

def samples(fam, suffix=""):
    f = families.get(fam)
    return [s for s in (f.samples if f else []) if s.name == fam + suffix]

def total(fam, suffix="", **labels):
    return sum(s.value for s in samples(fam, suffix) if all(s.labels.get(k) == v for k, v in labels.items()))

# The families kube-scheduler v1.34 exposes (counters parse without _total).
for name, typ in [("scheduler_schedule_attempts", "counter"),
                  ("scheduler_scheduling_attempt_duration_seconds", "histogram"),
                  ("scheduler_scheduling_algorithm_duration_seconds", "histogram"),
                  ("scheduler_pending_pods", "gauge"),
                  ("scheduler_queue_incoming_pods", "counter"),
                  ("scheduler_pod_scheduling_sli_duration_seconds", "histogram"),
                  ("scheduler_pod_scheduling_attempts", "histogram"),
                  ("scheduler_framework_extension_point_duration_seconds", "histogram"),
                  ("scheduler_plugin_execution_duration_seconds", "histogram"),
                  ("scheduler_plugin_evaluation", "counter"),
                  ("scheduler_preemption_attempts", "counter"),
                  ("scheduler_preemption_victims", "histogram"),
                  ("scheduler_unschedulable_pods", "gauge"),
                  ("scheduler_cache_size", "gauge"),
                  ("scheduler_async_api_call_execution", "counter")]:
    f = families.get(name)
    check("family %s" % name, f is not None and f.type == typ, "missing or %s" % (f and f.type))

# Stability levels in HELP, as component-base writes them.
check("STABLE help", families["scheduler_schedule_attempts"].documentation.startswith("[STABLE] Number of attempts"))
check("ALPHA help", families["scheduler_scheduling_algorithm_duration_seconds"].documentation.startswith("[ALPHA] "))
check("BETA help", families["scheduler_pod_scheduling_sli_duration_seconds"].documentation.startswith("[BETA] "))

# What the simulation did.
items = report["items"]
scheduled = sum(1 for i in items if i["kind"] == "Event" and i.get("reason") == "Scheduled")
pending = sum(1 for i in items if i["kind"] == "Pod" and any(
    c["type"] == "PodScheduled" and c["status"] == "False" for c in i.get("status", {}).get("conditions", [])))
check("attempts{scheduled} = pods bound (%d)" % scheduled,
      total("scheduler_schedule_attempts", "_total", result="scheduled", profile="default-scheduler") == scheduled,
      str(total("scheduler_schedule_attempts", "_total", result="scheduled")))
failed = total("scheduler_schedule_attempts", "_total", result="unschedulable") + \
    total("scheduler_schedule_attempts", "_total", result="error")
check("failed attempts for the pending pods", failed > 0 and scheduled > 0 and pending > 0, str(failed))
check("preemption attempted", total("scheduler_preemption_attempts", "_total") > 0 and
      total("scheduler_preemption_victims", "_count") == 1)
check("attempt durations counted once per attempt",
      total("scheduler_scheduling_attempt_duration_seconds", "_count") ==
      total("scheduler_schedule_attempts", "_total"))
check("pod_scheduling_attempts counts the bound pods",
      total("scheduler_pod_scheduling_attempts", "_count") == scheduled)
check("sli counts the bound pods", total("scheduler_pod_scheduling_sli_duration_seconds", "_count") == scheduled)
check("pending pods at the end (%d)" % pending, total("scheduler_pending_pods") == pending,
      str(total("scheduler_pending_pods")))
check("bindings through the dispatcher",
      total("scheduler_async_api_call_execution", "_total", call_type="pod_binding", result="success") == scheduled)
check("pods entered the queue", total("scheduler_queue_incoming_pods", "_total", queue="active") >= scheduled)
check("extension points timed",
      total("scheduler_framework_extension_point_duration_seconds", "_count", extension_point="Filter") > 0 and
      total("scheduler_framework_extension_point_duration_seconds", "_count", extension_point="Bind") == scheduled)
# --plugin-timing times every call: at least as many as were counted.
check("every Filter call timed",
      total("scheduler_plugin_execution_duration_seconds", "_count", plugin="NodeResourcesFit", extension_point="Filter") >=
      total("scheduler_plugin_evaluation", "_total", plugin="NodeResourcesFit", extension_point="Filter") > 0)
check("cache size", total("scheduler_cache_size", type="nodes") > 0)

# Every histogram: cumulative buckets ending in +Inf == _count.
bad = []
for f in families.values():
    if f.type != "histogram":
        continue
    series = {}
    for s in f.samples:
        key = tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))
        series.setdefault(key, {"b": [], "count": None})
        if s.name.endswith("_bucket"):
            series[key]["b"].append((float(s.labels["le"]), s.value))
        elif s.name.endswith("_count"):
            series[key]["count"] = s.value
    for key, v in series.items():
        b = sorted(v["b"])
        if not b or b[-1][0] != math.inf or b[-1][1] != v["count"] or any(b[i][1] > b[i + 1][1] for i in range(len(b) - 1)):
            bad.append(f.name)
check("histograms well formed", not bad, ", ".join(sorted(set(bad))))
sys.exit(1 if fails else 0)
PY
