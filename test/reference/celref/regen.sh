#!/usr/bin/env bash
# Regenerate test/fixtures/cel/cases.jsonl: every case of cases.py with
# upstream's answer (celref: k8s.io/dynamic-resource-allocation/cel v0.34.1).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
bin=$(mktemp)
trap 'rm -f "$bin"' EXIT
(cd "$here/.." && GOFLAGS=-mod=mod go build -o "$bin" ./celref)
python3 "$here/cases.py" > "$bin.in"
"$bin" < "$bin.in" > "$bin.out"
python3 - "$bin.in" "$bin.out" > "$root/test/fixtures/cel/cases.jsonl" <<'PY'
import json, sys
ins = [json.loads(l) for l in open(sys.argv[1])]
outs = [json.loads(l) for l in open(sys.argv[2])]
assert len(ins) == len(outs)
for i, o in zip(ins, outs):
    o.pop("cost", None)
    i["want"] = o
    print(json.dumps(i, ensure_ascii=False))
PY
rm -f "$bin.in" "$bin.out"
echo "wrote $(wc -l < "$root/test/fixtures/cel/cases.jsonl") cases"
