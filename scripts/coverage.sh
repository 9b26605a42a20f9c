#!/bin/sh
# make coverage: line and branch coverage of src/ by the unit and scenario
# tests, per folder of src/ and in total (docs/building.md, "Coverage").
# Expects the coverage flavour built (make MODE=coverage build test-bins);
# clears its counters, runs the unit binaries and the scenarios through
# test/run.sh, then summarises with gcovr. Writes build/coverage/summary.json
# (gcovr's per-file summary) and build/coverage/folders.txt (the table).
#   scripts/coverage.sh [--report-only]   --report-only: keep the counters
#                                         of the last run, only summarise
set -u
cd "$(dirname "$0")/.."
B=build/coverage
if [ "${1:-}" != --report-only ]; then
    find "$B" -name '*.gcda' -delete 2>/dev/null
    KS_TEST_MODES=coverage KS_TEST_SCENARIO_MODES=coverage KS_TEST_SUITES="unit scenarios" \
        test/run.sh >"$B/tests.log" 2>&1
    echo "coverage: tests: $(tail -1 "$B/tests.log") (log: $B/tests.log)"
fi
# Only the library's sources count: tests, generated files and examples do
# not. Branches on lines with no code of their own (compiler-made) are left
# out, as gcovr's --exclude-unreachable-branches does.
gcovr -r . --object-directory "$B/obj" --filter 'src/' --exclude-unreachable-branches \
    --gcov-ignore-parse-errors -j 2 --json-summary-pretty -o "$B/summary.json" "$B/obj" || exit 1
python3 - "$B/summary.json" <<'PY' | tee "$B/folders.txt"
import json, sys
files = json.load(open(sys.argv[1]))["files"]
rows = {}
for f in files:
    parts = f["filename"].split("/")
    folder = "/".join(parts[:2]) if len(parts) > 2 else parts[0]
    r = rows.setdefault(folder, [0, 0, 0, 0])
    r[0] += f["line_covered"]; r[1] += f["line_total"]
    r[2] += f["branch_covered"]; r[3] += f["branch_total"]
pct = lambda a, b: 100.0 * a / b if b else 100.0
print("%-16s %15s %8s %17s %8s" % ("folder", "lines", "%", "branches", "%"))
total = [0, 0, 0, 0]
for k in sorted(rows):
    r = rows[k]
    total = [a + b for a, b in zip(total, r)]
    mark = "  < 80 % of lines" if pct(r[0], r[1]) < 80 else ""
    print("%-16s %7d/%-7d %7.1f %8d/%-8d %7.1f%s" % (k, r[0], r[1], pct(r[0], r[1]), r[2], r[3], pct(r[2], r[3]), mark))
print("%-16s %7d/%-7d %7.1f %8d/%-8d %7.1f" % ("total", total[0], total[1], pct(total[0], total[1]),
                                                total[2], total[3], pct(total[2], total[3])))
PY
