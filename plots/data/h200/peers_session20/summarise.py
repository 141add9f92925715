#!/usr/bin/env python3
"""Session 20, call 3 (binaries and PyTorch package of d57610a, whose kernels are 4aa7ef8's: the
scheduler's FastDiv included): the peers in one process, interleaved (bench/peers.py and
bench/peers_moe.py --interleave; an L2 flush and a GPU-side delay, 50 us for chapter 7 and 150 us
for chapter 8, before each timed call; rounds of one call each, the order rotating; medians), as in
session 17 (../engine_wait/). Prints, as time ratios inverted (> 1: ours faster):

  chapter 7 (peers_ch07_<commit>.json): ours (the library's op, chapter 7's table kernels) over
      DeepGEMM per shape, and the geomeans issue 9's targets use;
  chapter 8 (peers_ch08_<commit>.json): our grouped defaults over DeepGEMM (contiguous: its GEMM
      alone and with its padding step; masked; the k-grouped weight gradient) and over torch's
      grouped scaled_mm.

    python3 plots/data/h200/peers_session20/summarise.py
"""
import glob
import json
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
LARGE = ["8192x8192x8192", "4096x2112x7168", "4096x24576x1536", "4096x32768x512",
         "4096x7168x16384", "4096x4096x7168", "4096x7168x2048"]


def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v))


def medians(pattern):
    (path,) = glob.glob(os.path.join(HERE, pattern))
    m = {}
    for b in json.load(open(path))["benchmarks"]:
        impl, case = b["name"].split("/")[:2]
        assert b.get("interleaved") == 1.0, b["name"]
        m[(impl, case)] = b["median_us"]
    return m


def ch07():
    m = medians("peers_ch07_*.json")
    shapes = [s for (i, s) in m if i == "deepgemm"]
    r = {s: m[("deepgemm", s)] / m[("fp8gemm_block_scaled", s)] for s in shapes}
    small = [s for s in shapes if s not in LARGE]
    lines = ["| chapter 7, ours / DeepGEMM (time ratio inverted: > 1 = ours faster) | |",
             "|---|---:|"]
    lines += [f"| {s} | {r[s]:.3f} |" for s in LARGE]
    lines.append(f"| **geomean, 8192^3 and M = 4096 (target 1.05)** | **{geomean([r[s] for s in LARGE]):.3f}** |")
    lines += [f"| {s} | {r[s]:.3f} |" for s in small]
    lines.append(f"| **geomean, M <= 128, {len(small)} shapes (target 1.10)** | "
                 f"**{geomean([r[s] for s in small]):.3f}** |")
    return "\n".join(lines)


def ch08():
    m = medians("peers_ch08_*.json")
    cases = sorted({c for (_, c) in m}, key=lambda c: (["bal", "skew", "masked", "wgrad"].index(c.split("_")[0]), c))
    lines = ["| case | ours / DeepGEMM | ours / DeepGEMM with its padding step | ours / torch grouped |",
             "|---|---:|---:|---:|"]
    for c in cases:
        kind = c.split("_")[0]
        ours = m[{"masked": "fp8gemm_grouped_masked", "wgrad": "fp8gemm_weight_grad"}.get(
            kind, "fp8gemm_grouped_contiguous"), c]
        dg = m.get(({"masked": "deepgemm_masked", "wgrad": "deepgemm_kgrouped_wgrad"}.get(
            kind, "deepgemm_contiguous"), c))
        pad = m.get(("deepgemm_contiguous_with_pad", c))
        tg = m.get(("torch_scaled_grouped_mm", c))
        f = lambda x: f"{x / ours:.3f}" if x else "-"  # noqa: E731
        lines.append(f"| {c} | {f(dg)} | {f(pad)} | {f(tg)} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(ch07() + "\n\n" + ch08())
