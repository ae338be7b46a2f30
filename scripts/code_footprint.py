#!/usr/bin/env python3
"""The code a request runs, from a callgrind profile dumped with `--dump-instr=yes
--compress-pos=no --compress-strings=no` (scripts/callgrind_weather.sh makes them): the
64-byte lines of machine code where at least one instruction per request runs on average,
in KiB; with --top, the functions holding most of them; with --parts, the KiB per part of
the stack (the crate or library of the function holding each line; inlined code counts
where it was inlined).

    scripts/code_footprint.py PROFILE REQUESTS            # prints "KIB"
    scripts/code_footprint.py PROFILE REQUESTS --top 30   # and the 30 largest functions
    scripts/code_footprint.py PROFILE REQUESTS --parts    # and the KiB per part

Why it matters: a request runs most of its code once, so the front end fetches it from the
second-level cache on every request when it exceeds the first-level instruction cache
(32-64 KiB per core). Instructions counted alone miss that cost; the wall time does not.
"""

import argparse
import collections
import re


def lines_per_request(path, requests):
    """{64-byte line: (instructions run there, the function holding it)}"""
    cost = collections.Counter()
    owner = {}
    names = {}
    fn = None
    call_cost_next = False
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("fn="):
                # `fn=(id) name` the first time, `fn=(id)` after (compressed names)
                m = re.match(r"\((\d+)\)(?: (.*))?$", line[3:].strip())
                if m:
                    if m.group(2) is not None:
                        names[m.group(1)] = m.group(2)
                    fn = names.get(m.group(1), m.group(1))
                else:
                    fn = line[3:].strip()
            elif line.startswith("calls="):
                # the next cost line is the call's inclusive cost, not code run here
                call_cost_next = True
            elif line.startswith("0x"):
                if call_cost_next:
                    call_cost_next = False
                    continue
                fields = line.split()
                # positions: instruction address and source line; then the Ir count
                if len(fields) < 3:
                    continue
                addr = int(fields[0], 16)
                cost[addr >> 6] += int(fields[2])
                owner.setdefault(addr >> 6, fn)
    return {k: (v, owner[k]) for k, v in cost.items() if v >= requests}


# The parts of the stack, by the name of the function holding a line (first match wins).
PARTS = [
    ("SHA-256 and HMAC (sha2, hmac, digest)", r"^<*&?(sha2|hmac|digest)\b"),
    ("our crates (mcp_tool_*)", r"mcp_tool"),
    ("serde, serde_json, base64", r"^<*&?(mut )?(serde|base64)"),
    ("hyper, http, axum, tower, httparse, bytes", r"^<*(hyper|http|axum|tower|httparse|bytes|matchit)"),
    ("tokio", r"^<*tokio"),
    ("tracing", r"^<*tracing"),
    ("std, core, alloc, hashbrown", r"^<*(core|alloc|std|hashbrown)\b"),
]


def part_of(fn):
    for name, pattern in PARTS:
        if re.search(pattern, fn or ""):
            return name
    return "libc, other"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("profile")
    ap.add_argument("requests", type=int)
    ap.add_argument("--top", type=int, default=0)
    ap.add_argument("--parts", action="store_true")
    a = ap.parse_args()
    hot = lines_per_request(a.profile, max(a.requests, 1))
    print(f"{len(hot) * 64 / 1024:.0f}")
    if a.top:
        by_fn = collections.Counter(fn for _, fn in hot.values())
        for fn, n in by_fn.most_common(a.top):
            print(f"{n * 64 / 1024:6.1f} KiB  {fn[:140]}")
    if a.parts:
        by_part = collections.Counter(part_of(fn) for _, fn in hot.values())
        for part, n in by_part.most_common():
            print(f"{n * 64 / 1024:6.1f} KiB  {part}")


if __name__ == "__main__":
    main()
