"""A small Chrome DevTools Protocol client for the browser tests.

Chromium is started headless with --remote-debugging-pipe: commands go in on
its fd 3 and answers come out of its fd 4, NUL-terminated JSON, so no port
is opened and no websocket library is needed. One page (target) per
Browser; every console message, log entry, exception and network request
the page makes is recorded so a test can assert there were none.
"""
import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class CDPError(Exception):
    pass


class Browser:
    def __init__(self, binary, width=1280, height=900, timeout=60.0):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="ksched-chromium-")
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()
        # the child must not hold our ends, or EOF never comes
        os.set_inheritable(to_w, False)
        os.set_inheritable(from_r, False)

        def child():
            # via high numbers: to_r or from_w may already be 3 or 4
            os.dup2(to_r, 100)
            os.dup2(from_w, 101)
            os.dup2(100, 3)
            os.dup2(101, 4)
            os.close(100)
            os.close(101)

        args = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--remote-debugging-pipe", "--no-first-run", "--no-default-browser-check",
                "--disable-background-networking", "--disable-extensions", "--disable-sync",
                "--user-data-dir=" + self.profile, "--window-size=%d,%d" % (width, height), "about:blank"]
        self.proc = subprocess.Popen(args, close_fds=False, preexec_fn=child,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # the child keeps its ends (dup'ed to 3 and 4)
        os.close(to_r)
        os.close(from_w)
        self.wfd, self.rfd = to_w, from_r
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None
        target = self.call("Target.createTarget", {"url": "about:blank"}, browser=True)["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True},
                                 browser=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(domain + ".enable")
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def close(self):
        try:
            self.call("Browser.close", browser=True)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self.wfd, self.rfd):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read_message(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CDPError("timed out waiting for chromium")
            ready, _, _ = select.select([self.rfd], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.rfd, 1 << 20)
            if not chunk:
                raise CDPError("chromium closed the pipe (exit %s)" % self.proc.poll())
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, browser=False):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if self.session and not browser:
            msg["sessionId"] = self.session
        os.write(self.wfd, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise CDPError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def wait_event(self, method, timeout=None):
        deadline = time.monotonic() + (timeout or self.timeout)
        for i, e in enumerate(self.events):
            if e["method"] == method:
                del self.events[i]
                return e
        while True:
            m = self._read_message(deadline)
            if m.get("method") == method:
                return m
            if "method" in m:
                self.events.append(m)

    def open(self, url):
        self.events = []
        self.call("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired")

    def eval(self, expression):
        """The value of a JavaScript expression (JSON-able), exceptions raised."""
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                           "awaitPromise": True})
        if "exceptionDetails" in r:
            raise CDPError("%s: %s" % (expression[:80], r["exceptionDetails"].get("exception", {})
                                       .get("description", r["exceptionDetails"].get("text"))))
        return r["result"].get("value")

    def screenshot(self, path):
        # the whole page, not just the viewport
        m = self.call("Page.getLayoutMetrics")
        size = m.get("cssContentSize") or m.get("contentSize")
        h = min(int(size["height"]) + 1, 4000)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": 1280, "height": h, "deviceScaleFactor": 1, "mobile": False})
        data = self.call("Page.captureScreenshot", {"format": "png"})["data"]
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False})
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def screenshot_clip(self, path, x, y, width, height):
        """A part of the page (CSS pixels from the page's top left)."""
        data = self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                    "clip": {"x": x, "y": y, "width": width, "height": height,
                                                             "scale": 1}})["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def problems(self):
        """Console errors and warnings, log errors, exceptions and any
        request that is not for the page itself (file:) or inline (data:)."""
        self.call("Runtime.evaluate", {"expression": "1"})  # flush pending events
        out = []
        for e in self.events:
            m, p = e["method"], e.get("params", {})
            if m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.append("exception: " + d.get("exception", {}).get("description", d.get("text", "")))
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
                out.append("console.%s: %s" % (p["type"], " ".join(str(a.get("value", a.get("description")))
                                                                   for a in p.get("args", []))))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") in ("error", "warning"):
                out.append("log: " + p["entry"].get("text", ""))
            elif m == "Network.requestWillBeSent":
                url = p.get("request", {}).get("url", "")
                if not (url.startswith("file:") or url.startswith("data:") or url == "about:blank"):
                    out.append("network request: " + url)
        return out
