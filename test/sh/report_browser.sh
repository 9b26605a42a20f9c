#!/bin/sh
# The HTML reports in a real browser: test/browser/report_pages.py writes
# each kind of page from the fixtures, opens it in headless Chromium and
# checks it through the DevTools protocol (docs/report.md, "Tests").
# Chromium is Debian's package, installed here when missing; where it
# cannot be installed the suite is skipped (exit 77), never passed.
# Screenshots: build/report-pages/*.png. REPORT_LARGE=1 adds the
# 1,000-node / 5,000-pod and 5,000-node pages (their size and times are
# printed as "# ..." lines, not asserted).
#   test/sh/report_browser.sh     (KSCHED: the binary, default build/release/ksched)
set -u
cd "$(dirname "$0")/../.."
ksched=${KSCHED:-build/release/ksched}
if [ ! -x "$ksched" ]; then
    echo "FAIL report_browser: $ksched is not built"
    exit 1
fi
find_chromium() { command -v chromium || command -v chromium-browser || true; }
chromium=$(find_chromium)
if [ -z "$chromium" ] && command -v apt-get >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo -n"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get install -y -qq chromium >/dev/null 2>&1 ||
        { $SUDO apt-get update -qq >/dev/null 2>&1 && $SUDO apt-get install -y -qq chromium >/dev/null 2>&1; }
    chromium=$(find_chromium)
fi
if [ -z "$chromium" ]; then
    echo "chromium is not installed and could not be installed (apt-get install chromium)"
    exit 77
fi
exec python3 test/browser/report_pages.py --ksched "$ksched" --chromium "$chromium" --out build/report-pages \
    ${REPORT_LARGE:+--large}
