#!/usr/bin/env python3
"""Import graph of src/: which module names which (`crate::a::b`, `super::x`), and its cycles.

Usage: python3 scripts/import-graph.py [--depth N] [--edges] [--check]

A module is a path under src/ cut to N components (default 1: `ingest`, `worker`, …; 2 gives
`mcp::tools`, `retrieval::search`). Test modules (`#[cfg(test)]` files named *tests*.rs or under a
tests/ folder) are left out: test code may reach across rooms. Prints every cycle between
modules (strongly connected components with more than one member) and exits 1 when there is one.
`--check` (what CI runs) also reads the layer table of `src/lib.rs` and exits 1 when a top-level
module is missing from it or imports a module of a higher layer. `src/bin` (the hook binary) is a
leaf over the library and is not in the table.
"""
import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"


def module_of(path: Path) -> list[str]:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return parts


def is_test_file(path: Path) -> bool:
    name = path.stem
    return name == "tests" or name.endswith("_tests") or "tests" in path.relative_to(SRC).parts[:-1]


def strip_comments(text: str) -> str:
    # Doc comments stay: a `crate::x` link in them is a path rustdoc resolves, so it is an edge.
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(
        line if line.lstrip().startswith(("//!", "///")) else line.split("//")[0] for line in text.splitlines()
    )


def strip_test_blocks(text: str) -> str:
    # Drop `#[cfg(test)] mod tests { … }` blocks (brace-matched).
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", text):
        if m.start() < i:
            continue
        out.append(text[i : m.start()])
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        i = j
    out.append(text[i:])
    return "".join(out)


def references(path: Path, text: str) -> set[tuple[str, ...]]:
    here = module_of(path)
    refs = set()
    for m in re.finditer(r"\bcrate((?:::\w+)+)", text):
        refs.add(tuple(m.group(1).strip(":").split("::")))
    for m in re.finditer(r"\b((?:super::)+)(\w+(?:::\w+)*)", text):
        ups = m.group(1).count("super::")
        # In `a/b.rs` and `a/b/mod.rs` alike, `super` is `a`.
        base = here[: max(len(here) - ups, 0)]
        refs.add(tuple(base) + tuple(m.group(2).split("::")))
    return refs


def main() -> int:
    depth = 1
    if "--depth" in sys.argv:
        depth = int(sys.argv[sys.argv.index("--depth") + 1])
    modules = {}
    for path in SRC.rglob("*.rs"):
        if is_test_file(path):
            continue
        mod = module_of(path)
        if not mod:
            continue
        modules[path] = mod
    known = {tuple(m[:depth]) for m in modules.values()}
    edges: dict[tuple, set] = {k: set() for k in known}
    for path, mod in modules.items():
        src = tuple(mod[:depth])
        text = strip_test_blocks(strip_comments(path.read_text()))
        for ref in references(path, text):
            # The longest prefix of the path that is one of our modules (cut to the depth).
            target = next((tuple(ref[:n]) for n in range(min(depth, len(ref)), 0, -1) if tuple(ref[:n]) in known), None)
            if target is not None and target != src:
                edges[src].add(target)
    if "--edges" in sys.argv:
        for s in sorted(edges):
            print("::".join(s), "->", ", ".join(sorted("::".join(t) for t in edges[s])))
    # Tarjan's strongly connected components.
    index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
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
            if len(comp) > 1:
                sccs.append(comp)

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    for comp in sccs:
        names = sorted("::".join(c) for c in comp)
        print("cycle:", " ↔ ".join(names))
        for a in comp:
            for b in sorted(edges[a]):
                if b in comp:
                    print("   ", "::".join(a), "->", "::".join(b))
    if not sccs:
        print(f"no cycles between modules at depth {depth} ({len(known)} modules)")
    bad = bool(sccs)
    if "--check" in sys.argv and depth == 1:
        layer = layers()
        for (m,) in sorted(known):
            if m != "bin" and m not in layer:
                print(f"not in the layer table of src/lib.rs: {m}")
                bad = True
        for (a,), targets in sorted(edges.items()):
            for (b,) in sorted(targets):
                if a in layer and b in layer and layer[b] > layer[a]:
                    print(f"upward edge: {a} (layer {layer[a]}) -> {b} (layer {layer[b]})")
                    bad = True
        if not bad:
            print(f"every edge points down the {max(layer.values())} layers of src/lib.rs")
    return 1 if bad else 0


def layers() -> dict[str, int]:
    """Module → layer number, from the `//! | **N name** |` rows and `//! | [`module`] |` rows of lib.rs."""
    out, current = {}, None
    for line in (SRC / "lib.rs").read_text().splitlines():
        m = re.match(r"//! \| \*\*(\d+) ", line)
        if m:
            current = int(m.group(1))
            continue
        m = re.match(r"//! \| \[`(\w+)`\] \|", line)
        if m and current is not None:
            out[m.group(1)] = current
    return out


if __name__ == "__main__":
    sys.exit(main())
