#!/bin/sh
# Every fuzz target once over its committed corpus and seeds (regression
# mode), in the gcc ASan/UBSan build: see test/fuzz/run.sh --regress.
cd "$(dirname "$0")/../.." || exit 1
exec test/fuzz/run.sh --regress
