#!/usr/bin/env python3
"""Compare two ksched-trace/v1 documents.

    compare.py REF.json KSCHED.json
    compare.py --check TRACE.json


Exit 0 when they are equal; otherwise print the first difference as a minimal
reproduction (pass, pod, node, plugin, field, both values) and exit 1.
Exit 2 when a file cannot be read or is not a ksched-trace/v1 document.

Equality is on the meaning of the format (docs/reference-harness.md): absent
optional fields equal their empty value ("" / [] / null), key order and
whitespace do not matter, list order does (every list in the format has a
defined order).
"""

import json
import sys

FORMAT = "ksched-trace/v1"

# optional fields and the value their absence stands for
ATTEMPT_DEFAULTS = {"nominated": "", "preenqueue": None, "prefilter": None, "filter": [], "scores": [],
                    "node": "", "message": "", "postfilter": None}
STATUS_DEFAULTS = {"plugin": "", "reasons": []}
FILTER_DEFAULTS = {"plugin": "", "reasons": []}
# fields only ksched's trace has: why a pod was retried
KSCHED_ONLY = {"requeuedBy"}
POSTFILTER_DEFAULTS = {"plugin": "", "nominatedNode": "", "victims": [], "message": ""}


def load(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"compare: {path}: {e}", file=sys.stderr)
        sys.exit(2)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("attempts"), list):
        print(f"compare: {path}: not a {FORMAT} document", file=sys.stderr)
        sys.exit(2)
    return doc


def get(d, key, defaults):
    if d is None:
        return None
    v = d.get(key, defaults.get(key))
    return defaults.get(key) if v is None and key in defaults else v


class Diff(Exception):
    def __init__(self, where, field, ref, got):
        super().__init__(field)
        self.where, self.field, self.ref, self.got = where, field, ref, got


def fmt(v):
    return json.dumps(v, ensure_ascii=False)


def cmp_value(where, field, a, b):
    if a != b:
        raise Diff(where, field, a, b)


def cmp_status(where, field, a, b, defaults):
    if (a is None) != (b is None):
        raise Diff(where, field, a, b)
    if a is None:
        return
    keys = sorted(set(a) | set(b) | set(defaults))
    for k in keys:
        cmp_value(where, f"{field}.{k}", get(a, k, defaults), get(b, k, defaults))


# NodeResourcesFit checks cpu, memory and ephemeral-storage in that order,
# then the pod's scalar resources in Go map order, which varies from run to
# run (docs/differences.md): the scalar reasons compare as a sorted list.
FIT_FIXED_REASONS = ("Too many pods", "Insufficient cpu", "Insufficient memory",
                     "Insufficient ephemeral-storage")


def canon_reasons(plugin, reasons):
    if plugin != "NodeResourcesFit" or not isinstance(reasons, list):
        return reasons
    fixed = [r for r in reasons if r in FIT_FIXED_REASONS]
    rest = sorted(r for r in reasons if r not in FIT_FIXED_REASONS)
    return fixed + rest


def cmp_attempt(i, a, b):
    where = {"attempt": i, "pass": a.get("pass"), "pod": a.get("pod")}
    cmp_value(where, "pass", a.get("pass"), b.get("pass"))
    cmp_value(where, "pod", a.get("pod"), b.get("pod"))
    cmp_value(where, "nominated", get(a, "nominated", ATTEMPT_DEFAULTS), get(b, "nominated", ATTEMPT_DEFAULTS))
    cmp_status(where, "preenqueue", a.get("preenqueue"), b.get("preenqueue"), STATUS_DEFAULTS)
    cmp_status(where, "prefilter", a.get("prefilter"), b.get("prefilter"), STATUS_DEFAULTS)

    fa, fb = get(a, "filter", ATTEMPT_DEFAULTS), get(b, "filter", ATTEMPT_DEFAULTS)
    na = [e.get("node") for e in fa]
    nb = [e.get("node") for e in fb]
    if na != nb:
        missing = [n for n in na if n not in nb]
        extra = [n for n in nb if n not in na]
        raise Diff(where, "filter[].node (missing %s, extra %s)" % (missing, extra), na, nb)
    for ea, eb in zip(fa, fb):
        w = dict(where, node=ea.get("node"))
        for k in ("code", "plugin", "reasons"):
            va, vb = get(ea, k, FILTER_DEFAULTS), get(eb, k, FILTER_DEFAULTS)
            if k == "reasons":
                va = canon_reasons(get(ea, "plugin", FILTER_DEFAULTS), va)
                vb = canon_reasons(get(eb, "plugin", FILTER_DEFAULTS), vb)
            if va != vb:
                w["plugin"] = get(ea, "plugin", FILTER_DEFAULTS) or get(eb, "plugin", FILTER_DEFAULTS)
                raise Diff(w, f"filter.{k}", va, vb)

    sa, sb = get(a, "scores", ATTEMPT_DEFAULTS), get(b, "scores", ATTEMPT_DEFAULTS)
    na = [e.get("node") for e in sa]
    nb = [e.get("node") for e in sb]
    if na != nb:
        raise Diff(where, "scores[].node", na, nb)
    for ea, eb in zip(sa, sb):
        w = dict(where, node=ea.get("node"))
        pa = [p.get("plugin") for p in ea.get("plugins") or []]
        pb = [p.get("plugin") for p in eb.get("plugins") or []]
        if pa != pb:
            raise Diff(w, "scores.plugins[].plugin", pa, pb)
        for xa, xb in zip(ea.get("plugins") or [], eb.get("plugins") or []):
            for k in ("raw", "normalized", "weighted"):
                if xa.get(k) != xb.get(k):
                    raise Diff(dict(w, plugin=xa.get("plugin")), f"scores.{k}", xa.get(k), xb.get(k))
        cmp_value(w, "scores.total", ea.get("total"), eb.get("total"))

    cmp_value(where, "result", a.get("result"), b.get("result"))
    cmp_value(where, "node", get(a, "node", ATTEMPT_DEFAULTS), get(b, "node", ATTEMPT_DEFAULTS))
    cmp_value(where, "message", get(a, "message", ATTEMPT_DEFAULTS), get(b, "message", ATTEMPT_DEFAULTS))
    cmp_status(where, "postfilter", a.get("postfilter"), b.get("postfilter"), POSTFILTER_DEFAULTS)
    # any other field (future versions) must match exactly, except what
    # only ksched reports (docs/reference-harness.md)
    for k in sorted((set(a) | set(b)) - set(ATTEMPT_DEFAULTS) - {"pass", "pod", "result"} - KSCHED_ONLY):
        cmp_value(where, k, a.get(k), b.get(k))


def compare(ref, got):
    """Returns None when equal, else a Diff."""
    ra, ga = ref["attempts"], got["attempts"]
    try:
        for i, (a, b) in enumerate(zip(ra, ga)):
            cmp_attempt(i, a, b)
        if len(ra) != len(ga):
            i = min(len(ra), len(ga))
            extra = (ra if len(ra) > len(ga) else ga)[i]
            where = {"attempt": i, "pass": extra.get("pass"), "pod": extra.get("pod")}
            def brief(x):
                return {k: x.get(k) for k in ("pass", "pod", "result")}
            raise Diff(where, "attempts (count %d vs %d)" % (len(ra), len(ga)),
                       brief(ra[i]) if i < len(ra) else None, brief(ga[i]) if i < len(ga) else None)
    except Diff as d:
        return d
    return None


def describe(d):
    w = d.where
    parts = [f"pass {w.get('pass')}", f"pod {w.get('pod')}"]
    if w.get("node"):
        parts.append(f"node {w['node']}")
    if w.get("plugin"):
        parts.append(f"plugin {w['plugin']}")
    parts.append(f"field {d.field}")
    return ", ".join(parts) + f": reference {fmt(d.ref)}, ksched {fmt(d.got)}"


CODES = {"Success", "Error", "Unschedulable", "UnschedulableAndUnresolvable", "Wait", "Skip", "Pending"}
RESULTS = {"Scheduled", "Unschedulable", "SchedulingGated", "Error"}


def check(doc):
    """Validates the structure of a trace; returns a list of problems."""
    errs = []

    def err(i, msg):
        errs.append(f"attempt {i}: {msg}")

    for i, a in enumerate(doc["attempts"]):
        if not isinstance(a, dict):
            err(i, "not an object")
            continue
        if not isinstance(a.get("pass"), int) or a["pass"] < 1:
            err(i, "bad pass")
        if not isinstance(a.get("pod"), str) or a["pod"].count("/") != 1:
            err(i, "bad pod")
        res = a.get("result")
        if res not in RESULTS:
            err(i, f"bad result {res!r}")
        if res == "Scheduled" and not a.get("node"):
            err(i, "Scheduled without node")
        if res in ("Unschedulable", "Error", "SchedulingGated") and not a.get("message"):
            err(i, f"{res} without message")
        for k in ("preenqueue", "prefilter"):
            st = a.get(k)
            if st is not None and st.get("code") not in CODES:
                err(i, f"bad {k}.code")
        nodes = []
        for e in a.get("filter") or []:
            nodes.append(e.get("node"))
            if e.get("code") not in CODES:
                err(i, f"bad filter code {e.get('code')!r}")
            if e.get("code") != "Success" and not e.get("reasons"):
                err(i, f"filter entry for {e.get('node')} has no reasons")
        if nodes != sorted(nodes) or len(set(nodes)) != len(nodes):
            err(i, "filter not sorted by node name")
        snodes = []
        for e in a.get("scores") or []:
            snodes.append(e.get("node"))
            total = 0
            for p in e.get("plugins") or []:
                if not all(isinstance(p.get(k), int) for k in ("raw", "normalized", "weighted")):
                    err(i, "bad score values")
                    continue
                if not 0 <= p["normalized"] <= 100:
                    err(i, f"normalized score out of range on {e.get('node')}")
                total += p["weighted"]
            if e.get("plugins") and total != e.get("total"):
                err(i, f"scores on {e.get('node')} do not add up")
        if snodes != sorted(snodes):
            err(i, "scores not sorted by node name")
        if res == "Scheduled" and snodes:
            best = max(e["total"] for e in a["scores"])
            want = min(e["node"] for e in a["scores"] if e["total"] == best)
            if a.get("node") != want:
                err(i, f"node {a.get('node')} is not the best-scored {want}")
        pf = a.get("postfilter")
        if pf is not None and pf.get("code") not in CODES:
            err(i, "bad postfilter.code")
    return errs


def main(argv):
    if len(argv) == 3 and argv[1] == "--check":
        errs = check(load(argv[2]))
        for e in errs[:20]:
            print(e)
        return 1 if errs else 0
    if len(argv) != 3:
        print("usage: compare.py REF.json KSCHED.json | compare.py --check TRACE.json", file=sys.stderr)
        return 2
    d = compare(load(argv[1]), load(argv[2]))
    if d is None:
        return 0
    print(describe(d))
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
