#!/usr/bin/env python3
"""Session 27's calls, from their committed JSON: the 128 x 128 dual's kernel variants against the
copy (quantize_bench), and chapter 7 against DeepGEMM in one process, interleaved (bench/peers.py
--interleave) at each GPU-side delay. Usage: python3 summarise.py (this folder's calls)."""
import glob
import json
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def quantize(path):
    d = json.load(open(path))
    rows = [(b["name"].split("/")[0], b["name"].split("/")[1], b["pct_of_copy"])
            for b in d["benchmarks"] if "pct_of_copy" in b]
    return rows


def peers(path):
    d = json.load(open(path))
    t, covered = {}, True
    for b in d["benchmarks"]:
        impl, shape = b["name"].split("/")[:2]
        t[(impl, shape)] = b["TFLOPS"]
        covered &= b.get("delay_covers_host", 1.0) == 1.0
    shapes = sorted({s for _, s in t}, key=lambda s: [int(x) for x in s.split("x")], reverse=True)
    ratios = {s: t[("fp8gemm_block_scaled", s)] / t[("deepgemm", s)] for s in shapes
              if ("deepgemm", s) in t and ("fp8gemm_block_scaled", s) in t}
    return d["context"], ratios, covered


def geomean(xs):
    xs = list(xs)
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


for call in sorted(glob.glob(os.path.join(HERE, "call*"))):
    qs = sorted(glob.glob(os.path.join(call, "q", "quantize_bench_*.json")))
    if qs:
        print(f"## {os.path.basename(call)}: quantize_bench, % of the copy in the same run")
        runs = [quantize(q) for q in qs]
        print("| kernel | shape | " + " | ".join(f"run {i + 1}" for i in range(len(runs))) + " |")
        print("|---|---|" + "---:|" * len(runs))
        for i, (name, shape, _) in enumerate(runs[0]):
            print(f"| `{name}` | {shape} | " + " | ".join(f"{r[i][2]:.1f}" for r in runs) + " |")
    for p in sorted(glob.glob(os.path.join(call, "p", "peers_ch07_d*.json"))):
        ctx, ratios, covered = peers(p)
        big = [r for s, r in ratios.items() if s.startswith("4096x")]
        print(f"## {os.path.basename(call)}: chapter 7 / DeepGEMM, interleaved, delay {ctx['delay_us']} us, "
              f"package {ctx['git_commit'][:7]}, host work covered by the delay: {covered}")
        for s, r in ratios.items():
            print(f"  {s:18s} {r:.3f}")
        print(f"  geomean (8192^3 + six M = 4096) {geomean(ratios.values()):.3f}; six M = 4096 {geomean(big):.3f}")
