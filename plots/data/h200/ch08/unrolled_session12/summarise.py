#!/usr/bin/env python3
"""Chapter 8, session 12: prints the tables of this folder's JSON (no number typed by hand).
TFLOPS as the executable reports them (real rows only); both orders of a comparison separated by
'/'. With --readme PATH it writes the two tables of chapter 8's NOTEBOOK.md between their markers
(session12-loops, session12-default); with --check PATH it fails if they differ from the JSON.

  python3 plots/data/h200/ch08/unrolled_session12/summarise.py
  python3 plots/data/h200/ch08/unrolled_session12/summarise.py --check chapters/08_grouped_moe/NOTEBOOK.md
"""
import io
import json
import math
import os
import sys
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = ["bal_g4x8192_n4096_k7168", "bal_g8x4096_n7168_k2048",
         "skew_g32_t8192_n4096_k7168", "skew_g32_t8192_n7168_k2048",
         "skew_g32_t65536_n4096_k7168", "skew_g32_t65536_n7168_k2048",
         "masked_g1x1024_n4096_k7168", "masked_g1x1024_n7168_k2048",
         "masked_g2x512_n4096_k7168", "masked_g2x512_n7168_k2048",
         "masked_g4x256_n4096_k7168", "masked_g4x256_n7168_k2048"]


def load(name):
    """{case: {implementation: TFLOPS}} of one benchmark JSON."""
    out = {}
    for b in json.load(open(os.path.join(HERE, name)))["benchmarks"]:
        if "TFLOPS" not in b:
            continue
        impl, case = b["name"].split("/")[:2]
        out.setdefault(case, {})[impl.split(":", 1)[-1]] = b["TFLOPS"]
    return out


def geomean(v):
    return math.exp(sum(map(math.log, v)) / len(v))


def both_orders(files, kernels, base, title):
    runs = [load(f) for f in files]
    short = [k.replace("_promoted_tma", "") for k in kernels]
    print("### " + title + "\n")
    print("| case | " + " | ".join(short) + " |")
    print("|---|" + "---:|" * len(kernels))
    ratios = {k: [] for k in kernels}
    for c in CASES:
        cells = []
        for k in kernels:
            v = [r[c][k] for r in runs if k in r.get(c, {})]
            cells.append(" / ".join("%.0f" % x for x in v) if v else "-")
            if len(v) == len(runs) and all(base in r[c] for r in runs):
                ratios[k].append(sum(v) / sum(r[c][base] for r in runs))
        print("| %s | %s |" % (c, " | ".join(cells)))
    print("| geomean against %s | %s |\n" % (base.replace("_promoted_tma", ""), " | ".join(
        "%.3f (%.3f-%.3f)" % (geomean(ratios[k]), min(ratios[k]), max(ratios[k]))
        if ratios[k] else "-" for k in kernels)))


def report():
    both_orders(["call1_clusters_order1_a5a7f4d.json", "call1_clusters_order2_a5a7f4d.json"],
                ["128x256_s4_c1x1_promoted_tma_b1", "128x256_s4_c1x2_promoted_tma_b1",
                 "256x128_s4_c1x1_promoted_tma_b1", "256x128_s4_c1x2_promoted_tma_b1", "ch07_loop"],
                "128x256_s4_c1x1_promoted_tma_b1",
                "Call 1 (a5a7f4d): 1 x 2 clusters, every kernel on the first loop (the first column was "
                "the default)")

    print("### Call 1: chapter 7's dense kernels on one GEMM of all the balanced cases' rows, each "
          "tile's default loop against the first loop (_loop0)\n")
    dense = load("call1_ch07_dense_loops_a5a7f4d.json")
    for shape, r in dense.items():
        print("| %s | %s |" % (shape, " | ".join("%s %.0f" % (k, v) for k, v in sorted(r.items()))))
    print()

    both_orders(["call2_loops_order1_fdb2c9c.json", "call3_loops_order2_fdb2c9c.json"],
                ["128x256_s4_c1x1_promoted_tma_b1_loop0", "128x256_s4_c1x1_promoted_tma_b1",
                 "256x128_s4_c1x1_promoted_tma_b1", "256x128_s4_c1x2_promoted_tma_b1",
                 "256x128_s3_c1x2_promoted_tma_b4", "ch07_loop"],
                "128x256_s4_c1x1_promoted_tma_b1_loop0",
                "Calls 2 and 3 (fdb2c9c): the unrolled loops (4x on 128 x 256, 8x on 256 x 128) "
                "against the first loop (_loop0, the default until this session)")

    # The new default (call 4) beside DeepGEMM as measured in session 8 (bbb8615, plots/data/h200/
    # ch08/peers_bbb8615.json, which was ch08/peers.json until session 13): NOT a same-run ratio.
    peers = load(os.path.join("..", "peers_bbb8615.json"))
    new = load("call4_default_7b0cfc0.json")
    print("### Call 4 (7b0cfc0): the default kernel of each case, beside DeepGEMM 2.6.1 from session 8's "
          "peer run (bbb8615) -- a cross-session ratio, not a same-run one\n")
    print("| case | ours (default, call 4) | chapter-7 loop (call 4) | DeepGEMM, session 8 | "
          "ours / DeepGEMM (cross-session) |")
    print("|---|---:|---:|---:|---:|")
    for c in CASES:
        p = peers.get(c, {})
        dg = p.get("deepgemm_contiguous", p.get("deepgemm_masked"))
        ours = new[c]["ch08_grouped"]
        loop = new[c].get("ch07_loop")
        print("| %s | %.1f | %s | %.1f | %.3f |" % (c, ours, "%.1f" % loop if loop else "-", dg,
                                                    ours / dg))


def readme_loops():
    runs = [load("call2_loops_order1_fdb2c9c.json"), load("call3_loops_order2_fdb2c9c.json")]
    cols = [("128x256_s4_c1x1_promoted_tma_b1_loop0", "first loop (128x256, the old default)"),
            ("128x256_s4_c1x1_promoted_tma_b1", "128x256, 4x"),
            ("256x128_s4_c1x1_promoted_tma_b1", "256x128, 8x"),
            ("256x128_s4_c1x2_promoted_tma_b1", "256x128 1x2, 8x"),
            ("256x128_s3_c1x2_promoted_tma_b4", "256x128 1x2 s3 b4, 8x"),
            ("ch07_loop", "chapter 7 per expert")]
    base = cols[0][0]
    out = ["| case | " + " | ".join(h for _, h in cols) + " |", "|---|" + "---:|" * len(cols)]
    ratios = {k: [] for k, _ in cols}
    for c in CASES:
        cells = []
        for k, _ in cols:
            v = [r[c][k] for r in runs if k in r.get(c, {})]
            cells.append(" / ".join("%.0f" % x for x in v) if v else "-")
            if len(v) == len(runs):
                ratios[k].append(sum(v) / sum(r[c][base] for r in runs))
        out.append("| %s | %s |" % (c, " | ".join(cells)))
    out.append("| geomean against the first loop | " + " | ".join(
        "1.000" if k == base else "%.3f (%.3f-%.3f)" % (geomean(ratios[k]), min(ratios[k]),
                                                        max(ratios[k])) for k, _ in cols) + " |")
    return "\n".join(out)


def readme_default():
    peers = load(os.path.join("..", "peers_bbb8615.json"))
    new = load("call4_default_7b0cfc0.json")
    out = ["| case | ours (default, call 4) | chapter-7 loop (call 4) | DeepGEMM, session 8 | "
           "ours / DeepGEMM (cross-session) |", "|---|---:|---:|---:|---:|"]
    for c in CASES:
        p = peers.get(c, {})
        dg = p.get("deepgemm_contiguous", p.get("deepgemm_masked"))
        ours = new[c]["ch08_grouped"]
        loop = new[c].get("ch07_loop")
        out.append("| %s | %.1f | %s | %.1f | %.3f |" % (c, ours, "%.1f" % loop if loop else "-",
                                                         dg, ours / dg))
    return "\n".join(out)


def sections(text):
    for name, body in (("session12-loops", readme_loops()), ("session12-default", readme_default())):
        begin, end = "<!-- %s:begin -->\n" % name, "<!-- %s:end -->" % name
        a = text.index(begin) + len(begin)
        b = text.index(end)
        text = text[:a] + body + "\n" + text[b:]
    return text


if len(sys.argv) == 3 and sys.argv[1] in ("--readme", "--check"):
    old = open(sys.argv[2]).read()
    new_text = sections(old)
    if sys.argv[1] == "--readme":
        open(sys.argv[2], "w").write(new_text)
    elif new_text != old:
        sys.exit("%s: the session-12 tables differ from the JSON (run with --readme)" % sys.argv[2])
else:
    report()
