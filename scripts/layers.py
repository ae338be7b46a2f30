#!/usr/bin/env python3
"""Import graph of mcp-tool-runtime: fails on a module cycle or an import against the layers.

Usage: scripts/layers.py [--graph] [--crate-dir mcp-tool-runtime]

Also checked: the macro crate's `analyse/` names no runtime path (`rt.rs` does). And, for the
runtime and the macro crate: no source file over MAX_LINES lines
(test-only files `tests.rs` / `fuzz.rs` aside), and every module opens with a `//!` line
saying what it owns.

A *module* here is a source file (`src/a/b.rs` or `src/a/b/mod.rs` is `a::b`); inline
`mod x { .. }` blocks count as part of their file, and `#[cfg(test)]` items are left out.
An *import* is any path into the crate written in that file: `use crate::..`,
`use super::..`, `use child::..`, and the same paths inline in code. A path is followed
through re-exports (`pub use`, `pub(crate) use`) to the file that defines the item, so a
facade such as `lib.rs` or a `mod.rs` that only re-exports creates no edge of its own.

Every module belongs to a layer (LAYERS below, bottom up). A module may import from its
own layer and from the layers below it; an import from a higher layer is a violation.
Within a layer the modules must still form no cycle. The script prints the figures
(modules, edges, cycles, violations, largest files) and exits non-zero on any cycle,
violation, or module that no layer claims.
"""

import os
import re
import sys
from collections import defaultdict

# Bottom up. A module path belongs to the first entry whose prefix matches it
# (`a` claims `a` and `a::*`); the crate root (`""`) is the public facade.
LAYERS = [
    ("L0 wire", ["protocol", "principal"]),
    ("L1 support", ["changes", "error", "host", "schema", "seal", "ledger", "notify", "reconnect", "state", "strings", "sync", "telemetry", "throttle"]),
    ("L2 authoring", ["requests", "context", "tool", "flow", "prompt", "resource", "tasks", "store", "__private"]),
    ("L3 engine", ["code", "rounds", "legacy"]),
    ("L4 server", ["server"]),
    ("L5 transports", ["transport"]),
    ("facade", [""]),
]

# Sub-order inside L2 (authoring), as ARCHITECTURE.md draws it: each group may import only
# from its own group and the ones before it.
SUB_ORDER = {
    "L2 authoring": [
        ["requests"],
        ["context"],
        ["tool", "flow", "prompt", "resource", "tasks"],
        ["store"],
        ["__private"],
    ],
    "L3 engine": [["code"], ["rounds", "legacy"]],
}

# Pairs of modules that must not import each other, either way (siblings of one layer that
# stay independent): the stateless round engine and legacy sessions.
APART = [("rounds", "legacy")]

MAX_LINES = 800

ITEM_RE = re.compile(
    r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+|unsafe\s+|const\s+|extern\s+\"C\"\s+)*"
    r"(struct|enum|trait|fn|type|const|static|union|mod)\s+(r#)?([A-Za-z_][A-Za-z0-9_]*)",
    re.M,
)
MACRO_RE = re.compile(r"^\s*macro_rules!\s*([A-Za-z_][A-Za-z0-9_]*)", re.M)
USE_RE = re.compile(r"(?<![A-Za-z0-9_])(pub(?:\s*\([^)]*\))?\s+)?use\s+([^;]+);", re.S)
PATH_RE = re.compile(r"(?<![A-Za-z0-9_:])((?:crate|super|self|[a-z_][a-z0-9_]*)(?:\s*::\s*[A-Za-z_][A-Za-z0-9_]*)+)")


def strip_comments_and_strings(src):
    """Blank out comments, string and char literals (keeps line structure)."""
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', src[i:i + 10]) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            m = re.match(r'r(#*)"', src[i:])
            end = '"' + m.group(1)
            j = src.find(end, i + len(m.group(0)))
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            j += 1
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c == "'":
            m = re.match(r"'(\\.[^']*|[^'\\])'", src[i:])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:  # a lifetime
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def strip_cfg_test(src):
    """Remove every item carrying `#[cfg(test)]` (brace- or semicolon-terminated)."""
    while True:
        m = re.search(r"#\[cfg\(test\)\]", src)
        if not m:
            return src
        j = m.end()
        depth = 0
        while j < len(src):
            if src[j] == "{":
                depth += 1
            elif src[j] == "}":
                depth -= 1
                if depth == 0:
                    j += 1
                    break
            elif src[j] == ";" and depth == 0:
                j += 1
                break
            j += 1
        src = src[: m.start()] + re.sub(r"[^\n]", " ", src[m.start():j]) + src[j:]


def top_level(src):
    """Only the text at brace depth 0 (items of the file itself, not of inline modules)."""
    out, depth = [], 0
    for c in src:
        if c == "{":
            depth += 1
            out.append(" ")
        elif c == "}":
            depth -= 1
            out.append(" ")
        else:
            out.append(c if depth == 0 else ("\n" if c == "\n" else " "))
    return "".join(out)


def parse_use(body):
    """A use tree -> [(path segments, alias)]; alias is the name it binds, "*" for a glob."""
    toks = re.findall(r"::|[{},*]|[A-Za-z_][A-Za-z0-9_]*", body)
    pos = 0

    def tree(prefix):
        nonlocal pos
        segs = list(prefix)
        while pos < len(toks):
            t = toks[pos]
            if t == "{":
                pos += 1
                out = []
                while pos < len(toks) and toks[pos] != "}":
                    out += tree(segs)
                    if pos < len(toks) and toks[pos] == ",":
                        pos += 1
                pos += 1  # the closing brace
                return out
            if t == "*":
                pos += 1
                return [(segs, "*")]
            if t == "::":
                pos += 1
                continue
            if t in (",", "}"):
                break
            pos += 1
            if t == "as" and pos < len(toks):
                alias = toks[pos]
                pos += 1
                return [(segs, alias)]
            if t == "self":
                if not segs or segs[-1] in ("crate", "super", "self"):
                    segs.append(t)
                    continue
                # `a::{self}` binds `a`
                if pos < len(toks) and toks[pos] == "as":
                    continue
                return [(segs, segs[-1])]
            segs.append(t)
        if pos < len(toks) and toks[pos] == "as":
            pos += 1
            alias = toks[pos]
            pos += 1
            return [(segs, alias)]
        return [(segs, segs[-1] if segs else None)]

    return tree([])


class Module:
    def __init__(self, path, file, text):
        self.path = path  # tuple of segments
        self.file = file
        self.raw_lines = text.count("\n") + 1
        clean = strip_cfg_test(strip_comments_and_strings(text))
        self.clean = clean
        top = top_level(clean)
        self.items = {m.group(3) for m in ITEM_RE.finditer(top)} | set(MACRO_RE.findall(top))
        self.reexports = {}  # alias -> absolute path (list) or ('*', path)
        self.globs = []
        self.uses = []  # (absolute path, line)
        self.use_spans = []
        self.private_aliases = {}

    def name(self):
        return "::".join(self.path) or "crate"


def load(crate_dir):
    src = os.path.join(crate_dir, "src")
    mods = {}
    for dirpath, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            full = os.path.join(dirpath, f)
            rel = os.path.relpath(full, src)[:-3].split(os.sep)
            if rel == ["lib"]:
                path = ()
            elif rel[-1] == "mod":
                path = tuple(rel[:-1])
            else:
                path = tuple(rel)
            with open(full, encoding="utf-8") as fh:
                mods[path] = Module(path, os.path.relpath(full, crate_dir), fh.read())
    return mods


def absolutize(mods, cur, segs):
    """Turn a written path into an absolute one (list of segments), or None if external."""
    if not segs:
        return None
    segs = list(segs)
    if segs[0] == "crate":
        return segs[1:]
    base = list(cur)
    if segs[0] in ("self", "super"):
        while segs and segs[0] in ("self", "super"):
            if segs[0] == "super":
                if not base:
                    return None
                base = base[:-1]
            segs = segs[1:]
        return base + segs
    if tuple(base + [segs[0]]) in mods:  # a child module, by the uniform path rules
        return base + segs
    return None


def resolve(mods, segs, depth=0, hops=None):
    """Absolute path -> (the file module defining its first resolvable item, found?).
    When nothing defines it (an enum variant, an inline module, a macro), the deepest file
    module on the path is returned with `found` false. `hops`, when given, collects the
    modules whose re-export (`pub use`) the path went through."""
    cur = ()
    i = 0
    while i < len(segs):
        s = segs[i]
        if cur + (s,) in mods:
            cur = cur + (s,)
            i += 1
            continue
        m = mods[cur]
        if s in m.items:
            return cur, True
        if depth < 20 and s in m.reexports:
            if hops is not None:
                hops.append(cur)
            return resolve(mods, list(m.reexports[s]) + segs[i + 1:], depth + 1, hops)
        if depth < 20:
            for g in m.globs:
                inner = [] if hops is not None else None
                r, found = resolve(mods, list(g) + segs[i:], depth + 1, inner)
                if found:
                    if hops is not None:
                        hops.append(cur)
                        hops.extend(inner)
                    return r, True
        return cur, False
    return cur, True


def through_reexports(mods):
    """Imports that name an item through another layer's re-export: (file, line, importer,
    the re-exporting module, the defining module). The crate root (the public facade) and a
    module re-exporting its own descendants' items are not counted."""
    out = []
    for m in mods.values():
        for absolute, line in m.uses:
            hops = []
            target, found = resolve(mods, absolute, hops=hops)
            if not found:
                continue
            for h in hops:
                if h == () or target[: len(h)] == h or m.path[: len(h)] == h:
                    continue
                lh, lt = layer_of(h), layer_of(target)
                if lh and lt and lh[2] != lt[2]:
                    out.append((m.file, line, m.path, h, target))
    return out


def analyse(mods):
    # pass 1: use statements, re-exports
    for m in mods.values():
        for um in USE_RE.finditer(m.clean):
            is_pub = um.group(1) is not None
            line = m.clean.count("\n", 0, um.start()) + 1
            m.use_spans.append((um.start(), um.end()))
            for path, alias in parse_use(um.group(2)):
                absolute = absolutize(mods, m.path, path)
                if absolute is None:
                    continue
                if alias == "*":
                    if is_pub:  # a glob re-export: an alias for everything there
                        m.globs.append(absolute)
                    else:
                        m.uses.append((absolute, line))
                    continue
                if is_pub and alias:
                    m.reexports[alias] = absolute
                else:
                    m.uses.append((absolute, line))
    # pass 2: inline paths outside use statements
    for m in mods.values():
        text = m.clean
        for a, b in m.use_spans:
            text = text[:a] + re.sub(r"[^\n]", " ", text[a:b]) + text[b:]
        for pm in PATH_RE.finditer(text):
            segs = [s.strip() for s in pm.group(1).split("::")]
            absolute = absolutize(mods, m.path, segs)
            if absolute is None:
                continue
            line = text.count("\n", 0, pm.start()) + 1
            m.uses.append((absolute, line))
    edges = defaultdict(dict)  # from -> to -> first line
    for m in mods.values():
        for absolute, line in m.uses:
            target, _ = resolve(mods, absolute)
            if target != m.path and target in mods:
                edges[m.path].setdefault(target, line)
    return edges


def layer_of(path):
    name = "::".join(path)
    for rank, (label, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if name == p or (p and name.startswith(p + "::")):
                sub = 0
                for k, group in enumerate(SUB_ORDER.get(label, [])):
                    if any(name == g or name.startswith(g + "::") for g in group):
                        sub = k
                return rank, sub, label
    return None


def sccs(nodes, edges):
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    sys.setrecursionlimit(10000)

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(comp)

    for v in sorted(nodes):
        if v not in index:
            strong(v)
    return out


def self_test():
    """The checker on a small crate made for the purpose: a clean one passes; a cycle, an
    import against the layers, an unclaimed module and a re-export facade are told apart."""
    import subprocess
    import tempfile

    def run(files):
        with tempfile.TemporaryDirectory() as d:
            for rel, text in files.items():
                full = os.path.join(d, "src", rel)
                os.makedirs(os.path.dirname(full), exist_ok=True)
                with open(full, "w", encoding="utf-8") as fh:
                    fh.write("//! test module\n" + text)
            os.makedirs(os.path.join(d, "mcp-tool-macros", "src"), exist_ok=True)
            out = subprocess.run(
                [sys.executable, os.path.abspath(__file__), "--crate-dir", d, "--root", d],
                capture_output=True, text=True,
            )
            return out.returncode, out.stdout

    base = {
        "lib.rs": "pub mod protocol;\npub mod seal;\npub mod server;\npub use server::Server;\n",
        "protocol/mod.rs": "mod jsonrpc;\npub use jsonrpc::*;\n",
        "protocol/jsonrpc.rs": "pub struct Message;\n",
        "seal/mod.rs": "mod sealer;\npub use sealer::Sealer;\n",
        "seal/sealer.rs": "use crate::protocol::Message;\npub struct Sealer(Message);\n",
        "server/mod.rs": "use crate::seal::Sealer;\npub struct Server(Sealer);\n",
    }
    code, out = run(base)
    assert code == 0 and "0 cycles, 0 imports against" in out, out
    bad = dict(base)
    bad["protocol/jsonrpc.rs"] = "use crate::Server;\npub struct Message;\n"
    code, out = run(bad)
    assert code != 0 and "import against the layers: src/protocol/jsonrpc.rs:2" in out, out
    assert "import cycle" in out, out
    bad = dict(base)
    bad["seal/other.rs"] = "use super::Sealer;\n"
    bad["seal/mod.rs"] = "mod other;\nmod sealer;\npub use sealer::Sealer;\nfn f() { other::g() }\n"
    bad["seal/sealer.rs"] = "use super::other;\npub struct Sealer;\n"
    code, out = run(bad)
    assert code != 0 and "import cycle (2 modules): seal::other, seal::sealer" in out, out
    bad = dict(base)
    bad["seal/mod.rs"] = "mod sealer;\npub use sealer::Sealer;\npub use crate::protocol::Message;\n"
    bad["server/mod.rs"] = "use crate::seal::{Message, Sealer};\npub struct Server(Sealer, Message);\n"
    code, out = run(bad)
    assert code != 0 and "import through another layer's re-export: src/server/mod.rs:2" in out, out
    bad = dict(base)
    bad["stray.rs"] = ""
    bad["lib.rs"] = base["lib.rs"] + "mod stray;\n"
    code, out = run(bad)
    assert code != 0 and "module without a layer: stray" in out, out
    print("self-test passed")
    return 0


def main():
    args = sys.argv[1:]
    if "--self-test" in args:
        return self_test()
    crate_dir = "mcp-tool-runtime"
    if "--crate-dir" in args:
        crate_dir = args[args.index("--crate-dir") + 1]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if "--root" in args:
        root = args[args.index("--root") + 1]
    if not os.path.isabs(crate_dir):
        crate_dir = os.path.join(root, crate_dir)
    mods = load(crate_dir)
    edges = analyse(mods)
    name = lambda p: "::".join(p) or "crate"

    failures = 0
    unclaimed = [p for p in mods if layer_of(p) is None]
    for p in sorted(unclaimed):
        print(f"module without a layer: {name(p)} ({mods[p].file}): add it to LAYERS in {sys.argv[0]}")
        failures += 1

    cycles = [sorted(c) for c in sccs(list(mods), edges) if len(c) > 1]
    for c in cycles:
        print(f"import cycle ({len(c)} modules): " + ", ".join(name(p) for p in c))
        members = set(c)
        for a in c:
            for b, line in sorted(edges.get(a, {}).items()):
                if b in members:
                    print(f"    {mods[a].file}:{line} -> {name(b)}")
        failures += 1

    violations = []
    for a, targets in edges.items():
        la = layer_of(a)
        for b, line in targets.items():
            lb = layer_of(b)
            if la is None or lb is None:
                continue
            if (lb[0], lb[1]) > (la[0], la[1]):
                violations.append((mods[a].file, line, name(a), la[2], name(b), lb[2]))
    def under(path, prefix):
        name = "::".join(path)
        return name == prefix or name.startswith(prefix + "::")

    for a, targets in edges.items():
        for b, line in targets.items():
            for x, y in APART:
                if (under(a, x) and under(b, y)) or (under(a, y) and under(b, x)):
                    violations.append((mods[a].file, line, name(a), "kept apart", name(b), "kept apart"))
    for f, line, a, la, b, lb in sorted(violations):
        print(f"import against the layers: {f}:{line}: {a} ({la}) -> {b} ({lb})")
    failures += len(violations)

    # An import names an item where it is defined, not through another layer's re-export.
    detours = sorted(set(through_reexports(mods)))
    for f, line, a, h, t in detours:
        print(
            f"import through another layer's re-export: {f}:{line}: {name(a)} takes an item of "
            f"{name(t)} ({layer_of(t)[2]}) through {name(h)} ({layer_of(h)[2]}): import it from {name(t)}"
        )
    failures += len(detours)

    # No source file of the runtime or the macro crate over MAX_LINES (test modules aside).
    for crate in (crate_dir, os.path.join(root, "mcp-tool-macros")):
        for dirpath, _, files in os.walk(os.path.join(crate, "src")):
            for f in files:
                if not f.endswith(".rs") or f in ("tests.rs", "fuzz.rs"):
                    continue
                full = os.path.join(dirpath, f)
                with open(full, encoding="utf-8") as fh:
                    n = sum(1 for _ in fh)
                if n > MAX_LINES:
                    print(f"file over {MAX_LINES} lines: {os.path.relpath(full, root)} ({n}): split it by concern")
                    failures += 1
                with open(full, encoding="utf-8") as fh:
                    first = fh.readline()
                if not first.startswith(("//!", "#![doc = include_str!")):
                    print(f"module without a first doc line (//! what it owns): {os.path.relpath(full, root)}")
                    failures += 1

    # The macro's analysis yields data: the runtime's path is written by `rt.rs` and expand/.
    analyse_dir = os.path.join(root, "mcp-tool-macros", "src", "analyse")
    for dirpath, _, files in os.walk(analyse_dir):
        for f in files:
            full = os.path.join(dirpath, f)
            with open(full, encoding="utf-8") as fh:
                for n, line in enumerate(fh, 1):
                    if "mcp_tool_runtime" in line or "__private" in line:
                        print(f"runtime path in the macro's analysis: {os.path.relpath(full, root)}:{n}: use crate::rt")
                        failures += 1

    n_edges = sum(len(t) for t in edges.values())
    largest = sorted(((m.raw_lines, m.file) for m in mods.values()), reverse=True)[:5]
    print(
        f"{len(mods)} modules, {n_edges} imports between them, {len(cycles)} cycles, "
        f"{len(violations)} imports against the layers, {len(detours)} through another layer's re-export"
    )
    print("largest files: " + ", ".join(f"{f} ({n})" for n, f in largest))
    if "--graph" in args:
        for a in sorted(edges):
            print(f"{name(a)} -> " + ", ".join(sorted(name(b) for b in edges[a])))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
