#!/usr/bin/env bash
# docs/trace_two_replicas.png: the trace view of one multi-round call across two replicas,
# drawn from the spans a real OTLP receiver got (tests/tests/otlp_export.rs, run with
# MCP_TOOL_TRACE_OUT): a 3-request summarize_repo call, rounds 1 and 3 on replica A, round 2
# on replica B, and an isError get_weather call of its own trace.
#
#   scripts/trace_picture.sh            # VENV=DIR keeps and reuses the matplotlib venv
#
# Needs cargo and python3 (matplotlib is installed in a venv from PyPI when missing).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
MCP_TOOL_TRACE_OUT="$tmp/spans.json" cargo test -q -p mcp-tool-tests --test otlp_export >&2
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
MPLCONFIGDIR="$tmp/mpl" "$py" - "$tmp/spans.json" docs/trace_two_replicas.png <<'PY'
import json
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

spans = json.load(open(sys.argv[1]))
call = [s for s in spans if s["name"] == "tools/call summarize_repo"]
trace = call[0]["trace_id"] if call else None
spans = [s for s in spans if s["trace_id"] == trace]
by_id = {s["span_id"]: s for s in spans}

def depth(s):
    d = 0
    while s["parent_span_id"] in by_id:
        s = by_id[s["parent_span_id"]]
        d += 1
    return d

# depth-first: each server span, then its children by start
roots = sorted([s for s in spans if s["kind"] == "SPAN_KIND_SERVER"], key=lambda s: s["start"])
rows = []
def walk(s):
    rows.append(s)
    for c in sorted([c for c in spans if c["parent_span_id"] == s["span_id"]
                     and c["kind"] != "SPAN_KIND_SERVER"], key=lambda c: c["start"]):
        walk(c)
for r in roots:
    walk(r)
t0 = min(s["start"] for s in rows)
colors = {"replica-a": "#4C72B0", "replica-b": "#DD8452"}
fig, ax = plt.subplots(figsize=(11, 0.42 * len(rows) + 1.6))
for i, s in enumerate(rows):
    start = (s["start"] - t0) / 1e6
    width = max((s["end"] - s["start"]) / 1e6, 0.02)
    inst = s["resource"].get("service.instance.id", "?")
    ax.barh(i, width, left=start, color=colors.get(inst, "#888"),
            alpha=1.0 if s["kind"] == "SPAN_KIND_SERVER" else 0.55)
    a = s["attributes"]
    label = "  " * depth(s) + s["name"]
    if s["kind"] == "SPAN_KIND_SERVER":
        label += "  [%s, round %s, id %s]" % (inst, a.get("mcp_tool.round"), a.get("jsonrpc.request.id"))
        if s["links"]:
            label += "  link → first round"
    ax.text(start + width + 0.05, i, label, va="center", fontsize=8)
ax.set_yticks([])
ax.invert_yaxis()
ax.set_xlabel("ms since the first round started")
ax.set_title("one summarize_repo call, 3 requests on two replicas: one trace %s…, call id %s"
             % (trace[:12], call[0]["attributes"].get("mcp_tool.call.id")), fontsize=9)
xmax = max((s["end"] - t0) / 1e6 for s in rows)
ax.set_xlim(0, xmax * 1.9)
handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in colors.values()]
ax.legend(handles, list(colors), loc="lower right", fontsize=8)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
print("wrote", sys.argv[2])
PY
