#!/usr/bin/env python3
"""Session 20, call 1: chapters 7 and 8's executables with the B scales staged by the producer
(c9a1097, "new") against the consumers' B-scale stream (4aa7ef8's kernels, "old"), run in the order
old, new, new, old in one GPU call (call1_c9a1097.log). Reads ab_c9a1097.txz; prints one markdown
table per chapter: each side's times (us, the JSON's real_time) and new / old, beside the same
ratio of the peer timed in the same runs (cuBLASLt block-scaled for chapter 7; chapter 7's loop
per group, ch07_loop, for chapter 8). Usage: compare.py [ARCHIVE] (default: ab_c9a1097.txz here;
session 20's call 4 too: compare.py ../stream_prefetch_899aedf/ab_899aedf.txz)."""
import io, json, os, re, sys, tarfile

here = os.path.dirname(os.path.abspath(__file__))
runs = {}
with tarfile.open(sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "ab_c9a1097.txz")) as tar:
    for m in tar.getmembers():
        g = re.search(r"(ch0[78])_(\d)_(old|new)\.json$", m.name)
        if not g:
            continue
        d = json.load(io.TextIOWrapper(tar.extractfile(m)))
        runs[(g[1], int(g[2]), g[3])] = {
            b["name"].split("/iterations")[0]: b["real_time"] for b in d["benchmarks"] if "real_time" in b}


def side(ch, name, v):
    return [runs[k][name] for k in sorted(runs) if k[0] == ch and k[2] == v and name in runs[k]]


for ch, impl, peer in [("ch07", "ch07_block_scaled", "cublaslt_block_scaled"),
                       ("ch08", "ch08_grouped", "ch07_loop")]:
    names = sorted({n.split("/", 1)[1] for k, r in runs.items() if k[0] == ch for n in r
                    if n.startswith(impl + "/")})
    print(f"| {ch} shape | old (runs 1, 4) | new (runs 2, 3) | new / old | {peer} new / old |")
    print("|---|---|---|---:|---:|")
    for s in names:
        o, n = side(ch, f"{impl}/{s}", "old"), side(ch, f"{impl}/{s}", "new")
        po, pn = side(ch, f"{peer}/{s}", "old"), side(ch, f"{peer}/{s}", "new")
        if len(o) < 2 or len(n) < 2:
            continue
        r = (sum(n) / len(n)) / (sum(o) / len(o))
        pr = (sum(pn) / len(pn)) / (sum(po) / len(po)) if po and pn else float("nan")
        print(f"| {s} | {', '.join('%.1f' % x for x in o)} | {', '.join('%.1f' % x for x in n)} "
              f"| {r:.4f} | {pr:.4f} |")
    print()
