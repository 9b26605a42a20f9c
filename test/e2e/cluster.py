#!/usr/bin/env python3
"""A throwaway control plane on loopback: etcd and kube-apiserver v1.34.1.

Everything lives in one temporary directory: self-signed certificates, a
static token file (an admin, the `ksched` service account's identity, and
kube-scheduler's), an audit policy that records pods/binding, the etcd data,
the logs and the kubeconfigs. Child processes die with this process
(PR_SET_PDEATHSIG) and after a bounded lifetime, so nothing outlives a test.

Used as a library by suite.py and as a command by env.sh:
    cluster.py [--lifetime SECONDS] [--keep] [-- COMMAND...]
starts the cluster, prints its environment, runs COMMAND with KUBECONFIG
set (or waits until the lifetime ends or it is interrupted), then stops.
"""

import ctypes
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.join(ROOT, "build", "e2e", "bin")

ADMIN_TOKEN = "e2e-admin-token"
KSCHED_TOKEN = "e2e-ksched-token"
KUBE_SCHEDULER_TOKEN = "e2e-kube-scheduler-token"
# ksched authenticates as the service account deploy/ creates, so the
# bindings of deploy/ are exactly what it may do.
KSCHED_USER = "system:serviceaccount:kube-system:ksched"

# Bindings with their body (the target node); pod LISTs (a relist shows
# as one) and DELETEs (evictions) without.
AUDIT_POLICY = """apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Request
  resources:
  - group: ""
    resources: ["pods/binding"]
- level: Metadata
  verbs: ["list", "delete"]
  resources:
  - group: ""
    resources: ["pods"]
- level: Metadata
  verbs: ["update", "patch"]
  resources:
  - group: "resource.k8s.io"
    resources: ["resourceclaims", "resourceclaims/status"]
- level: None
"""

_libc = ctypes.CDLL(None, use_errno=True)


def _die_with_parent():
    # PR_SET_PDEATHSIG = 1: the child gets SIGKILL when we exit, however.
    _libc.prctl(1, signal.SIGKILL, 0, 0, 0)
    os.setpgrp()


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(cmd, **kw):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE, **kw)


def make_certs(d):
    """A CA and a serving certificate for 127.0.0.1/localhost, and the
    service-account signing key the API server insists on."""
    ca_key, ca_crt = os.path.join(d, "ca.key"), os.path.join(d, "ca.crt")
    _run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
          "-keyout", ca_key, "-out", ca_crt, "-days", "2",
          "-subj", "/CN=ksched-e2e-ca"])
    key, csr, crt = (os.path.join(d, n) for n in
                     ("apiserver.key", "apiserver.csr", "apiserver.crt"))
    ext = os.path.join(d, "san.ext")
    with open(ext, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                "extendedKeyUsage=serverAuth\n")
    _run(["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
          "-out", csr, "-subj", "/CN=kube-apiserver"])
    _run(["openssl", "x509", "-req", "-in", csr, "-CA", ca_crt, "-CAkey",
          ca_key, "-CAcreateserial", "-out", crt, "-days", "2",
          "-extfile", ext])
    sa = os.path.join(d, "sa.key")
    _run(["openssl", "genrsa", "-out", sa, "2048"])
    return ca_crt, crt, key, sa


def kubeconfig(path, server, ca, token, user, exec_command=None):
    """A kubeconfig for user: a bearer token, or with exec_command the
    credentials of that exec plugin."""
    cred = (f"""    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: {exec_command}
      interactiveMode: Never""" if exec_command else f"    token: {token}")
    with open(path, "w") as f:
        f.write(f"""apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: {server}
    certificate-authority: {ca}
users:
- name: {user}
  user:
{cred}
contexts:
- name: e2e
  context:
    cluster: e2e
    user: {user}
current-context: e2e
""")


class Cluster:
    def __init__(self, workdir=None, lifetime=3600, apiserver_flags=()):
        self.own_dir = workdir is None
        self.dir = workdir or tempfile.mkdtemp(prefix="ksched-e2e-")
        self.lifetime = lifetime
        self.deadline = time.monotonic() + lifetime
        self.extra_flags = list(apiserver_flags)
        self.etcd = None
        self.apiserver = None
        self.others = []

    # ---- processes -------------------------------------------------------
    def _spawn(self, name, cmd, env=None):
        log = open(os.path.join(self.dir, name + ".log"), "ab")
        p = subprocess.Popen(cmd,
                             stdout=log, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, env=env,
                             preexec_fn=_die_with_parent)
        log.close()
        return p

    def _watchdog(self):
        # The bounded lifetime: past the deadline everything is killed and
        # this process exits, whatever it was doing.
        while time.monotonic() < self.deadline:
            time.sleep(1)
        sys.stderr.write(f"cluster.py: lifetime of {self.lifetime} s over, stopping\n")
        self.stop()
        os._exit(124)

    def start(self):
        threading.Thread(target=self._watchdog, daemon=True).start()
        self.certs = make_certs(self.dir)
        with open(os.path.join(self.dir, "tokens.csv"), "w") as f:
            f.write(f'{ADMIN_TOKEN},admin,uid-admin,"system:masters"\n')
            f.write(f'{KSCHED_TOKEN},{KSCHED_USER},uid-ksched,'
                    f'"system:serviceaccounts,system:serviceaccounts:kube-system"\n')
            f.write(f'{KUBE_SCHEDULER_TOKEN},system:kube-scheduler,uid-ks\n')
        with open(os.path.join(self.dir, "audit-policy.yaml"), "w") as f:
            f.write(AUDIT_POLICY)
        self.audit_log = os.path.join(self.dir, "audit.log")
        self.etcd_port = free_port()
        self.start_etcd()
        self.port = free_port()
        self.server = f"https://127.0.0.1:{self.port}"
        self.start_apiserver()
        ca = self.certs[0]
        self.admin_kubeconfig = os.path.join(self.dir, "admin.kubeconfig")
        self.ksched_kubeconfig = os.path.join(self.dir, "ksched.kubeconfig")
        self.kube_scheduler_kubeconfig = os.path.join(self.dir, "kube-scheduler.kubeconfig")
        kubeconfig(self.admin_kubeconfig, self.server, ca, ADMIN_TOKEN, "admin")
        kubeconfig(self.ksched_kubeconfig, self.server, ca, KSCHED_TOKEN, "ksched")
        kubeconfig(self.kube_scheduler_kubeconfig, self.server, ca,
                   KUBE_SCHEDULER_TOKEN, "kube-scheduler")
        self.wait_ready()
        return self

    def start_etcd(self):
        peer = free_port()
        url = f"http://127.0.0.1:{self.etcd_port}"
        self.etcd_url = url
        self.etcd = self._spawn("etcd", [
            os.path.join(BIN, "etcd"), "--name", "e2e",
            "--data-dir", os.path.join(self.dir, "etcd"),
            "--listen-client-urls", url, "--advertise-client-urls", url,
            "--listen-peer-urls", f"http://127.0.0.1:{peer}",
            "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
            "--initial-cluster", f"e2e=http://127.0.0.1:{peer}",
            "--unsafe-no-fsync", "--log-level", "warn"])
        self._wait(lambda: self._etcd_ok(), 30, "etcd")

    def _etcd_ok(self):
        try:
            with urllib.request.urlopen(self.etcd_url + "/health", timeout=2) as r:
                return json.load(r).get("health") == "true"
        except (OSError, ValueError):
            return False

    def apiserver_cmd(self):
        ca, crt, key, sa = self.certs
        return [os.path.join(BIN, "kube-apiserver"),
                "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
                f"--secure-port={self.port}",
                f"--etcd-servers={self.etcd_url}",
                f"--tls-cert-file={crt}", f"--tls-private-key-file={key}",
                f"--client-ca-file={ca}",
                f"--token-auth-file={os.path.join(self.dir, 'tokens.csv')}",
                "--authorization-mode=RBAC",
                "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
                "--service-account-issuer=https://kubernetes.default.svc",
                f"--service-account-key-file={sa}",
                f"--service-account-signing-key-file={sa}",
                "--service-cluster-ip-range=10.0.0.0/24",
                "--endpoint-reconciler-type=none",
                "--allow-privileged=true", "--profiling=false",
                f"--audit-policy-file={os.path.join(self.dir, 'audit-policy.yaml')}",
                f"--audit-log-path={self.audit_log}",
                "--audit-log-format=json", "--audit-log-maxbackup=0",
                "--audit-log-maxsize=0", "--v=1"] + self.extra_flags

    def start_apiserver(self):
        self.apiserver = self._spawn("kube-apiserver", self.apiserver_cmd())

    def wait_ready(self, timeout=90):
        def ready():
            try:
                self.get("/readyz")
                self.get("/api/v1/namespaces/default")
                self.get("/apis/rbac.authorization.k8s.io/v1/clusterroles/system:kube-scheduler")
                return True
            except (OSError, ApiError):
                return False
        self._wait(ready, timeout, "kube-apiserver")

    def _wait(self, cond, timeout, what):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if cond():
                return
            for p in (self.etcd, self.apiserver):
                if p is not None and p.poll() is not None:
                    raise RuntimeError(f"{what}: a control-plane process exited "
                                       f"({p.args[0]}, status {p.returncode}); "
                                       f"logs in {self.dir}")
            time.sleep(0.2)
        raise RuntimeError(f"{what} not ready after {timeout} s; logs in {self.dir}")

    def kill_apiserver(self):
        """kill -9 the API server."""
        _kill_tree(self.apiserver, signal.SIGKILL)
        self.apiserver.wait()

    def restart_apiserver(self, extra_flags=None):
        if self.apiserver and self.apiserver.poll() is None:
            self.kill_apiserver()
        if extra_flags is not None:
            self.extra_flags = list(extra_flags)
        self.start_apiserver()
        self.wait_ready()

    def spawn(self, name, cmd, env=None):
        """Start another process (ksched, kube-scheduler) under the same
        lifetime rules; it is stopped with the cluster."""
        p = self._spawn(name, cmd, env)
        self.others.append(p)
        return p

    def stop(self, keep=False):
        for p in self.others + [self.apiserver, self.etcd]:
            if p is not None and p.poll() is None:
                _kill_tree(p, signal.SIGKILL)
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    pass
        if self.own_dir and not keep:
            shutil.rmtree(self.dir, ignore_errors=True)

    # ---- API access ------------------------------------------------------
    def _ctx(self):
        if not hasattr(self, "_ssl"):
            self._ssl = ssl.create_default_context(cafile=self.certs[0])
        return self._ssl

    def request(self, method, path, body=None, token=ADMIN_TOKEN,
                content_type="application/json", timeout=30):
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
        req = urllib.request.Request(self.server + path, data=data, method=method)
        req.add_header("Authorization", "Bearer " + token)
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(req, context=self._ctx(), timeout=timeout) as r:
                raw = r.read()
        except urllib.error.HTTPError as e:
            raise ApiError(e.code, e.read().decode(errors="replace")) from None
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode(errors="replace")

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body, **kw):
        return self.request("POST", path, body, **kw)

    def etcd_compact(self):
        """Compact etcd at its current revision (watches older than it get
        410 Gone from the API server). Uses etcd's JSON gateway."""
        def call(path, body):
            req = urllib.request.Request(self.etcd_url + path, json.dumps(body).encode(),
                                         {"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=10) as r:
                return json.load(r)
        import base64
        rev = int(call("/v3/kv/range", {"key": base64.b64encode(b"/").decode()})
                  ["header"]["revision"])
        call("/v3/kv/compaction", {"revision": rev, "physical": True})
        return rev

    def audit_events(self):
        try:
            f = open(self.audit_log)
        except FileNotFoundError:
            return
        with f:
            for line in f:
                try:
                    ev = json.loads(line)
                except ValueError:
                    continue
                if ev.get("stage") == "ResponseComplete":
                    yield ev

    def audit_count(self, verb, subresource=None, user=None, code=None):
        """How many requests on pods the audit log holds with this verb
        (and subresource, user, response code)."""
        n = 0
        for ev in self.audit_events():
            ref = ev.get("objectRef") or {}
            if ref.get("resource") != "pods":
                continue
            if ev.get("verb") != verb or ref.get("subresource") != subresource:
                continue
            if user and (ev.get("user") or {}).get("username") != user:
                continue
            if code and (ev.get("responseStatus") or {}).get("code") != code:
                continue
            n += 1
        return n

    def audit_bindings(self, codes=(201,)):
        """pods/binding calls from the audit log, in order, with the given
        response codes (None: all): [{"pod": "ns/name", "node": N,
        "user": U, "code": C}, ...]. A binding whose client went away
        mid-request is logged with 504 even when it was committed."""
        out = []
        for ev in self.audit_events():
            ref = ev.get("objectRef") or {}
            if ref.get("subresource") != "binding":
                continue
            code = (ev.get("responseStatus") or {}).get("code")
            if codes is not None and code not in codes:
                continue
            target = ((ev.get("requestObject") or {}).get("target") or {}).get("name")
            out.append({"pod": f"{ref.get('namespace')}/{ref.get('name')}",
                        "node": target, "code": code,
                        "user": (ev.get("user") or {}).get("username")})
        return out

    def bindings(self):
        """{"ns/name": [node, ...]}: the successful bindings of each pod."""
        out = {}
        for b in self.audit_bindings():
            out.setdefault(b["pod"], []).append(b["node"])
        return out

    def write_kubeconfig(self, name, server=None, token=KSCHED_TOKEN, user="ksched"):
        path = os.path.join(self.dir, name)
        kubeconfig(path, server or self.server, self.certs[0], token, user)
        return path

    def env(self):
        e = dict(os.environ)
        e["KUBECONFIG"] = self.admin_kubeconfig
        e["PATH"] = BIN + os.pathsep + e.get("PATH", "")
        return e


class ApiError(Exception):
    def __init__(self, code, body):
        super().__init__(f"HTTP {code}: {body[:300]}")
        self.code = code
        self.body = body


def _kill_tree(p, sig):
    # Each child leads its own process group.
    try:
        os.killpg(p.pid, sig)
    except ProcessLookupError:
        pass


def main(argv):
    lifetime, keep, cmd = 3600, False, []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--lifetime":
            lifetime = int(argv[i + 1]); i += 2
        elif a == "--keep":
            keep = True; i += 1
        elif a == "--":
            cmd = argv[i + 1:]; break
        else:
            print(__doc__, file=sys.stderr)
            return 2
    for tool in ("etcd", "kube-apiserver", "kubectl"):
        if not os.access(os.path.join(BIN, tool), os.X_OK):
            print(f"{BIN}/{tool} missing: run test/e2e/build.sh", file=sys.stderr)
            return 1
    c = Cluster(lifetime=lifetime)
    stop = lambda *_: sys.exit(130)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        t0 = time.monotonic()
        c.start()
        print(f"# ready in {time.monotonic() - t0:.1f} s; directory {c.dir}", flush=True)
        print(f"export KUBECONFIG={c.admin_kubeconfig}")
        print(f"export KSCHED_KUBECONFIG={c.ksched_kubeconfig}")
        print(f"export E2E_AUDIT_LOG={c.audit_log}")
        print(f"export PATH={BIN}:$PATH", flush=True)
        if cmd:
            e = c.env()
            e["KSCHED_KUBECONFIG"] = c.ksched_kubeconfig
            e["E2E_AUDIT_LOG"] = c.audit_log
            left = max(1, c.deadline - time.monotonic())
            return subprocess.run(cmd, env=e, timeout=left).returncode
        while time.monotonic() < c.deadline:
            time.sleep(1)
        return 0
    finally:
        c.stop(keep=keep)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
