#!/usr/bin/env python3
"""Chapter 6's ping-pong kernels beside the cooperative ones, timed interleaved (binaries 9a3830e,
kernels as 9c02c6b's; chapter 6's --kernels mode, session 5 call 7): same-tile ratios and, per
shape, the best cooperative against the best ping-pong kernel in fast mode, both against cuBLASLt.

  python3 plots/data/h200/ch06/pingpong_9c02c6b/interleaved_9a3830e/summarise.py
"""
import json
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
PAIRS = [("128x128_s6_c1x1_fast_tma_b2_pp", "128x128_s6_c1x1_fast_tma_b2"),
         ("128x128_s6_c2x1_fast_tma_b2_pp", "128x128_s6_c2x1_fast_tma_b2"),
         ("128x192_s4_c1x1_fast_tma_b2_pp", "128x192_s4_c1x1_fast_tma_b3"),
         ("128x192_s4_c2x1_fast_tma_b2_pp", "128x192_s4_c2x1_fast_tma_b3"),
         ("128x128_s6_c1x1_promoted_tma_b2_pp", "128x128_s6_c1x1_promoted_tma_b2"),
         ("128x128_s6_c2x1_promoted_tma_b2_pp", "128x128_s6_c2x1_promoted_tma_b2"),
         ("128x128_s6_c1x2_promoted_tma_b2_pp", "128x128_s6_c1x2_promoted_tma_b2")]
M4096 = ["4096x2112x7168", "4096x24576x1536", "4096x32768x512", "4096x7168x16384",
         "4096x4096x7168", "4096x7168x2048"]


def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v))


def main():
    d = json.load(open(os.path.join(HERE, "pingpong_interleaved.json")))
    assert d["context"]["timing"] == "interleaved"
    m = {tuple(b["name"].split("/")[:2]): b["median_us"] for b in d["benchmarks"]}
    shapes = sorted({s for _, s in m}, key=lambda s: [-int(x) for x in s.split("x")])
    print("same tile, ping-pong over cooperative (cooperative's time / ping-pong's):")
    for pp, coop in PAIRS:
        r = [m[(coop, s)] / m[(pp, s)] for s in shapes]
        print("  %-36s geomean %.3f (%.3f-%.3f)" % (pp, geomean(r), min(r), max(r)))
    print("fast, best of each kind against cuBLASLt fast:")
    best = {}
    for s in shapes:
        fast = [(t, k) for (k, ss), t in m.items() if ss == s and "_fast_" in k]
        c = min(x for x in fast if not x[1].endswith("_pp"))
        p = min(x for x in fast if x[1].endswith("_pp"))
        cub = m[("cublaslt_per_tensor", s)]
        best[s] = (cub / c[0], cub / min(c, p)[0])
        print("  %-16s cooperative %-30s %.3fx   ping-pong %-32s %.3fx   pp / coop %.3f" % (
            s, c[1], cub / c[0], p[1], cub / p[0], c[0] / p[0]))
    print("fast geomean over the six M = 4096 shapes: best cooperative %.3fx, best of both %.3fx" % (
        geomean([best[s][0] for s in M4096]), geomean([best[s][1] for s in M4096])))


if __name__ == "__main__":
    main()
