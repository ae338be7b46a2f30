#!/usr/bin/env bash
# Cost growth (issue 12, item 4), printed as Markdown tables and drawn as two PNG charts:
#
# 1. Instructions per request against the round, for `collect` (20 questions, one per round:
#    requests 0 to 20) written three ways (tests/src/bin/cost_growth.rs): `flat` and `all` with
#    #[mcp_tool] (keeping a count and the longest note / every note), and `replay`, hand-written
#    the way SDK resolvers work (every round re-runs the tool from question 0, re-deriving each
#    earlier question and re-parsing its answer from a journal carried in the state). As in
#    scripts/callgrind.sh: `cost_growth round` handles request k N times in process under
#    `valgrind --tool=callgrind`, a run with none is subtracted, instructions per request =
#    (Ir(N) - Ir(0)) / N. With the sealed state size each request returns.
# 2. Sealed state size against kept data: `keep` keeps n bytes of text (prose-like or random)
#    or n numbers across one question; the state it seals, compression off and on.
#
# Charts: docs/cost_growth_rounds.png, docs/cost_growth_state.png (matplotlib; installed in a
# temporary venv from PyPI when python3 lacks it; VENV=DIR keeps and reuses one).
#
#   scripts/cost_growth.sh          # N = 300 (~5 minutes after the build)
#   N=1000 scripts/cost_growth.sh
#
# Needs cargo and python3; installs valgrind (Debian package) when missing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
n=${N:-300}

if ! command -v valgrind >/dev/null 2>&1; then
    echo "installing valgrind (Debian package)" >&2
    if [ "$(id -u)" = 0 ]; then apt=(apt-get); else apt=(sudo apt-get); fi
    "${apt[@]}" update -qq
    DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y -qq valgrind >/dev/null
fi
cargo build --release -q -p mcp-tool-tests --bin cost_growth
bin="${CARGO_TARGET_DIR:-target}/release/cost_growth"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$bin" sizes >"$tmp/sizes"

# instructions CMD... -> total instructions of one run of CMD under callgrind
instructions() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" >/dev/null 2>"$tmp/vg.log"
    sed -n 's/.*Collected : *\([0-9]*\).*/\1/p' "$tmp/vg.log" | tail -n 1
}

impls=(flat all replay)
: >"$tmp/ir"
for impl in "${impls[@]}"; do
    base=$(instructions "$bin" round --impl "$impl" --round 0 --calls 0)
    for k in $(seq 0 20); do
        full=$(instructions "$bin" round --impl "$impl" --round "$k" --calls "$n")
        awk -v i="$impl" -v k="$k" -v f="$full" -v b="$base" -v n="$n" \
            'BEGIN { printf "%s %d %.0f\n", i, k, (f - b) / n }' >>"$tmp/ir"
    done
    echo "measured $impl" >&2
done

# one row per request: k, instructions flat/all/replay, state bytes flat/all/replay
awk '
    FNR == NR { ir[$1, $2] = $3; next }
    $1 == "STATE" { st[tolower($2), $3] = $4 }
    END {
        for (k = 0; k <= 20; k++) {
            printf "%d", k
            split("flat all replay", is, " ")
            for (j = 1; j <= 3; j++) printf " %s", ir[is[j], k]
            for (j = 1; j <= 3; j++) printf " %s", ((is[j], k) in st) ? st[is[j], k] : "-"
            printf "\n"
        }
    }' "$tmp/ir" "$tmp/sizes" >"$tmp/rounds"

echo "### Per request of a 20-question call: instructions and sealed state"
echo
echo "| request | flat (#[mcp_tool], count + longest) | all (#[mcp_tool], every note) | replay (hand-written, journal) | replay/flat | state after: flat | all | replay |"
echo "|---|---|---|---|---|---|---|---|"
awk '{ printf "| %d | %d | %d | %d | %.2f× | %s | %s | %s |\n", $1, $2, $3, $4, $4 / $2, $5, $6, $7 }' "$tmp/rounds"
awk '
    { for (j = 2; j <= 4; j++) tot[j] += $j }
    $1 >= 1 && $1 <= 19 { m++; sx += $1; sxx += $1 * $1; for (j = 2; j <= 4; j++) { sy[j] += $j; sxy[j] += $1 * $j } }
    END {
        printf "| whole call | %d | %d | %d | %.2f× | | | |\n", tot[2], tot[3], tot[4], tot[4] / tot[2]
        printf "\nLeast-squares slope over requests 1–19 (each opens a state and asks the next question), instructions per extra round: flat %.0f, all %.0f, replay %.0f.\n",
            (m * sxy[2] - sx * sy[2]) / (m * sxx - sx * sx), (m * sxy[3] - sx * sy[3]) / (m * sxx - sx * sx),
            (m * sxy[4] - sx * sy[4]) / (m * sxx - sx * sx)
    }' "$tmp/rounds"
echo
echo "(instructions per request under callgrind, N = $n requests per measurement, minus a run with none; state: the requestState length, bytes, compression on)"

echo
echo "### Sealed state against kept data (\`keep\`: n bytes or n numbers kept across one question)"
echo
echo "| kept | n | state, compression off | state, compression on | off: bytes per unit over n = 0 | on/off |"
echo "|---|---|---|---|---|---|"
awk '
    $1 == "KEEP" {
        if ($3 == 0) { z_off[$2] = $4 }
        what = ($2 == "items") ? "numbers (u64)" : ($2 == "text") ? "text, prose-like" : "text, random letters and digits"
        cap = ""; if ($4 > 65536) cap = " (over the 64 KiB cap)"
        off = $4 cap; cap = ""; if ($5 > 65536) cap = " (over the 64 KiB cap)"
        per = ($3 > 0) ? sprintf("%.2f", ($4 - z_off[$2]) / $3) : "–"
        printf "| %s | %d | %s | %s | %s | %.2f× |\n", what, $3, off, $5 cap, per, $5 / $4
    }' "$tmp/sizes"
echo
echo "(requestState length in bytes after the question, HMAC protection; the default cap on a token is 64 KiB, lifted here to measure past it)"

# charts
py=python3
if ! python3 -c 'import matplotlib' 2>/dev/null; then
    venv=${VENV:-$tmp/venv}
    if [ ! -x "$venv/bin/python" ]; then
        echo "installing matplotlib in a venv (PyPI)" >&2
        if ! python3 -m venv "$venv" 2>/dev/null; then
            # Debian's python3 has venv in a package of its own
            rm -rf "$venv"
            if [ "$(id -u)" = 0 ]; then apt=(apt-get); else apt=(sudo apt-get); fi
            "${apt[@]}" update -qq
            DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y -qq python3-venv >/dev/null
            python3 -m venv "$venv"
        fi
        "$venv/bin/pip" install -q --no-cache-dir matplotlib >&2
    fi
    py="$venv/bin/python"
fi
MPLCONFIGDIR="$tmp/mpl" "$py" - "$tmp/rounds" "$tmp/sizes" docs <<'EOF'
import sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

rounds_file, sizes_file, out = sys.argv[1:4]
rows = [line.split() for line in open(rounds_file)]
k = [int(r[0]) for r in rows]
labels = ["flat (#[mcp_tool], count + longest)", "all (#[mcp_tool], every note)",
          "replay (re-runs earlier rounds)"]
fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.5))
for j, label in enumerate(labels):
    a.plot(k, [int(r[1 + j]) / 1000 for r in rows], marker="o", ms=3, label=label)
    pts = [(int(r[0]), int(r[4 + j])) for r in rows if r[4 + j] != "-"]
    b.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=label)
a.set(xlabel="request (round index)", ylabel="thousand instructions per request (callgrind)",
      title="Per-request cost, 20-question tool", xticks=range(0, 21, 2))
b.set(xlabel="request (round index)", ylabel="bytes", title="Sealed requestState after the request",
      xticks=range(0, 21, 2))
for ax in (a, b):
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(f"{out}/cost_growth_rounds.png", dpi=110, metadata={"Software": None})

keep = {}
for line in open(sizes_file):
    f = line.split()
    if f[0] == "KEEP":
        keep.setdefault(f[1], []).append((int(f[2]), int(f[3]), int(f[4])))
fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.5))
for kind, name in (("text", "prose-like text"), ("random", "random letters and digits")):
    pts = keep[kind]
    a.plot([p[0] / 1024 for p in pts], [p[1] / 1024 for p in pts], marker="o", ms=3,
           label=f"{name}, compression off")
    a.plot([p[0] / 1024 for p in pts], [p[2] / 1024 for p in pts], marker="o", ms=3,
           linestyle="--", label=f"{name}, compression on")
pts = keep["items"]
b.plot([p[0] for p in pts], [p[1] / 1024 for p in pts], marker="o", ms=3, label="compression off")
b.plot([p[0] for p in pts], [p[2] / 1024 for p in pts], marker="o", ms=3, linestyle="--",
       label="compression on")
a.set(xlabel="text kept (KiB)", ylabel="sealed state (KiB)", title="State size against kept text")
b.set(xlabel="numbers kept (u64)", ylabel="sealed state (KiB)", title="State size against kept numbers")
for ax in (a, b):
    ax.axhline(64, color="grey", linestyle=":", label="default cap (64 KiB)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(f"{out}/cost_growth_state.png", dpi=110, metadata={"Software": None})
EOF
echo
echo "charts: docs/cost_growth_rounds.png, docs/cost_growth_state.png"
