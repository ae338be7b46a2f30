#!/usr/bin/env python3
"""Where a request's wall time goes: inclusive time per request under chosen frames, from
`perf script -F ip,sym` output of `perf record -g` (frame pointers) on one server.

    wall_profile.py STACKS REQUESTS SECONDS HZ
    perf script -F trace,ip,sym | wall_profile.py --moves REQUESTS

STACKS is the `perf script` text (one sample per blank-line separated block, leaf first);
REQUESTS the requests the server answered while perf sampled for SECONDS at HZ samples per
second. Each sample stands for 1/HZ s of the server's CPU. For every frame in FRAMES below
(a regular expression on the symbol), it prints the samples whose stack holds it, as µs
per request, and the same for each direct callee of that frame (the frame just below its
outermost occurrence): an inclusive call tree cut to the frames named. Samples in the
kernel (a stack through a syscall entry) and in user space are totalled first.

Sampling with call graphs slows the server (it walks every stack), so the µs are those of
the slowed server: read them as shares. Used by scripts/wall_profile.sh.

With --moves, the input is a uprobe on libc's memmove recording its length (`len=N`) with
call graphs: it prints the calls and bytes per request, and the bytes by calling function.
"""

import collections
import re
import sys

# (label, pattern, depth): the frames reported, in order; depth indents the label.
FRAMES = [
    ("handle_post (the HTTP handler)", r"transport::http::post::handle_post::\{\{closure\}\}$", 0),
    # the dispatch future runs under the panic guard, whose poll may hold it inlined
    ("dispatch (Server::method, under the panic guard)",
     r"server::Server::method::\{\{closure\}\}$|guard::CatchPanic<F> as [^ ]*Future>::poll$", 1),
    ("Server::call", r"Server>::call::\{\{closure\}\}$", 2),
    ("Engine::conclude (round 1: the seal)", r"rounds::Engine::conclude$", 3),
    ("Engine::suspend", r"rounds::Engine::suspend$", 4),
    ("Engine::prepare (round 2: opening the state)", r"rounds::Engine::prepare$", 3),
    ("Sealer::open_parsed", r"seal::sealer::Sealer::open_parsed$", 4),
    ("the tool's step", r"(Tool for [^<>]*>|as mcp_tool_runtime::tool::Tool>)::step::\{\{closure\}\}$", 3),
    ("hyper reading a request head", r"Conn<I,B,T>::poll_read_head$", 0),
]
SYSCALL = ("do_syscall", "entry_SYSCALL", "__x64_sys")


def read_stacks(path):
    stacks, cur = [], []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line:
                if cur:
                    stacks.append(cur)
                    cur = []
                continue
            parts = line.split(None, 1)
            cur.append(re.sub(r"\+0x[0-9a-f]+$", "", parts[1]) if len(parts) > 1 else "?")
    if cur:
        stacks.append(cur)
    return stacks


def moves(requests):
    """Calls and bytes of memmove per request, by the function that called it."""
    if requests <= 0:
        sys.exit("no requests were answered")
    calls, total = 0, 0
    by_caller, calls_by = collections.Counter(), collections.Counter()
    length, frames = None, []

    def flush():
        nonlocal calls, total
        if length is None:
            return
        caller = frames[1] if len(frames) > 1 else "?"
        calls += 1
        total += length
        by_caller[caller] += length
        calls_by[caller] += 1

    for line in sys.stdin:
        m = re.search(r"\blen=(\d+)", line)
        if m:
            flush()
            length, frames = int(m.group(1)), []
        elif line.strip() and length is not None:
            parts = line.split(None, 1)
            frames.append(re.sub(r"\+0x[0-9a-f]+$", "", parts[1].strip()) if len(parts) > 1 else "?")
    flush()
    print(f"{calls / requests:.0f} calls and {total / requests:,.0f} bytes per request")
    print()
    print("| caller | bytes per request | calls per request |")
    print("|---|---|---|")
    for caller, n in by_caller.most_common(12):
        print(f"| {short(caller)} | {n / requests:,.0f} | {calls_by[caller] / requests:.1f} |")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--moves":
        return moves(int(sys.argv[2]))
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    path, requests, seconds, hz = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
    if requests <= 0:
        sys.exit("no requests were answered")
    stacks = read_stacks(path)
    per = 1e6 / hz / requests  # µs per request of one sample

    kernel = sum(1 for st in stacks if any(s.startswith(SYSCALL) for s in st))
    print(f"{len(stacks)} samples over {seconds:.1f} s, {requests} requests: "
          f"{len(stacks) * per:.2f} µs per request under perf "
          f"(kernel {kernel * per:.2f}, user space {(len(stacks) - kernel) * per:.2f})")
    print()
    print("| frame | µs per request (under perf) | largest direct callees, µs |")
    print("|---|---|---|")
    for label, pat, depth in FRAMES:
        rx = re.compile(pat)
        inside = 0
        callees = collections.Counter()
        for st in stacks:
            hits = [i for i, s in enumerate(st) if rx.search(s)]
            if not hits:
                continue
            inside += 1
            outer = max(hits)
            if outer > 0:
                callees[short(st[outer - 1])] += 1
        top = ", ".join(f"{name} {n * per:.2f}" for name, n in callees.most_common(6))
        # no sample: not run in this round, or inlined into its caller by this build
        took = f"{inside * per:.2f}" if inside else "no sample (not run, or inlined)"
        print(f"| {'– ' * depth}{label} | {took} | {top} |")


def short(sym):
    """A symbol without generic arguments and crate paths, to fit a table cell:
    `<a::B<T> as c::D>::poll` is `B::poll`, `a::b::C::f::{{closure}}` is `C::f`,
    `a::m::<impl a::S>::f` is `S::f`, `core::ptr::drop_in_place<a::T>` is `drop T`."""
    s = sym.replace("::{{closure}}", "")
    m = re.match(r"^core::ptr::drop_in_place<(.*)>$", s)
    if m:
        return "drop " + short(m.group(1))
    s = re.sub(r"<impl [^<>]* for ([^<>]*)>", lambda m: m.group(1).split("::")[-1], s)
    s = re.sub(r"<impl ([^<>]*)>", lambda m: m.group(1).split("::")[-1], s)
    m = re.match(r"^<(.*) as .*>::([A-Za-z_0-9]+)$", s)
    if m:
        s = m.group(1) + "::" + m.group(2)
    for _ in range(3):
        s = re.sub(r"<[^<>]*>", "", s)
    parts = s.split("::")
    return "::".join(parts[-2:]) if len(parts) > 1 else s


if __name__ == "__main__":
    main()
