#!/bin/sh
# `ksched run`'s flags against the configuration file, as kube-scheduler
# takes them (--write-config-to shows the result without a cluster):
# deprecated flags used without --config, ignored with a warning with it;
# leader-election flags override the file either way; bad values refused.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
ksched=${KSCHED:-$here/build/release/ksched}
fail=0
ok() { echo "ok   run_flags: $1"; }
bad() { echo "FAIL run_flags: $1"; fail=1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/cfg.yaml" <<'Y'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: /from/the/file
  qps: 7
  burst: 9
leaderElection:
  leaderElect: true
Y
field() { # $1 file, $2 key under clientConnection/leaderElection (first match)
    grep -m1 "^  $2:" "$1" | sed "s/^  $2: *//; s/^\"//; s/\"$//"
}

# Without --config: the deprecated flags are the configuration.
"$ksched" run --kubeconfig /from/the/flag --kube-api-qps=33 --kube-api-burst 44 \
    --write-config-to "$tmp/a.yaml" 2>"$tmp/a.err"
if [ "$(field "$tmp/a.yaml" kubeconfig)" = /from/the/flag ] && [ "$(field "$tmp/a.yaml" qps)" = 33 ] &&
    [ "$(field "$tmp/a.yaml" burst)" = 44 ] && ! grep -q warning "$tmp/a.err"; then
    ok "deprecated flags without --config"
else
    bad "deprecated flags without --config: $(cat "$tmp/a.yaml" "$tmp/a.err" | head -40)"
fi

# With --config: ignored, each named in a warning; leader election still overridden.
"$ksched" run --config "$tmp/cfg.yaml" --kubeconfig /from/the/flag --kube-api-qps=33 \
    --leader-elect=false --write-config-to "$tmp/b.yaml" 2>"$tmp/b.err"
if [ "$(field "$tmp/b.yaml" kubeconfig)" = /from/the/file ] && [ "$(field "$tmp/b.yaml" qps)" = 7 ] &&
    [ "$(field "$tmp/b.yaml" leaderElect)" = false ] &&
    grep -q "warning: --kubeconfig is ignored because --config is given" "$tmp/b.err" &&
    grep -q "warning: --kube-api-qps is ignored" "$tmp/b.err"; then
    ok "deprecated flags ignored with --config, leader election applied"
else
    bad "with --config: $(cat "$tmp/b.yaml" "$tmp/b.err" | head -40)"
fi

# Bad values: exit 2 with the flag named.
"$ksched" run --kube-api-burst=lots 2>"$tmp/c.err"
st=$?
if [ $st -eq 2 ] && grep -q -- "--kube-api-burst" "$tmp/c.err"; then ok "bad value refused"
else bad "bad value: status $st: $(cat "$tmp/c.err")"; fi
"$ksched" run --leader-elect-lease-duration=5s --leader-elect-renew-deadline=10s \
    --write-config-to "$tmp/d.yaml" 2>"$tmp/d.err"
st=$?
if [ $st -eq 2 ] && grep -q "leaseDuration" "$tmp/d.err"; then ok "invalid leader election refused"
else bad "invalid leader election: status $st: $(cat "$tmp/d.err")"; fi
# The shadow mode takes the same flags by the same rules (one parser).
"$ksched" run --shadow --config "$tmp/cfg.yaml" --kubeconfig /from/the/flag --kube-api-burst=55 \
    --write-config-to "$tmp/e.yaml" 2>"$tmp/e.err"
if [ "$(field "$tmp/e.yaml" kubeconfig)" = /from/the/file ] && [ "$(field "$tmp/e.yaml" burst)" = 9 ] &&
    grep -q "warning: --kubeconfig is ignored because --config is given" "$tmp/e.err" &&
    grep -q "warning: --kube-api-burst is ignored" "$tmp/e.err"; then
    ok "shadow: deprecated flags ignored with --config"
else
    bad "shadow with --config: $(cat "$tmp/e.yaml" "$tmp/e.err" | head -40)"
fi
"$ksched" run --shadow --kubeconfig /from/the/flag --kube-api-qps=21 --write-config-to "$tmp/f.yaml" \
    2>"$tmp/f.err"
if [ "$(field "$tmp/f.yaml" kubeconfig)" = /from/the/flag ] && [ "$(field "$tmp/f.yaml" qps)" = 21 ] &&
    grep -q "percentageOfNodesToScore: 100" "$tmp/f.yaml" && ! grep -q warning "$tmp/f.err"; then
    ok "shadow: deprecated flags without --config, every node evaluated"
else
    bad "shadow without --config: $(cat "$tmp/f.yaml" "$tmp/f.err" | head -40)"
fi
"$ksched" run --shadow --kube-api-burst=lots 2>"$tmp/g.err"
st=$?
if [ $st -eq 2 ] && grep -q -- "--kube-api-burst" "$tmp/g.err"; then ok "shadow: bad value refused"
else bad "shadow bad value: status $st: $(cat "$tmp/g.err")"; fi
exit $fail
