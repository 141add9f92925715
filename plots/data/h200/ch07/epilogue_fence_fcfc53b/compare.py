#!/usr/bin/env python3
"""Session 21, call 1: the engine's epilogue with one fence, one barrier and one bulk group per tile
where every unit has its own staging buffer (fcfc53b, "new") against 41ad782's kernels ("old"):
chapters 6, 7 and 8's executables run in the order old, new, new, old in one GPU call (call1.log).
Reads the call's archive (default: ab_fcfc53b.txz here); prints one markdown table per chapter:
each side's times (us, the JSON's real_time, per run), new / old, and the same ratio of the peer
timed in the same runs (cuBLASLt for chapter 6, cuBLASLt block-scaled for chapter 7, chapter 7's
loop per group, ch07_loop, for chapter 8). Usage: compare.py [ARCHIVE]."""
import io, json, os, re, sys, tarfile

here = os.path.dirname(os.path.abspath(__file__))
runs = {}
with tarfile.open(sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "ab_fcfc53b.txz")) as tar:
    for m in tar.getmembers():
        g = re.search(r"(ch0[678])_(\d)_(old|new)\.json$", m.name)
        if not g:
            continue
        d = json.load(io.TextIOWrapper(tar.extractfile(m)))
        runs[(g[1], int(g[2]), g[3])] = {
            b["name"].split("/iterations")[0]: b["real_time"] for b in d["benchmarks"] if "real_time" in b}


def side(ch, name, v):
    return [runs[k][name] for k in sorted(runs) if k[0] == ch and k[2] == v and name in runs[k]]


def mean(v):
    return sum(v) / len(v)


for ch, pairs in [("ch06", [("ch06_fast", "cublaslt_per_tensor"),
                             ("ch06_promoted", "cublaslt_per_tensor_promoted")]),
                  ("ch07", [("ch07_block_scaled", "cublaslt_block_scaled")]),
                  ("ch08", [("ch08_grouped", "ch07_loop")])]:
    rows = []
    for impl, peer in pairs:
        names = sorted({n.split("/", 1)[1] for k, r in runs.items() if k[0] == ch for n in r
                        if n.startswith(impl + "/")})
        for s in names:
            o, n = side(ch, f"{impl}/{s}", "old"), side(ch, f"{impl}/{s}", "new")
            po, pn = side(ch, f"{peer}/{s}", "old"), side(ch, f"{peer}/{s}", "new")
            if len(o) < 2 or len(n) < 2:
                continue
            pr = mean(pn) / mean(po) if po and pn else float("nan")
            rows.append(f"| {s} | {impl} | {', '.join('%.1f' % x for x in o)} | "
                        f"{', '.join('%.1f' % x for x in n)} | {mean(n) / mean(o):.4f} | {peer} {pr:.4f} |")
    if rows:
        print(f"| {ch} shape | impl | old (runs 1, 4) | new (runs 2, 3) | new / old | peer new / old |")
        print("|---|---|---|---|---:|---:|")
        print("\n".join(rows))
        print()
