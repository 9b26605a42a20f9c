#!/usr/bin/env python3
"""Browser tests of ksched's HTML reports (docs/report.md).

    report_pages.py --ksched build/release/ksched --chromium /usr/bin/chromium --out build/report-pages

Writes each kind of page from the repository's fixtures, opens it in
headless Chromium (cdp.py) and checks, through the DevTools protocol, what a
person would: no console errors, exceptions or network requests; the node
and pod rows and their values (against ksched's own table and JSON output,
not against constants); sorting, filtering, paging and the links between
pods. A screenshot of each page kind is left in --out. Prints "ok NAME" /
"FAIL NAME: why" lines; exit status 1 when something failed.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
failures = 0


def check(name, cond, why=""):
    global failures
    if cond:
        print("ok   " + name)
    else:
        failures += 1
        print("FAIL " + name + (": " + why if why else ""))
    sys.stdout.flush()
    return cond


def run(args, **kw):
    return subprocess.run(args, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def url(path):
    return "file://" + os.path.abspath(path)


def rows(b, table, attr):
    return b.eval("Array.from(document.querySelectorAll('#%s tbody tr[%s]')).map(function (r) {"
                  " return r.getAttribute('%s'); })" % (table, attr, attr))


def set_input(b, selector, value):
    b.eval("(function () { var e = document.querySelector(%s); e.value = %s;"
           " e.dispatchEvent(new Event(e.tagName === 'SELECT' ? 'change' : 'input')); })()"
           % (json.dumps(selector), json.dumps(value)))


def click(b, selector):
    b.eval("document.querySelector(%s).click()" % json.dumps(selector))


def no_problems(b, name):
    p = b.problems()
    check(name + ": no console errors, exceptions or network requests", not p, "; ".join(p[:5]))


# ---- simulate: the demo cluster ----

def text_table(ksched, cluster):
    """ksched simulate's table output: the pods and the node summary."""
    out = run([ksched, "simulate", cluster]).stdout.decode()
    pods, nodes, head = {}, {}, None
    for line in out.splitlines():
        cols = line.split()
        if not cols:
            head = None
            continue
        if cols[0] in ("NAMESPACE", "NODE"):
            head = cols
            continue
        if head and head[0] == "NAMESPACE" and len(cols) >= 4:
            pods["%s/%s" % (cols[0], cols[1])] = {"node": cols[2], "state": cols[3],
                                                   "msg": line.split(cols[3], 1)[1].strip()}
        elif head and head[0] == "NODE":
            # NODE PODS CPU MEMORY [scalars]: "750m/3900m (19%)" cells
            cells = re.findall(r"(\S+/\S+(?: \(\d+%\))?|-)", line[len(cols[0]):])
            nodes[cols[0]] = dict(zip(head[1:], cells))
    return pods, nodes


def test_simulate_demo(ksched, b, out):
    cluster = os.path.join(ROOT, "examples/clusters/demo")
    page = os.path.join(out, "simulate-demo.html")
    # exactly as docs/report.md says: the page on standard output
    with open(page, "wb") as f:
        f.write(run([ksched, "simulate", cluster, "-o", "html"]).stdout)
    want_pods, want_nodes = text_table(ksched, cluster)
    b.open(url(page))
    check("simulate: page rendered", b.eval("document.body.getAttribute('data-ready')") == "1")
    no_problems(b, "simulate: load")

    # every pod of the text table, with its state and node
    got = b.eval("Array.from(document.querySelectorAll('#pods tbody tr[data-pod]')).map(function (r) {"
                 " return [r.getAttribute('data-pod'), r.getAttribute('data-state'), r.cells[4].textContent]; })")
    check("simulate: one pod row per pending pod and victim", sorted(r[0] for r in got) == sorted(want_pods),
          "%s vs %s" % (sorted(r[0] for r in got), sorted(want_pods)))
    bad = [r for r in got if r[0] in want_pods and (r[1] != want_pods[r[0]]["state"] or
                                                     r[2] != want_pods[r[0]]["node"])]
    check("simulate: pod states and nodes as the table prints them", not bad, str(bad))
    n = len(want_pods)
    states = {}
    for p in want_pods.values():
        states[p["state"]] = states.get(p["state"], 0) + 1
    summary = b.eval("document.getElementById('summary').textContent")
    check("simulate: summary counts", "%d scheduled" % states.get("Scheduled", 0) in summary and
          "%d preempted" % states.get("Preempted", 0) in summary, summary)

    # filtering and the state selector
    set_input(b, "#pod-filter", "giant")
    check("simulate: pod filter", rows(b, "pods", "data-pod") == ["analytics/giant-query"], str(rows(b, "pods", "data-pod")))
    set_input(b, "#pod-filter", "")
    set_input(b, "#pod-state", "Scheduled")
    got = rows(b, "pods", "data-state")
    check("simulate: state filter", len(got) == states["Scheduled"] and set(got) == {"Scheduled"}, str(got))
    set_input(b, "#pod-state", "")
    check("simulate: filters cleared", len(rows(b, "pods", "data-pod")) == n)

    # sorting pods by name, both ways
    click(b, "#pods th[data-col='2']")
    names = b.eval("Array.from(document.querySelectorAll('#pods tbody tr[data-pod]')).map(function (r) { return r.cells[2].textContent; })")
    check("simulate: sort pods by name", names == sorted(names), str(names))
    click(b, "#pods th[data-col='2']")
    names = b.eval("Array.from(document.querySelectorAll('#pods tbody tr[data-pod]')).map(function (r) { return r.cells[2].textContent; })")
    check("simulate: sort pods by name, descending", names == sorted(names, reverse=True), str(names))

    # an unschedulable pod: the reasons as the FailedScheduling message counts them
    idx = b.eval("JSON.parse(document.getElementById('ksched-data').textContent).pods"
                 ".findIndex(function (p) { return p.n === 'giant-query'; })")
    b.eval("location.hash = '#pod-%d'" % idx)
    time.sleep(0.2)
    msg = want_pods["analytics/giant-query"]["msg"]
    hist = b.eval("Array.from(document.querySelectorAll('#pod-detail table.reasons tbody tr')).map(function (r) {"
                  " return r.cells[0].textContent + ' ' + r.cells[1].textContent; })")
    expect = msg.split("nodes are available: ", 1)[1].split(". ", 1)[0].split(", ")
    check("simulate: reasons grouped as kube-scheduler's message", hist == expect, "%s vs %s" % (hist, expect))
    last = "(function () { var t = document.querySelectorAll('#pod-detail table[id^=filter-]'); return t[t.length - 1]; })()"
    frows = b.eval(last + ".querySelectorAll('tbody tr[data-node]').length")
    why = json.loads(run([ksched, "why", "--all", cluster, "--tie-break", "random", "-o", "json"]).stdout)
    wfix = [[c["summary"] for c in f["changes"]] for p in why["pods"] if p["pod"] == "analytics/giant-query" for f in p["fixes"]]
    gfix = b.eval("Array.from(document.querySelectorAll('#pod-detail .why li.fix > strong')).map(function (e) { return e.textContent; })")
    check("simulate: the pod's fixes as ksched why finds them", wfix and gfix == ["; ".join(x) for x in wfix],
          "%s vs %s" % (gfix, wfix))
    # the README's picture (docs/report-demo.png): the pods, then this pod's
    # reasons and fixes, on a freshly opened page
    b.open(url(page))
    b.eval("location.hash = '#pod-%d'" % idx)
    time.sleep(0.2)
    b.eval("window.scrollTo(0, 0)")
    bottom = b.eval("(function () { var w = document.querySelector('#pod-detail .why');"
                    " return w ? w.getBoundingClientRect().bottom + window.scrollY : 1000; })()")
    b.screenshot_clip(os.path.join(out, "report-demo.png"), 0, 0, 1100, min(1400, int(bottom) + 10))
    check("simulate: Filter verdicts for every node", frows == len(want_nodes), "%s rows" % frows)
    rej = b.eval("Array.from(" + last + ".querySelectorAll('tbody tr[data-node]'))"
                 ".filter(function (r) { return r.cells[1].textContent !== 'passed'; }).length")
    check("simulate: every node rejected the unschedulable pod", rej == len(want_nodes), str(rej))

    # a scheduled pod: its node highlighted in the Score table
    for name, p in want_pods.items():
        if p["state"] != "Scheduled":
            continue
        ns, pn = name.split("/")
        idx = b.eval("JSON.parse(document.getElementById('ksched-data').textContent).pods"
                     ".findIndex(function (p) { return p.n === %s; })" % json.dumps(pn))
        b.eval("location.hash = '#pod-%d'" % idx)
        time.sleep(0.1)
        chosen = b.eval("Array.from(document.querySelectorAll('#pod-detail table[id^=score-] tr.chosen'))"
                        ".map(function (r) { return r.getAttribute('data-node'); })")
        top = b.eval("(function () { var t = document.querySelectorAll('#pod-detail table[id^=score-]');"
                     " if (!t.length) return null; t = t[t.length - 1];"
                     " var r = t.querySelector('tbody tr'); return r && r.getAttribute('data-node'); })()")
        if not chosen:
            continue  # a pod scheduled without scoring (one feasible node)
        check("simulate: %s: chosen node highlighted in the Score table" % name, chosen[-1] == p["node"],
              "%s vs %s" % (chosen, p["node"]))
        total = b.eval("(function () { var t = document.querySelectorAll('#pod-detail table[id^=score-]');"
                       " t = t[t.length - 1]; return Array.from(t.querySelectorAll('tbody tr')).map(function (r) {"
                       " return +r.cells[r.cells.length - 1].textContent; }); })()")
        check("simulate: %s: Score table sorted by total" % name, total == sorted(total, reverse=True), str(total))
        check("simulate: %s: the chosen node has the best total" % name,
              b.eval("+document.querySelector('#pod-detail table[id^=score-] tr.chosen').cells[%d].textContent" %
                     (b.eval("document.querySelector('#pod-detail table[id^=score-] tr.chosen').cells.length") - 1))
              == total[0], str(top))
        b.screenshot(os.path.join(out, "simulate-pod.png"))
        break

    # preemption: victim and preemptor link to each other
    victims = [k for k, v in want_pods.items() if v["state"] == "Preempted"]
    if victims:
        v = victims[0]
        vi = b.eval("JSON.parse(document.getElementById('ksched-data').textContent).victims"
                    ".findIndex(function (p) { return p.n === %s; })" % json.dumps(v.split("/")[1]))
        b.eval("location.hash = '#victim-%d'" % vi)
        time.sleep(0.1)
        by = b.eval("Array.from(document.querySelectorAll('#pod-detail a.podlink')).map(function (a) { return a.textContent; })")
        uid = want_pods[v]["msg"].split("Preempted by pod ", 1)[1].split(" ")[0]
        pre = b.eval("JSON.parse(document.getElementById('ksched-data').textContent).pods"
                     ".filter(function (p) { return p.uid === %s; }).map(function (p) {"
                     " return (JSON.parse(document.getElementById('ksched-data').textContent).strings[p.ns]) + '/' + p.n; })"
                     % json.dumps(uid))
        check("simulate: victim links to its preemptor", by == pre and len(pre) == 1, "%s vs %s" % (by, pre))
        click(b, "#pod-detail a.podlink")
        time.sleep(0.2)
        back = b.eval("Array.from(document.querySelectorAll('#pod-detail a.podlink')).map(function (a) { return a.textContent; })")
        check("simulate: preemptor links to its victim", v in back, str(back))
        check("simulate: preemptor detail shown", b.eval("document.getElementById('pod-detail').getAttribute('data-pod')") == pre[0])

    # the cluster: one row per node, allocation as the table prints it
    click(b, "button[data-tab=cluster]")
    got = rows(b, "nodes", "data-node")
    check("simulate: one node row per node", sorted(got) == sorted(want_nodes), str(got))
    heads = b.eval("Array.from(document.querySelectorAll('#nodes thead th')).map(function (t) { return t.textContent; })")
    cells = b.eval("(function () { var out = {}; var heads = Array.from(document.querySelectorAll('#nodes thead th')).map(function (t) { return t.textContent; });"
                   " document.querySelectorAll('#nodes tbody tr[data-node]').forEach(function (r) { var o = {};"
                   " for (var i = 0; i < r.cells.length; i++) o[heads[i]] = r.cells[i].textContent; out[r.getAttribute('data-node')] = o; });"
                   " return out; })()")
    bad = []
    for node, want in want_nodes.items():
        for res, col in (("CPU", "cpu"), ("MEMORY", "memory"), ("PODS", "pods"), ("nvidia.com/gpu", "nvidia.com/gpu")):
            w = want.get(res)
            if w is None or col not in heads:
                continue
            wp = re.search(r"\((\d+)%\)", w)
            gp = re.search(r"\((\d+)%\)", cells[node][col])
            if w == "-":
                if gp:
                    bad.append((node, res, w, cells[node][col]))
            elif res == "PODS":
                u, t = w.split("/")
                if not cells[node][col].startswith("%s/%s " % (u, t)):
                    bad.append((node, res, w, cells[node][col]))
            elif not wp or not gp or wp.group(1) != gp.group(1):
                bad.append((node, res, w, cells[node][col]))
    check("simulate: node allocation as the table prints it", not bad and "nvidia.com/gpu" in heads, str(bad[:4]) + str(heads))

    click(b, "#nodes th[data-col='0']")
    n1 = rows(b, "nodes", "data-node")
    click(b, "#nodes th[data-col='0']")
    n2 = rows(b, "nodes", "data-node")
    zones = b.eval("Array.from(document.querySelectorAll('#nodes tbody tr.zone-head')).length")
    check("simulate: nodes grouped by zone", zones == 2, str(zones))
    b.eval("document.getElementById('node-group').click()")
    click(b, "#nodes th[data-col='0']")
    n3 = rows(b, "nodes", "data-node")
    click(b, "#nodes th[data-col='0']")
    n4 = rows(b, "nodes", "data-node")
    check("simulate: sort nodes by name, both ways", sorted([n3, n4]) == [sorted(want_nodes), sorted(want_nodes, reverse=True)],
          "%s / %s" % (n3, n4))
    cpu = heads.index("cpu")
    click(b, "#nodes th[data-col='%d']" % cpu)
    order = rows(b, "nodes", "data-node")
    pcts = {k: int(re.search(r"\((\d+)%\)", v["CPU"]).group(1)) for k, v in want_nodes.items()}
    check("simulate: sort nodes by cpu allocation", [pcts[x] for x in order] == sorted(pcts.values(), reverse=True),
          str(order))
    set_input(b, "#node-filter", "zone-b")
    fz = rows(b, "nodes", "data-node")
    check("simulate: node filter by zone", fz and all("-b" in x for x in fz) and len(fz) < len(want_nodes), str(fz))
    set_input(b, "#node-filter", "")
    check("simulate: heat map has one square per node",
          b.eval("document.querySelectorAll('#heatmap rect.cell').length") == len(want_nodes))
    b.eval("document.querySelector('#heatmap rect.cell[data-node=\"%s\"]').dispatchEvent(new MouseEvent('click'))" % n1[0])
    check("simulate: heat map square picks its node", rows(b, "nodes", "data-node") == [n1[0]],
          str(rows(b, "nodes", "data-node")))
    set_input(b, "#node-filter", "")
    b.eval("window.scrollTo(0, 0)")
    b.screenshot(os.path.join(out, "simulate-cluster.png"))
    click(b, "button[data-tab=inputs]")
    inputs = b.eval("document.getElementById('inputs').textContent")
    check("simulate: inputs name the files and kube-scheduler v1.34.1",
          cluster in inputs and "kube-scheduler v1.34.1" in inputs, inputs[:200])
    no_problems(b, "simulate: interaction")
    click(b, "button[data-tab=pods]")
    b.eval("location.hash = ''")
    b.eval("window.scrollTo(0, 0)")
    b.screenshot(os.path.join(out, "simulate-demo.png"))


# ---- escaping ----

EVIL = "</script><script>window.__pwned=1</script> it's \"quoted\" & <b>bold</b> \u00fc \u65e5\u672c"


def test_escaping(ksched, b, out):
    d = os.path.join(out, "escape \"<script>\u00fc")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    nodes = os.path.join(d, "nodes <b>\"q\".json")
    objs = {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a", "labels": {"topology.kubernetes.io/zone": "z1"}},
         "spec": {"taints": [{"key": "example.com/x", "value": EVIL, "effect": "NoSchedule"}]},
         "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"}}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "namespace": "default"},
         "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}]}
    with open(nodes, "w") as f:
        json.dump(objs, f)
    config = os.path.join(d, "config.yaml")
    with open(config, "w", encoding="utf-8") as f:
        f.write("# " + EVIL + "\napiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")
    page = os.path.join(out, "escape.html")
    run([ksched, "simulate", nodes, "--config", config, "-o", "html", "--output-file", page])
    raw = open(page, "rb").read().decode("utf-8")
    check("escape: no </script> from the data in the file", raw.count("</script>") == 2, str(raw.count("</script>")))
    b.open(url(page))
    no_problems(b, "escape: load")
    check("escape: injected script did not run", b.eval("window.__pwned === undefined"))
    check("escape: page rendered", b.eval("document.body.getAttribute('data-ready')") == "1")
    b.eval("location.hash = '#pod-0'")
    time.sleep(0.1)
    msg = b.eval("document.querySelector('#pod-detail p.msg').textContent")
    check("escape: the taint in the message is text", EVIL in msg, msg)
    check("escape: no element made from the data", b.eval("document.querySelectorAll('#app b').length") == 0)
    click(b, "button[data-tab=cluster]")
    taint = b.eval("document.querySelector('#nodes tbody tr[data-node] .tag.taint').textContent")
    check("escape: the taint in the node table is text", taint == "example.com/x=" + EVIL + ":NoSchedule", taint)
    click(b, "button[data-tab=inputs]")
    pre = b.eval("document.querySelector('#inputs-section pre').textContent")
    check("escape: the configuration shown as written", pre.startswith("# " + EVIL + "\n"), pre[:120])
    inputs = b.eval("document.getElementById('inputs').textContent")
    check("escape: file names with quotes, markup and non-ASCII shown as text", nodes in inputs, inputs[:300])
    b.screenshot(os.path.join(out, "escape.png"))


# ---- workloads ----

def test_workloads(ksched, b, out):
    d = os.path.join(ROOT, "test/scenarios/workloads")
    args = ["simulate", os.path.join(ROOT, "examples/clusters/demo"), os.path.join(d, "workloads.yaml"),
            os.path.join(d, "storageclass.yaml")]
    text = run([ksched] + args).stdout.decode()
    want, on = {}, False
    for line in text.splitlines():
        if line.startswith("WORKLOAD "):
            on = True
            continue
        if on and not line.strip():
            break
        if on:
            cols = line.split()
            want[cols[0]] = (cols[1], cols[2])
    page = os.path.join(out, "workloads.html")
    run([ksched] + args + ["-o", "html", "--output-file", page])
    b.open(url(page))
    no_problems(b, "workloads: load")
    got = b.eval("Array.from(document.querySelectorAll('#workloads tbody tr[data-workload]')).map(function (r) {"
                 " return [r.getAttribute('data-workload'), r.cells[0].textContent.split(' ')[0], r.cells[3].textContent, r.cells[4].textContent]; })")
    check("workloads: one row per workload line of the table", want and sorted(g[0] for g in got) == sorted(want),
          "%s vs %s" % (got, want))
    bad = [g for g in got if g[0] in want and g[1] != want[g[0]][0]]
    check("workloads: kinds as the table prints them", not bad, str(bad))
    for g in got:
        b.eval("document.querySelector('#workloads tbody tr[data-workload=\"%s\"]').click()" % g[0])
        n = len(rows(b, "pods", "data-pod"))
        check("workloads: %s lists its pods (scheduled + pending)" % g[0], n == int(g[2]) + int(g[3]),
              "%d vs %s + %s" % (n, g[2], g[3]))
        break
    b.screenshot(os.path.join(out, "workloads.png"))


# ---- DRA devices ----

def test_dra(ksched, b, out):
    cluster = os.path.join(ROOT, "examples/clusters/dra-gpu")
    page = os.path.join(out, "dra-gpu.html")
    run([ksched, "simulate", cluster, "-o", "html", "--output-file", page])
    lst = json.loads(run([ksched, "simulate", cluster, "-o", "json"]).stdout)
    want = {}
    for it in lst["items"]:
        if it["kind"] != "ResourceClaim":
            continue
        for r in it.get("status", {}).get("allocation", {}).get("devices", {}).get("results", []):
            want[(r["driver"], r["pool"])] = want.get((r["driver"], r["pool"]), 0) + 1
    b.open(url(page))
    no_problems(b, "dra: load")
    click(b, "button[data-tab=cluster]")
    got = b.eval("(function () { var heads = Array.from(document.querySelectorAll('#nodes thead th')).map(function (t) { return t.textContent; });"
                 " var out = {}; document.querySelectorAll('#nodes tbody tr[data-node]').forEach(function (r) {"
                 " heads.forEach(function (hd, i) { var m = / devices$/.exec(hd); if (!m) return;"
                 " var t = /^(\\d+)\\/(\\d+)/.exec(r.cells[i].textContent);"
                 " if (t) out[hd.replace(/ devices$/, '') + '|' + r.getAttribute('data-node')] = +t[1]; }); }); return out; })()")
    wantd = {"%s|%s" % k: v for k, v in want.items()}
    got = {k: v for k, v in got.items() if v}
    check("dra: devices allocated per node and driver, as the claims' allocations", want and got == wantd,
          "%s vs %s" % (got, wantd))


# ---- why ----

def test_why(ksched, b, out):
    cluster = os.path.join(ROOT, "examples/clusters/demo")
    page = os.path.join(out, "why-demo.html")
    run([ksched, "why", "--all", cluster, "-o", "html", "--output-file", page])
    want = json.loads(run([ksched, "why", "--all", cluster, "-o", "json"]).stdout)
    b.open(url(page))
    no_problems(b, "why: load")
    got = b.eval("Array.from(document.querySelectorAll('.why-pod')).map(function (e) { return e.getAttribute('data-pod'); })")
    reps = [g["representative"] for g in want["groups"]] if want.get("groups") else [p["pod"] for p in want["pods"]]
    check("why: one box per root cause's pod, as -o json", got == reps, "%s vs %s" % (got, reps))
    for p in want["pods"]:
        if p["pod"] not in got:
            continue
        sel = "document.querySelector('.why-pod[data-pod=\"%s\"]')" % p["pod"]
        fixes = b.eval("Array.from(%s.querySelectorAll('li.fix > strong')).map(function (e) { return e.textContent; })" % sel)
        wantf = ["; ".join(c["summary"] for c in f["changes"]) for f in p["fixes"]]
        check("why: %s: fixes as -o json" % p["pod"], fixes == wantf, "%s vs %s" % (fixes, wantf))
        cmds = b.eval("Array.from(%s.querySelectorAll('pre.command')).map(function (e) { return e.textContent; })" % sel)
        wantc = ["$ " + c["command"] for f in p["fixes"] for c in f["changes"] if c.get("command")]
        check("why: %s: kubectl commands as -o json" % p["pod"], cmds == wantc, "%s vs %s" % (cmds, wantc))
        hist = b.eval("Array.from(%s.querySelectorAll('table.reasons tbody tr')).map(function (r) {"
                      " return [r.cells[1].textContent, +r.cells[0].textContent]; })" % sel)
        check("why: %s: reasons as -o json" % p["pod"], hist == [[r["reason"], r["nodes"]] for r in p["reasons"]], str(hist))
    b.screenshot(os.path.join(out, "why-demo.png"))


# ---- compare ----

def test_compare(ksched, b, out):
    d = os.path.join(ROOT, "test/scenarios/compare-most-allocated")
    args = ["simulate", "--compare", os.path.join(d, "most.yaml"), os.path.join(d, "cluster.yaml")]
    page = os.path.join(out, "compare.html")
    run([ksched] + args + ["-o", "html", "--output-file", page])
    want = json.loads(run([ksched] + args + ["-o", "json"]).stdout)
    b.open(url(page))
    no_problems(b, "compare: load")
    sides = b.eval("Array.from(document.querySelectorAll('#compare-sides tbody tr')).slice(0, 6).map(function (r) {"
                   " return [r.cells[0].textContent, +r.cells[1].textContent, +r.cells[2].textContent]; })")
    keys = [("scheduled", "scheduled"), ("unschedulable", "unschedulable"), ("gated", "gated"),
            ("preempted", "preempted"), ("nodes used", "nodesUsed"), ("attempts", "attempts")]
    wants = [[label, want["sides"][0][k], want["sides"][1][k]] for label, k in keys]
    check("compare: aggregates side by side as -o json", sides == wants, "%s vs %s" % (sides, wants))
    moved = b.eval("Array.from(document.querySelectorAll('#moved tbody tr[data-pod]')).map(function (r) {"
                   " return [r.getAttribute('data-pod'), r.cells[1].textContent, r.cells[2].textContent, r.cells[3].textContent]; })")
    wantm = sorted([m["pod"], m["a"]["node"], m["b"]["node"]] for m in want["moved"])
    check("compare: pods placed differently as -o json", sorted(x[:3] for x in moved) == wantm, "%s vs %s" % (moved, wantm))
    for m in want["moved"]:
        row = [x for x in moved if x[0] == m["pod"]]
        w = m["a"]["why"]
        if row and w.get("otherScored"):
            txt = row[0][3]
            ok = ("by %d:" % w["total"]) in txt and all("%s %s%d" % (k, "+" if v > 0 else "", v) in txt for k, v in w["deltas"].items())
            check("compare: %s: per-plugin score deltas" % m["pod"], ok, txt)
    b.screenshot(os.path.join(out, "compare.png"))


# ---- replay ----

def test_replay(ksched, b, out):
    d = os.path.join(ROOT, "test/scenarios")
    args = ["replay", os.path.join(d, "replay-fits-after-leave/cluster.yaml"), os.path.join(d, "replay-configs/trace.yaml"),
            "--config", os.path.join(d, "replay-configs/least.yaml"), "--config", os.path.join(d, "replay-configs/most.yaml"),
            "--tie-break", "name", "--step", "60s"]
    page = os.path.join(out, "replay.html")
    run([ksched] + args + ["-o", "html", "--output-file", page])
    want = json.loads(run([ksched] + args + ["-o", "json"]).stdout)
    b.open(url(page))
    no_problems(b, "replay: load")
    heads = b.eval("Array.from(document.querySelectorAll('#replay-summary thead th')).map(function (t) { return t.textContent; })")
    check("replay: one column per configuration", heads[1:] == [r["config"] for r in want["runs"]], "%s" % heads)
    got = b.eval("(function () { var o = {}; document.querySelectorAll('#replay-summary tbody tr').forEach(function (r) {"
                 " o[r.cells[0].textContent] = Array.from(r.cells).slice(1).map(function (c) { return c.textContent; }); }); return o; })()")
    for label, key in (("pods arrived", "arrived"), ("scheduled", "scheduled"), ("never scheduled", "neverScheduled"),
                       ("scheduling attempts", "attempts"), ("evicted", "evicted")):
        check("replay: summary %s as -o json" % label, got.get(label) == [str(r["summary"][key]) for r in want["runs"]],
              "%s vs %s" % (got.get(label), [r["summary"][key] for r in want["runs"]]))
    p90 = b.eval("JSON.parse(document.getElementById('ksched-data').textContent).replay.runs.map(function (r) { return r.summary.p90; })")
    check("replay: pending-time p90 as -o json", p90 == [r["summary"]["pendingSeconds"]["p90"] for r in want["runs"]], str(p90))
    lines = b.eval("Array.from(document.querySelectorAll('#chart-pending polyline')).map(function (p) { return p.getAttribute('points').split(' ').length; })")
    check("replay: pending pods charted per configuration, every sample",
          lines == [len(r["series"]) for r in want["runs"]], "%s vs %s" % (lines, [len(r["series"]) for r in want["runs"]]))
    ys = b.eval("JSON.parse(document.getElementById('ksched-data').textContent).replay.runs.map(function (r) { return r.series.pending; })")
    check("replay: pending series as -o json", ys == [[s["pending"] for s in r["series"]] for r in want["runs"]], str(ys))
    worst = b.eval("JSON.parse(document.getElementById('ksched-data').textContent).replay.runs.map(function (r) {"
                   " return Math.max.apply(null, r.series.wait[2].filter(function (x) { return x !== null; })); })")
    check("replay: the longest wait in the pending-time percentiles is the summary's max",
          worst == [r["summary"]["pendingSeconds"]["max"] for r in want["runs"]], str(worst))
    lines = b.eval("Array.from(document.querySelectorAll('svg.chart')).filter(function (c) { return /pending-time/.test(c.id); })"
                   ".map(function (c) { return c.querySelectorAll('polyline').length; })")
    check("replay: pending-time p50/p90/p99 charted per configuration", lines == [3 * len(want["runs"])], str(lines))
    charts = b.eval("document.querySelectorAll('svg.chart').length")
    check("replay: allocation, pending, running, evictions and arrivals charted", charts >= 6, str(charts))
    b.screenshot(os.path.join(out, "replay.png"))

    # --compare: the decisions that differ, as -o json's decisionDiff
    args = [x for x in args if x != os.path.join(d, "replay-configs/most.yaml")]
    args[args.index("--config", args.index("--config") + 1)] = "--compare"
    args.insert(args.index("--compare") + 1, os.path.join(d, "replay-configs/most.yaml"))
    page = os.path.join(out, "replay-compare.html")
    run([ksched] + args + ["-o", "html", "--output-file", page])
    want = json.loads(run([ksched] + args + ["-o", "json"]).stdout)["decisionDiff"]
    b.open(url(page))
    no_problems(b, "replay --compare: load")
    click(b, "button[data-tab=compare]")
    moved = b.eval("Array.from(document.querySelectorAll('#moved tbody tr[data-pod]')).map(function (r) {"
                   " return [r.getAttribute('data-pod'), r.cells[1].textContent, r.cells[2].textContent]; })")
    wantm = sorted([m["pod"], m["a"]["node"], m["b"]["node"]] for m in want["moved"])
    check("replay --compare: decisions that differ as -o json", want["moved"] and sorted(moved) == wantm,
          "%s vs %s" % (moved, wantm))


def test_replay_frag(ksched, b, out):
    """--gpu-frag's series on the page: frag-cluster.yaml worked by hand
    (test/fixtures/gpu-study/README.md): 250 milli-GPUs, 50 %."""
    fx = os.path.join(ROOT, "test/fixtures/gpu-study")
    page = os.path.join(out, "replay-gpu-frag.html")
    run([ksched, "replay", os.path.join(fx, "frag-cluster.yaml"), os.path.join(fx, "frag-trace.yaml"), "--gpu-frag",
         "--step", "1m", "-o", "html", "--output-file", page])
    b.open(url(page))
    no_problems(b, "replay --gpu-frag: load")
    first = b.eval("(function () { var R = JSON.parse(document.getElementById('ksched-data').textContent).replay;"
                   " var o = {}; R.extra.forEach(function (n, i) { o[n] = R.runs[0].series.extra[i][0]; }); return o; })()")
    check("replay --gpu-frag: the fragmentation series, by hand", first == {"gpu_frag_milli": 250, "gpu_frag_pct": 50}, str(first))
    check("replay --gpu-frag: charted", b.eval("!!document.getElementById('chart-gpu_frag_milli') && "
                                              "!!document.getElementById('chart-gpu_frag_pct')"))
    b.screenshot(os.path.join(out, "replay-gpu-frag.png"))


# ---- capacity ----

def test_capacity(ksched, b, out):
    pod = os.path.join(ROOT, "test/scenarios/capacity/pod.yaml")
    cluster = os.path.join(ROOT, "examples/clusters/demo")
    page = os.path.join(out, "capacity-demo.html")
    run([ksched, "capacity", pod, cluster, "-o", "html", "--output-file", page])
    want = json.loads(run([ksched, "capacity", pod, cluster, "-o", "json"]).stdout)
    b.open(url(page))
    no_problems(b, "capacity: load")
    got = b.eval("document.getElementById('replicas').textContent")
    check("capacity: replicas as -o json", got == str(want["replicas"]), "%s vs %s" % (got, want["replicas"]))
    per = b.eval("Array.from(document.querySelectorAll('#replicas-per-node tbody tr')).map(function (r) {"
                 " return [r.cells[0].textContent, +r.cells[1].textContent]; })")
    check("capacity: replicas per node as -o json", dict(per) == want["nodes"], "%s vs %s" % (per, want["nodes"]))
    if "failure" in want:
        hist = b.eval("Array.from(document.querySelectorAll('#capacity table.reasons tbody tr')).map(function (r) {"
                      " return [r.cells[1].textContent, +r.cells[0].textContent]; })")
        check("capacity: why the next replica does not fit", dict(hist) == want["failure"]["reasons"],
              "%s vs %s" % (hist, want["failure"]["reasons"]))
    b.screenshot(os.path.join(out, "capacity-demo.png"))
    click(b, "button[data-tab=cluster]")
    col = b.eval("Array.from(document.querySelectorAll('#nodes thead th')).map(function (t) { return t.textContent; }).indexOf('Replicas')")
    got = b.eval("(function () { var o = {}; document.querySelectorAll('#nodes tbody tr[data-node]').forEach(function (r) {"
                 " if (r.cells[%d].textContent) o[r.getAttribute('data-node')] = +r.cells[%d].textContent; }); return o; })()" % (col, col))
    check("capacity: replicas column in the node table", got == want["nodes"], "%s vs %s" % (got, want["nodes"]))
    no_problems(b, "capacity: interaction")


# ---- size: large clusters ----

def big_cluster(path, nodes, pods):
    """nodes in 3 zones (1 in 10 with 8 GPUs and a taint), pods of a few
    shapes; some ask for more than any node has."""
    items = []
    for i in range(nodes):
        gpu = i % 10 == 0
        n = {"apiVersion": "v1", "kind": "Node",
             "metadata": {"name": "node-%05d" % i, "labels": {
                 "topology.kubernetes.io/zone": "zone-%s" % "abc"[i % 3],
                 "node.kubernetes.io/instance-type": "gpu.8x" if gpu else "m5.2xlarge"}},
             "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]} if gpu else {},
             "status": {"allocatable": dict({"cpu": "32", "memory": "128Gi", "pods": "110"},
                                            **({"nvidia.com/gpu": "8"} if gpu else {}))}}
        items.append(n)
    shapes = [("web", "500m", "1Gi", None), ("api", "2", "4Gi", None), ("batch", "4", "16Gi", None),
              ("train", "8", "32Gi", "2"), ("huge", "64", "1Gi", None)]
    for j in range(pods):
        name, cpu, mem, gpu = shapes[j % len(shapes)] if j % 50 else shapes[4]
        req = {"cpu": cpu, "memory": mem}
        spec = {"containers": [{"name": "c", "image": "registry.example/%s:1" % name,
                                "resources": {"requests": dict(req, **({"nvidia.com/gpu": gpu} if gpu else {}))}}]}
        if gpu:
            spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists"}]
        items.append({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": "%s-%05d" % (name, j), "namespace": "load"}, "spec": spec})
    with open(path, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f)


def test_size(ksched, b, out, nodes, pods, label):
    cluster = os.path.join(out, "%s.json" % label)
    big_cluster(cluster, nodes, pods)
    page = os.path.join(out, "%s.html" % label)
    t0 = time.monotonic()
    r = run([ksched, "simulate", cluster, "-o", "html", "--output-file", page, "-v=1"])
    wall = time.monotonic() - t0
    size = os.path.getsize(page)
    sim = re.search(rb"([\d.]+) s wall", r.stderr)
    print("# %s: %d nodes, %d pods: page %.2f MB; ksched %.2f s in all (simulation %s s)"
          % (label, nodes, pods, size / 1e6, wall, sim.group(1).decode() if sim else "?"))
    t0 = time.monotonic()
    b.open(url(page))
    load = time.monotonic() - t0
    print("# %s: page loaded and drawn in %.2f s" % (label, load))
    no_problems(b, "%s: load" % label)
    check("%s: node table paged" % label, len(rows(b, "pods", "data-pod")) == 100 and
          b.eval("!!document.querySelector('#pods-section .pager button.next')"))
    t0 = time.monotonic()
    click(b, "#pods-section .pager button.next")
    second = rows(b, "pods", "data-pod")
    check("%s: next page of pods" % label, len(second) == 100)
    set_input(b, "#pod-filter", "huge-")
    got = rows(b, "pods", "data-pod")
    check("%s: pod filter over every page" % label, got and all("/huge-" in x for x in got), str(got[:3]))
    b.eval("location.hash = '#pod-0'")
    time.sleep(0.2)
    check("%s: pod detail" % label, b.eval("!!document.getElementById('pod-detail')"))
    click(b, "button[data-tab=cluster]")
    check("%s: heat map has one square per node" % label,
          b.eval("document.querySelectorAll('#heatmap rect.cell').length") == nodes)
    click(b, "#nodes th[data-col='2']")
    got = rows(b, "nodes", "data-node")
    check("%s: node table paged and sortable" % label, len(got) == 100)
    print("# %s: paging, filtering, a pod's detail, sorting %d nodes: %.2f s" % (label, nodes, time.monotonic() - t0))
    no_problems(b, "%s: interaction" % label)
    b.eval("window.scrollTo(0, 0)")
    b.screenshot(os.path.join(out, "%s-cluster.png" % label))
    os.unlink(cluster)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ksched", required=True)
    ap.add_argument("--chromium", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--large", action="store_true", help="also 1,000 nodes / 5,000 pods and 5,000 nodes")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    ksched = os.path.abspath(a.ksched)
    b = cdp.Browser(a.chromium)
    try:
        for t in (test_simulate_demo, test_workloads, test_escaping, test_capacity, test_dra, test_why, test_compare, test_replay, test_replay_frag):
            try:
                t(ksched, b, a.out)
            except Exception as e:  # a broken page must fail, not stop the others
                check(t.__name__, False, "%s: %s" % (type(e).__name__, e))
        sizes = [(300, 1000, "size-300")]
        if a.large:
            sizes += [(1000, 5000, "size-1000x5000"), (5000, 5000, "size-5000")]
        for nodes, pods, label in sizes:
            try:
                test_size(ksched, b, a.out, nodes, pods, label)
            except Exception as e:
                check(label, False, "%s: %s" % (type(e).__name__, e))
    finally:
        b.close()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
