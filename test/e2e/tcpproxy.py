#!/usr/bin/env python3
"""A TCP proxy on 127.0.0.1 that misbehaves on purpose: it adds latency to
every chunk it forwards and cuts connections at random points.

    tcpproxy.py --target PORT [--port PORT] [--latency-ms N]
                [--cut-after-bytes-max N] [--cut-after-s-max S]
                [--cut-prob P] [--seed S]
                [--lifetime SECONDS]

Each accepted connection draws, with probability --cut-prob, a byte budget
uniformly in [1, --cut-after-bytes-max] and a lifetime uniformly in
[0.1, --cut-after-s-max] seconds; once it has forwarded that many bytes or
lived that long both sockets are reset (mid-request or mid-response).
black_hole() (library only) stops forwarding on every open connection,
both ways, but keeps its sockets open: the peers' TCP stacks still
acknowledge, nothing is answered (a wedged middlebox); connections
accepted afterwards are served normally.
Prints "listening PORT" once ready; counts go to stderr when it ends.
Also usable as a library: Proxy(...).start() runs it in threads.
"""

import argparse
import random
import select
import socket
import sys
import threading
import time


class Proxy:
    def __init__(self, target, port=0, latency_ms=0, cut_prob=0.0,
                 cut_after_bytes_max=0, cut_after_s_max=0.0, seed=1):
        self.target = target
        self.latency = latency_ms / 1000.0
        self.cut_prob = cut_prob
        self.cut_max = cut_after_bytes_max
        self.cut_s_max = cut_after_s_max
        self.rand = random.Random(seed)
        self.lock = threading.Lock()
        self.accepted = 0
        self.cut = 0
        self.stopping = False
        self.paused = False
        self.conns = set()
        self.holed = set()
        self.clients = set()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]

    def set(self, latency_ms=None, cut_prob=None):
        with self.lock:
            if latency_ms is not None:
                self.latency = latency_ms / 1000.0
            if cut_prob is not None:
                self.cut_prob = cut_prob

    def pause(self):
        """Cut every open connection and refuse new ones until resume()."""
        with self.lock:
            self.paused = True
            conns = list(self.conns)
        for x in conns:
            try:
                x.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def black_hole(self):
        """Stop forwarding on the open connections, keeping them open;
        returns how many connections were held."""
        with self.lock:
            self.holed |= self.clients
            return len(self.clients)

    def resume(self):
        with self.lock:
            self.paused = False

    def start(self):
        threading.Thread(target=self._accept_loop, daemon=True).start()
        return self

    def stop(self):
        self.stopping = True
        try:
            self.sock.close()
        except OSError:
            pass

    def _accept_loop(self):
        while not self.stopping:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                if self.paused:
                    client.close()
                    continue
                self.accepted += 1
                budget, until = None, None
                if self.rand.random() < self.cut_prob:
                    if self.cut_max > 0:
                        budget = self.rand.randint(1, self.cut_max)
                    if self.cut_s_max > 0:
                        until = time.monotonic() + self.rand.uniform(0.1, self.cut_s_max)
            threading.Thread(target=self._serve, args=(client, budget, until),
                             daemon=True).start()

    def _cut(self, peers):
        with self.lock:
            self.cut += 1
        # RST rather than FIN: SO_LINGER 0.
        for x in peers:
            x.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                         b"\x01\x00\x00\x00\x00\x00\x00\x00")

    def _serve(self, client, budget, until):
        try:
            upstream = socket.create_connection(("127.0.0.1", self.target), timeout=5)
        except OSError:
            client.close()
            return
        upstream.settimeout(None)
        peers = {client: upstream, upstream: client}
        with self.lock:
            self.conns.update(peers)
            self.clients.add(client)
        sent = 0
        try:
            while not self.stopping:
                if client in self.holed:
                    time.sleep(0.1)
                    continue
                r, _, _ = select.select(list(peers), [], [], 0.1)
                if until is not None and time.monotonic() > until:
                    self._cut(peers)
                    return
                for s in r:
                    data = s.recv(65536)
                    if not data:
                        return
                    if self.latency:
                        time.sleep(self.latency)
                    if budget is not None and sent + len(data) >= budget:
                        peers[s].sendall(data[:max(0, budget - sent)])
                        self._cut(peers)
                        return
                    peers[s].sendall(data)
                    sent += len(data)
        except OSError:
            pass
        finally:
            with self.lock:
                self.conns.difference_update(peers)
                self.holed.discard(client)
                self.clients.discard(client)
            client.close()
            upstream.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", type=int, required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--latency-ms", type=float, default=0)
    ap.add_argument("--cut-prob", type=float, default=0)
    ap.add_argument("--cut-after-bytes-max", type=int, default=0)
    ap.add_argument("--cut-after-s-max", type=float, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lifetime", type=float, default=3600)
    a = ap.parse_args()
    p = Proxy(a.target, a.port, a.latency_ms, a.cut_prob, a.cut_after_bytes_max,
              a.cut_after_s_max, a.seed)
    p.start()
    print(f"listening {p.port}", flush=True)
    try:
        time.sleep(a.lifetime)
    except KeyboardInterrupt:
        pass
    p.stop()
    print(f"accepted {p.accepted} cut {p.cut}", file=sys.stderr)


if __name__ == "__main__":
    main()
