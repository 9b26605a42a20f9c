#!/usr/bin/env python3
"""A flame graph (SVG) of a pprof CPU profile, from `go tool pprof -traces`.

    bench/flamegraph.py PROFILE [--tagfocus thread=kube-io] [--title T] > out.svg

Each trace's frames are stacked root at the bottom, leaf on top; a box's
width is its share of the samples. `go tool pprof` reads the profile (the
one /debug/pprof/profile serves), so this only lays out what it prints.
"""

import argparse
import html
import subprocess
import sys
import zlib


def traces(profile, tagfocus):
    cmd = ["go", "tool", "pprof", "-traces"]
    if tagfocus:
        cmd.append(f"-tagfocus={tagfocus}")
    out = subprocess.run(cmd + [profile], capture_output=True, text=True, check=True).stdout
    stacks = {}
    cur, value = [], 0
    for line in out.splitlines():
        s = line.strip()
        if s.startswith("-----------+"):
            if cur and value:
                key = tuple(reversed(cur))
                stacks[key] = stacks.get(key, 0) + value
            cur, value = [], 0
            continue
        if not s or s.startswith(("File:", "Type:", "Time:", "Duration:", "Showing", "bytes:")):
            continue
        parts = s.split()
        if parts and (parts[0].endswith("ms") or parts[0].endswith("s")) and len(parts) >= 2 and \
                parts[0][0].isdigit():
            # the trace's first line: its value, then the leaf
            v = parts[0]
            value = float(v[:-2]) if v.endswith("ms") else float(v[:-1]) * 1000
            cur = [" ".join(parts[1:])]
        elif cur and not s.startswith(("thread:", "bytes:")) and ":" not in s[:1]:
            cur.append(s)
    if cur and value:
        key = tuple(reversed(cur))
        stacks[key] = stacks.get(key, 0) + value
    return stacks


def color(name):
    h = zlib.crc32(name.encode()) & 0xffff
    return f"rgb({205 + h % 50},{80 + (h >> 4) % 120},{40 + (h >> 8) % 40})"


def render(stacks, title, width=1200, row=16):
    total = sum(stacks.values()) or 1
    tree = {}
    for st, v in stacks.items():
        node = tree
        for f in st:
            e = node.setdefault(f, [0.0, {}])
            e[0] += v
            node = e[1]
    depth = max((len(s) for s in stacks), default=1)
    height = (depth + 3) * row
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="monospace" font-size="11">',
           f'<rect width="100%" height="100%" fill="#fff"/>',
           f'<text x="{width / 2}" y="{row}" text-anchor="middle" font-size="13">{html.escape(title)}</text>']

    def draw(node, x, level):
        for name, (v, kids) in sorted(node.items()):
            w = v / total * (width - 20)
            if w < 0.5:
                x += w
                continue
            y = height - (level + 1) * row
            pct = 100 * v / total
            label = name if len(name) * 6.5 < w else name[:max(0, int(w / 6.5) - 2)] + ".." if w > 20 else ""
            out.append(f'<g><title>{html.escape(name)} ({pct:.1f}%)</title>'
                       f'<rect x="{x + 10:.1f}" y="{y}" width="{w:.1f}" height="{row - 1}" '
                       f'fill="{color(name)}"/>'
                       f'<text x="{x + 12:.1f}" y="{y + row - 4}">{html.escape(label)}</text></g>')
            draw(kids, x, level + 1)
            x += w
    draw(tree, 0.0, 0)
    out.append("</svg>")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("profile")
    ap.add_argument("--tagfocus")
    ap.add_argument("--title", default="")
    a = ap.parse_args()
    st = traces(a.profile, a.tagfocus)
    if not st:
        print("no samples", file=sys.stderr)
        return 1
    print(render(st, a.title or a.profile))
    return 0


if __name__ == "__main__":
    sys.exit(main())
