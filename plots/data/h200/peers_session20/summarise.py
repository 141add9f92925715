#!/usr/bin/env python3
"""Session 20, call 3 (binaries and PyTorch package of d57610a, whose kernels are 4aa7ef8's: the
scheduler's FastDiv included): the peers in one process, interleaved (bench/peers.py and
bench/peers_moe.py --interleave; an L2 flush and a GPU-side delay, 50 us for chapter 7 and 150 us
for chapter 8, before each timed call; rounds of one call each, the order rotating; medians), as in
session 17 (../engine_wait/). Prints, as time ratios inverted (> 1: ours faster):

  chapter 7 (peers_ch07_<commit>.json): ours (the library's op, chapter 7's table kernels) over
      DeepGEMM at 8192^3 and the M = 4096 shapes, and the geomeans issue 9's targets use
      (session 17's table, ../engine_wait/peers.py);
  chapter 8 (peers_ch08_<commit>.json): our grouped defaults over DeepGEMM (contiguous: its GEMM
      alone and with its padding step; masked; the k-grouped weight gradient) and over torch's
      grouped scaled_mm.

    python3 plots/data/h200/peers_session20/summarise.py
"""
import glob
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "engine_wait"))
import peers as session17  # noqa: E402  (its chapter-7 table and JSON reader)


def one(pattern):
    (path,) = glob.glob(os.path.join(HERE, pattern))
    return os.path.basename(path)


def ch07():
    return session17.ch07(one("peers_ch07_*.json"), HERE)


def ch08():
    m = session17.medians(one("peers_ch08_*.json"), HERE)
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
