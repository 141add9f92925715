#!/usr/bin/env python3
"""Chapter 7's kernels (this repository's library through its PyTorch op: fp8gemm_block_scaled,
the library's per-shape table of chapter 7's kernels), DeepGEMM 2.6.1 and torch's blockwise
scaled_mm, in ONE process, interleaved (bench/peers.py --interleave, flush + 50 us GPU delay
before each timed call, rounds of one call each, the order rotating; session 5 call 6, peers.py
at cd6b0dc, the library staged at 6c8caf8, whose library code is HEAD's). Prints per shape the
TFLOPS and ours / DeepGEMM, ours / torch, and the geomeans the issue's targets use.

  python3 plots/data/h200/ch07/peers_interleaved_cd6b0dc/summarise.py
"""
import json
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
LARGE = ["8192x8192x8192", "4096x2112x7168", "4096x24576x1536", "4096x32768x512",
         "4096x7168x16384", "4096x4096x7168", "4096x7168x2048"]


def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v))


def main():
    d = json.load(open(os.path.join(HERE, "peers_interleaved.json")))
    m = {}
    for b in d["benchmarks"]:
        impl, shape = b["name"].split("/")[:2]
        assert b.get("interleaved") == 1.0, b["name"]
        m[(impl, shape)] = b
    shapes = [s for (i, s) in m if i == "deepgemm"]
    print("%-18s %10s %10s %10s %9s %9s" % ("shape", "ours", "DeepGEMM", "torch", "/DG", "/torch"))
    r_dg, r_t = {}, {}
    for s in shapes:
        o, g, t = (m[(i, s)]["median_us"] for i in ("fp8gemm_block_scaled", "deepgemm",
                                                    "torch_scaled_mm_blockwise"))
        r_dg[s], r_t[s] = g / o, t / o
        print("%-18s %10.1f %10.1f %10.1f %9.3f %9.3f" % (
            s, m[("fp8gemm_block_scaled", s)]["TFLOPS"], m[("deepgemm", s)]["TFLOPS"],
            m[("torch_scaled_mm_blockwise", s)]["TFLOPS"], r_dg[s], r_t[s]))
    small = [s for s in shapes if s not in LARGE]
    print("geomean 8192^3 + M = 4096: %.3fx DeepGEMM, %.3fx torch" % (
        geomean([r_dg[s] for s in LARGE]), geomean([r_t[s] for s in LARGE])))
    print("geomean M <= 128:          %.3fx DeepGEMM, %.3fx torch (above 1.0x DeepGEMM at %d of %d)" % (
        geomean([r_dg[s] for s in small]), geomean([r_t[s] for s in small]),
        sum(r_dg[s] > 1.0 for s in small), len(small)))


if __name__ == "__main__":
    main()
