#!/usr/bin/env bash
# docs/metrics_load_run.png: what `serve --metrics` shows during a short load run. `serve`
# runs with a Prometheus endpoint, `loadgen` drives the example tools' multi-round calls
# (8 clients, DURATION seconds), and /metrics is scraped every second; the picture plots,
# per second: requests by outcome, the p50 and p99 of mcp.server.operation.duration (from
# the histogram's buckets), the mean state size at seal, and the refusals.
#
#   scripts/metrics_picture.sh              # DURATION=20 CONCURRENCY=8 VENV=DIR (matplotlib)
#
# Needs cargo and python3 (matplotlib is installed in a venv from PyPI when missing).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
DURATION=${DURATION:-20}
CONCURRENCY=${CONCURRENCY:-8}
tmp=$(mktemp -d)
serve_pid=""
cleanup() {
    [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

cargo build -q -p mcp-tool-examples --bin serve --bin loadgen >&2
target=${CARGO_TARGET_DIR:-target}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(free_port)
mport=$(free_port)
MCP_TOOL_STATE_KEY="k1:$(printf 'ab%.0s' {1..32})" RUST_LOG=warn \
    "$target/debug/serve" --http "127.0.0.1:$port" --metrics "127.0.0.1:$mport" \
    --store memory 2>"$tmp/serve.log" &
serve_pid=$!
for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$mport/metrics" >/dev/null 2>&1 && break
    sleep 0.1
done

# scrape every second while the load runs
python3 - "$mport" "$tmp/scrapes.json" "$((DURATION + 3))" >&2 <<'PY' &
import json, sys, time, urllib.request
port, out, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
scrapes, start = [], time.time()
while time.time() - start < seconds:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    scrapes.append({"t": time.time() - start, "text": text})
    time.sleep(max(0.0, 1.0 - (time.time() - start) % 1.0))
json.dump(scrapes, open(out, "w"))
PY
scraper=$!
"$target/debug/loadgen" --url "http://127.0.0.1:$port/mcp" --concurrency "$CONCURRENCY" \
    --duration "$DURATION" | tee "$tmp/loadgen.txt" >&2
wait "$scraper"

py=python3
if ! python3 -c 'import matplotlib' 2>/dev/null; then
    venv=${VENV:-$tmp/venv}
    if [ ! -x "$venv/bin/python" ]; then
        echo "installing matplotlib in a venv (PyPI)" >&2
        python3 -m venv "$venv"
        "$venv/bin/pip" install -q --no-cache-dir matplotlib >&2
    fi
    py="$venv/bin/python"
fi
MPLCONFIGDIR="$tmp/mpl" "$py" - "$tmp/scrapes.json" docs/metrics_load_run.png "$(tail -1 "$tmp/loadgen.txt")" <<'PY'
import json, re, sys
from collections import defaultdict

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

scrapes = json.load(open(sys.argv[1]))
LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)$')
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')

def parse(text):
    """Prometheus text format: {(name, frozenset(labels)): value}."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = LINE.match(line)
        if m:
            labels = frozenset(LABEL.findall(m.group(3) or ""))
            out[(m.group(1), labels)] = float(m.group(4))
    return out

series = [(s["t"], parse(s["text"])) for s in scrapes]

def total(sample, name, where=lambda l: True):
    return sum(v for (n, l), v in sample.items() if n == name and where(dict(l)))

def quantile(buckets, q):
    """The upper bound of the bucket holding quantile q of a delta histogram."""
    n = buckets[-1][1] if buckets else 0
    if n <= 0:
        return None
    for le, c in buckets:
        if c >= q * n:
            return le
    return buckets[-1][0]

t, outcomes, p50, p99, size, refusals = [], defaultdict(list), [], [], [], defaultdict(list)
kinds = set()
for (_, s) in series:
    for (n, l) in s:
        if n == "mcp_server_operation_duration_count":
            kinds.add(dict(l).get("outcome", "?"))
for (t0, a), (t1, b) in zip(series, series[1:]):
    dt = t1 - t0
    t.append(t1)
    for k in sorted(kinds):
        f = lambda l, k=k: l.get("outcome") == k
        outcomes[k].append((total(b, "mcp_server_operation_duration_count", f)
                            - total(a, "mcp_server_operation_duration_count", f)) / dt)
    les = sorted({dict(l)["le"] for (n, l) in b if n == "mcp_server_operation_duration_bucket"},
                 key=lambda x: float("inf") if x == "+Inf" else float(x))
    buckets = []
    for le in les:
        f = lambda l, le=le: l.get("le") == le
        c = (total(b, "mcp_server_operation_duration_bucket", f)
             - total(a, "mcp_server_operation_duration_bucket", f))
        buckets.append((float("inf") if le == "+Inf" else float(le), c))
    q50, q99 = quantile(buckets, 0.5), quantile(buckets, 0.99)
    p50.append(q50 * 1000 if q50 not in (None, float("inf")) else None)
    p99.append(q99 * 1000 if q99 not in (None, float("inf")) else None)
    ds = total(b, "mcp_server_request_state_size_sum") - total(a, "mcp_server_request_state_size_sum")
    dn = total(b, "mcp_server_request_state_size_count") - total(a, "mcp_server_request_state_size_count")
    size.append(ds / dn if dn else None)
    for name, label in [("mcp_server_request_state_refusals_total", "state refusals"),
                        ("mcp_server_concurrency_refusals_total", "concurrency refusals")]:
        refusals[label].append((total(b, name) - total(a, name)) / dt)

fig, ax = plt.subplots(4, 1, figsize=(9, 9), sharex=True)
for k, v in outcomes.items():
    ax[0].plot(t, v, label=k)
ax[0].set_ylabel("requests/s")
ax[0].legend(title="outcome", fontsize=8)
ax[1].plot(t, p50, label="p50")
ax[1].plot(t, p99, label="p99")
ax[1].set_ylabel("duration, ms\n(bucket bound)")
ax[1].set_yscale("log")
ax[1].legend(fontsize=8)
ax[2].plot(t, size)
ax[2].set_ylabel("state at seal,\nmean bytes")
for k, v in refusals.items():
    ax[3].plot(t, v, label=k)
ax[3].set_ylabel("refusals/s")
ax[3].legend(fontsize=8)
ax[3].set_xlabel("seconds since serve started")
fig.suptitle("serve --metrics during a load run (loadgen, example tools)\n" + sys.argv[3][:110],
             fontsize=9)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=90)
print(f"wrote {sys.argv[2]} from {len(series)} scrapes")
PY
