#!/usr/bin/env python3
"""Session 17, call 2 (binaries of 4f77b7d: the sleeping barrier wait): the peers in one process,
interleaved (bench/peers.py and bench/peers_moe.py --interleave; L2 flush and a GPU-side delay
before each timed call, rounds of one call each, the order rotating; medians).

  chapter 7 (peers_ch07_4f77b7d.json): ours (the library's op, chapter 7's table kernels) over
      DeepGEMM per shape, and the geomeans issue 9's targets use;
  chapter 8 (peers_ch08_4f77b7d.json): our grouped defaults over DeepGEMM (contiguous: its GEMM
      alone and with its padding step; masked) and torch's grouped scaled_mm, and each default
      kernel (by name) over its _spin twin.

    python3 plots/data/h200/engine_wait/peers.py [--check README]
"""
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LARGE = ["8192x8192x8192", "4096x2112x7168", "4096x24576x1536", "4096x32768x512",
         "4096x7168x16384", "4096x4096x7168", "4096x7168x2048"]


def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v))


def medians(name, folder=HERE):
    m = {}
    for b in json.load(open(os.path.join(folder, name)))["benchmarks"]:
        impl, case = b["name"].split("/")[:2]
        assert b.get("interleaved") == 1.0, b["name"]
        m[(impl, case)] = b["median_us"]
    return m


def ch07(name="peers_ch07_4f77b7d.json", folder=HERE):
    """The chapter-7 table of an interleaved peers.py run (also session 20's, ../peers_session20/)."""
    m = medians(name, folder)
    shapes = [s for (i, s) in m if i == "deepgemm"]
    r = {s: m[("deepgemm", s)] / m[("fp8gemm_block_scaled", s)] for s in shapes}
    small = [s for s in shapes if s not in LARGE]
    lines = ["| chapter 7, ours / DeepGEMM (time ratio inverted: > 1 = ours faster) | |",
             "|---|---:|"]
    lines += [f"| {s} | {r[s]:.3f} |" for s in LARGE]
    lines.append(f"| **geomean, 8192^3 and M = 4096 (target 1.05)** | **{geomean([r[s] for s in LARGE]):.3f}** |")
    lines.append(f"| geomean, M <= 128, {len(small)} shapes (target 1.10) | {geomean([r[s] for s in small]):.3f} "
                 f"(min {min(r[s] for s in small):.3f}, max {max(r[s] for s in small):.3f}) |")
    return "\n".join(lines)


def ch08():
    m = medians("peers_ch08_4f77b7d.json")
    cases = sorted({c for (_, c) in m}, key=lambda c: (c.split("_")[0] != "bal", c.split("_")[0] != "skew", c))
    lines = ["| case | ours / DeepGEMM GEMM | ours / DeepGEMM with padding | ours / torch grouped | default by name / its _spin twin |",
             "|---|---:|---:|---:|---:|"]
    for c in cases:
        masked = c.startswith("masked")
        ours = m[("fp8gemm_grouped_masked" if masked else "fp8gemm_grouped_contiguous", c)]
        dg = m.get(("deepgemm_masked" if masked else "deepgemm_contiguous", c))
        pad = m.get(("deepgemm_contiguous_with_pad", c))
        tg = m.get(("torch_scaled_grouped_mm", c))
        # The default kernel by name: the plan's rule (chapter 8's grouped_gemm.cpp): masked
        # 256x128_s4_c1x1 (M_max >= 256), contiguous 256x128_s3_c1x2 with >= 1024 rows per group
        # on average, else 128x256_s4_c1x1.
        if masked:
            k = "256x128_s4_c1x1_promoted_tma_b1"
        elif c.startswith("bal") or "t65536" in c:
            k = "256x128_s3_c1x2_promoted_tma_b4"
        else:
            k = "128x256_s4_c1x1_promoted_tma_b1"
        impl = "fp8gemm_grouped_masked" if masked else "fp8gemm_grouped_contiguous"
        by_name = m[(f"{impl}:{k}", c)]
        spin = m[(f"{impl}:{k}_spin", c)]
        f = lambda x: f"{x / ours:.3f}" if x else "-"  # noqa: E731
        lines.append(f"| {c} | {f(dg)} | {f(pad)} | {f(tg)} | {by_name / spin:.3f} (`{k}`) |")
    return "\n".join(lines)


if __name__ == "__main__":
    text = ch07() + "\n\n" + ch08()
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        sys.path.insert(0, os.path.join(HERE, "..", "ch08"))
        from readme_block import check  # noqa: E402  (chapter 8's shared README-block check)
        check(sys.argv[2], "engine-wait-peers", text, "plots/data/h200/engine_wait/peers.py", "the JSON beside it")
    print(text)
