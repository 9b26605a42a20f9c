#!/bin/sh
# No Python file of the test harnesses defines the same top-level name
# twice: a second `class X` or `def f` silently replaces the first, and
# the tests written against the first then fail far from the cause (two
# FakeKubelet classes in test/e2e/suite.py broke e2e preemption once).
# Prints "ok NAME" / "FAIL NAME" lines.
set -u
cd "$(dirname "$0")/../.."
command -v python3 >/dev/null 2>&1 || { echo "python3 not found"; exit 77; }
check='
import ast, sys
bad = 0
for path in sys.argv[1:]:
    seen = {}
    for node in ast.parse(open(path).read(), path).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            if node.name in seen:
                print("%s:%d: %s already defined at line %d" % (path, node.lineno, node.name, seen[node.name]))
                bad += 1
            seen[node.name] = node.lineno
sys.exit(1 if bad else 0)
'
files=$(git ls-files '*.py' 2>/dev/null || find test bench scripts -name '*.py')
if python3 -c "$check" $files; then
    echo "ok   py_names: no top-level name defined twice ($(echo $files | wc -w) files)"
else
    echo "FAIL py_names: a top-level name defined twice (above)"
fi
tmp=$(mktemp -d)
printf 'class A:\n    pass\n\n\nclass A:\n    pass\n' >"$tmp/dup.py"
if python3 -c "$check" "$tmp/dup.py" >/dev/null; then
    echo "FAIL py_names: a class defined twice is not caught"
else
    echo "ok   py_names: a class defined twice is caught"
fi
rm -rf "$tmp"
