#!/usr/bin/env python3
"""Memory and start-up of `serve` over Streamable HTTP, beside the bare axum server
(tests/examples/bare_axum.rs). Driven by scripts/memory.sh, which builds both (release) and
passes their paths:

    memory.py SERVE_BIN BARE_BIN [--sessions N] [--connections N] [--runs N]

Measures, each as the growth of the server's VmRSS (/proc/PID/status) divided by the count:
  - an idle legacy session: `initialize` (2025-11-25) + `notifications/initialized` over one
    keep-alive connection, each session with its own bearer token (the demo authenticator
    names a principal per token; a principal may hold 16 sessions), the session kept open;
  - an idle keep-alive connection: a TCP connection that made one request (`server/discover`
    for serve, the bare body for bare) and stays open;
  - an in-flight modern request: `slow_job` (sleeps 30 s) on each of 32 connections opened
    beforehand (32 = the transport's default `max_concurrent_requests`), all waiting at once;
and start-up: wall time from exec to the first answered request (`server/discover` / the
bare body answered 200), median of --runs runs, polling every 0.5 ms; serve twice, with its
default store (SQLite files in a fresh temporary directory, created at start-up) and with
`--store memory` (the notes database is SQLite either way).

Prints a Markdown table. Only loopback; every server started here is stopped here.
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

MODERN = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
HEADERS_MODERN = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2026-07-28",
}


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def settle_rss(pid):
    """VmRSS after the server has had a moment to finish what it was doing."""
    time.sleep(0.5)
    return rss_kib(pid)


def request_bytes(body, headers):
    head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    for k, v in headers.items():
        head += f"{k}: {v}\r\n"
    data = json.dumps(body, separators=(",", ":")).encode()
    head += f"Content-Length: {len(data)}\r\n\r\n"
    return head.encode() + data


def read_response(sock):
    """Reads one HTTP/1.1 response (Content-Length or chunked); returns (status, headers, body)."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            raise RuntimeError("connection closed")
        buf += chunk
    head, rest = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, v = line.split(":", 1)
        headers[k.strip().lower()] = v.strip()
    if "content-length" in headers:
        n = int(headers["content-length"])
        while len(rest) < n:
            chunk = sock.recv(65536)
            if not chunk:
                raise RuntimeError("connection closed")
            rest += chunk
        return status, headers, rest[:n]
    if headers.get("transfer-encoding") == "chunked":
        body = b""
        while True:
            while b"\r\n" not in rest:
                rest += sock.recv(65536)
            size_line, rest = rest.split(b"\r\n", 1)
            size = int(size_line.split(b";")[0], 16)
            while len(rest) < size + 2:
                rest += sock.recv(65536)
            body += rest[:size]
            rest = rest[size + 2 :]
            if size == 0:
                return status, headers, body
    return status, headers, rest


def connect(port):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def exchange(sock, body, headers):
    sock.sendall(request_bytes(body, headers))
    return read_response(sock)


def start(cmd):
    """Starts a server; returns (process, port) once it printed `listening on URL`."""
    p = subprocess.Popen(
        cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, env={**os.environ, "RUST_LOG": "error"}
    )
    while True:
        line = p.stderr.readline().decode()
        if not line:
            raise RuntimeError(f"{cmd[0]} did not start")
        if line.startswith("listening on "):
            port = int(line.split(":")[-1].split("/")[0])
            return p, port


def stop(p):
    p.terminate()
    try:
        p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def discover_body(i=1):
    return {"jsonrpc": "2.0", "id": i, "method": "server/discover", "params": {"_meta": MODERN}}


def probe(port, kind):
    """One request that must be answered 200 (a fresh connection)."""
    s = connect(port)
    try:
        status, _, _ = exchange(s, discover_body(), {**HEADERS_MODERN, "Mcp-Method": "server/discover"})
        return status
    finally:
        s.close()


def idle_sessions(port, pid, n):
    sock = connect(port)
    before = settle_rss(pid)
    for i in range(n):
        auth = {"Authorization": f"Bearer memory-{i}"}
        h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **auth}
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "memory", "version": "1"},
            },
        }
        status, headers, _ = exchange(sock, init, h)
        sid = headers.get("mcp-session-id")
        if status != 200 or not sid:
            raise RuntimeError(f"initialize {i}: {status} {headers}")
        h2 = {**h, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
        status, _, _ = exchange(sock, {"jsonrpc": "2.0", "method": "notifications/initialized"}, h2)
        if status != 202:
            raise RuntimeError(f"initialized {i}: {status}")
    after = settle_rss(pid)
    sock.close()
    return before, after


def idle_connections(port, pid, n, body, headers):
    before = settle_rss(pid)
    socks = []
    for _ in range(n):
        s = connect(port)
        status, _, _ = exchange(s, body, headers)
        if status != 200:
            raise RuntimeError(f"keep-alive request: {status}")
        socks.append(s)
    after = settle_rss(pid)
    return before, after, socks


def in_flight(port, pid, n):
    # the connections first (and one request on each), so that only the requests count
    socks = []
    h = {**HEADERS_MODERN, "Mcp-Method": "server/discover"}
    for _ in range(n):
        s = connect(port)
        if exchange(s, discover_body(), h)[0] != 200:
            raise RuntimeError("discover")
        socks.append(s)
    before = settle_rss(pid)
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "slow_job", "arguments": {"seconds": 30, "label": "memory"}, "_meta": MODERN},
    }
    h = {**HEADERS_MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "slow_job"}
    for s in socks:
        s.sendall(request_bytes(call, h))
    after = settle_rss(pid)
    # nothing answered yet: they are all in flight
    for s in socks:
        s.setblocking(False)
        try:
            if s.recv(1):
                raise RuntimeError("a slow_job was answered early (refused?)")
        except BlockingIOError:
            pass
        s.close()
    return before, after


def startup(cmd_for_port, runs, kind):
    times = []
    for _ in range(runs):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        t0 = time.monotonic()
        p = subprocess.Popen(
            cmd_for_port(port),
            stderr=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            env={**os.environ, "RUST_LOG": "error"},
        )
        try:
            while True:
                try:
                    if probe(port, kind) == 200:
                        break
                except (ConnectionRefusedError, ConnectionResetError, RuntimeError):
                    pass
                if p.poll() is not None:
                    raise RuntimeError("server exited during start-up")
                time.sleep(0.0005)
            times.append((time.monotonic() - t0) * 1000)
        finally:
            stop(p)
    return statistics.median(times), min(times), max(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("serve")
    ap.add_argument("bare")
    ap.add_argument("--sessions", type=int, default=500)
    ap.add_argument("--connections", type=int, default=500)
    ap.add_argument("--runs", type=int, default=10)
    a = ap.parse_args()
    rows = []

    def row(what, server, n, before, after):
        per = (after - before) / n
        rows.append(f"| {what} | {server} | {n} | {before} | {after} | {per:.1f} |")

    # serve
    p, port = start([a.serve, "--http", "127.0.0.1:0"])
    try:
        for _ in range(3):
            probe(port, "serve")
        idle0 = rss_kib(p.pid)
        b, e = idle_sessions(port, p.pid, a.sessions)
        row("idle legacy session", "serve", a.sessions, b, e)
        h = {**HEADERS_MODERN, "Mcp-Method": "server/discover"}
        b, e, socks = idle_connections(port, p.pid, a.connections, discover_body(), h)
        row("idle keep-alive connection", "serve", a.connections, b, e)
        for s in socks:
            s.close()
        b, e = in_flight(port, p.pid, 32)
        row("in-flight modern request (slow_job)", "serve", 32, b, e)
    finally:
        stop(p)
    # bare
    p, port = start([a.bare, "127.0.0.1:0"])
    try:
        for _ in range(3):
            probe(port, "bare")
        bare_idle0 = rss_kib(p.pid)
        b, e, socks = idle_connections(port, p.pid, a.connections, discover_body(), HEADERS_MODERN)
        row("idle keep-alive connection", "bare axum", a.connections, b, e)
        for s in socks:
            s.close()
    finally:
        stop(p)

    su = startup(lambda port: [a.serve, "--http", f"127.0.0.1:{port}"], a.runs, "serve")
    sm = startup(lambda port: [a.serve, "--http", f"127.0.0.1:{port}", "--store", "memory"], a.runs, "serve")
    sb = startup(lambda port: [a.bare, f"127.0.0.1:{port}"], a.runs, "bare")

    print("| what | server | count | VmRSS before (KiB) | VmRSS after (KiB) | KiB each |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(r)
    print()
    print(f"Idle VmRSS after 3 requests: serve {idle0} KiB, bare axum {bare_idle0} KiB.")
    print()
    print(f"| start-up, exec → first answered request | median of {a.runs} | min | max |")
    print("|---|---|---|---|")
    print(f"| serve (`--http`, default store) | {su[0]:.1f} ms | {su[1]:.1f} ms | {su[2]:.1f} ms |")
    print(f"| serve (`--http`, `--store memory`) | {sm[0]:.1f} ms | {sm[1]:.1f} ms | {sm[2]:.1f} ms |")
    print(f"| bare axum | {sb[0]:.1f} ms | {sb[1]:.1f} ms | {sb[2]:.1f} ms |")


if __name__ == "__main__":
    sys.exit(main())
