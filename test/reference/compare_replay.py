#!/usr/bin/env python3
"""Compare two ksched-replay/v1 outputs step by step.

    compare_replay.py ref.jsonl ksched.jsonl

Exit 0 when equal (prints "equal: N steps, M moves"), 1 at the first
difference (printed as "step N (OP OBJECT): FIELD: reference V1, ksched
V2"), 2 on bad input.  See docs/reference-harness.md, "Event replay".
"""

import json
import sys

FIELDS = ["op", "object", "pod", "result", "node", "unschedulable", "pending", "moves"]


def load(path):
    steps = []
    with open(path) as f:
        lines = [ln for ln in f.read().splitlines() if ln.strip()]
    if not lines or json.loads(lines[0]).get("format") != "ksched-replay/v1":
        raise ValueError(f"{path}: not a ksched-replay/v1 document")
    for ln in lines[1:]:
        steps.append(json.loads(ln))
    return steps


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        ref, ks = load(sys.argv[1]), load(sys.argv[2])
    except (OSError, ValueError) as e:
        print(f"compare_replay: {e}", file=sys.stderr)
        return 2
    moves = 0
    for a, b in zip(ref, ks):
        where = f"step {a.get('step')} ({a.get('op')}{' ' + a['object'] if a.get('object') else ''}" \
                f"{' ' + a['pod'] if a.get('pod') else ''})"
        for f in FIELDS:
            va, vb = a.get(f), b.get(f)
            if f in ("unschedulable", "pending"):
                va, vb = va or [], vb or []
            if va != vb:
                if f == "moves":
                    da = {m[0]: m for m in va}
                    db = {m[0]: m for m in vb}
                    for pod in sorted(set(da) | set(db)):
                        if da.get(pod) != db.get(pod):
                            fa = "->".join(x or "-" for x in da[pod][1:]) if pod in da else "stays"
                            fb = "->".join(x or "-" for x in db[pod][1:]) if pod in db else "stays"
                            print(f"{where}: pod {pod}: reference {fa}, ksched {fb}")
                            return 1
                print(f"{where}: {f}: reference {json.dumps(va)}, ksched {json.dumps(vb)}")
                return 1
        moves += len(a.get("moves", []))
    if len(ref) != len(ks):
        print(f"step count: reference {len(ref)}, ksched {len(ks)}")
        return 1
    print(f"equal: {len(ref)} steps, {moves} moves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
