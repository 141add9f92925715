#!/usr/bin/env python3
"""Chapter 8's targets from the interleaved in-process peer runs in this folder (bench/peers_moe.py
--interleave at 3845d35: our library's grouped ops, DeepGEMM 2.6.1 and torch timed in one group per
case). Run 1: 50 us GPU-side delay (the host work of 23 of 68 calls not covered); run 2: 150 us
(all covered). Ratios are of TFLOPS (same counted FLOPs per case, so time ratios inverted).
Usage: python3 summarise.py [RUN1.json RUN2.json ...] (default: this folder's two runs; two or more
other runs, e.g. ../peers_interleaved_session7/*.json or ../session13/peers_interleaved_*.json, by
path)."""
import json
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
RUNS = ["peers_moe_interleaved_1.json", "peers_moe_interleaved_2.json"]


def load(f):
    d = json.load(open(f if os.path.isabs(f) or os.path.exists(f) else os.path.join(HERE, f)))
    t = {}
    for b in d["benchmarks"]:
        if "TFLOPS" in b:
            impl, case = b["name"].split("/")[:2]
            t[(impl, case)] = b["TFLOPS"]
    return d["context"], t


# (case prefix, our impl, peer impl, target or None for a row shown beside a target)
ROWS = []
for c in ["bal_g4x8192_n4096_k7168", "bal_g8x4096_n7168_k2048"]:
    ROWS.append((c, "fp8gemm_grouped_contiguous", "deepgemm_contiguous", 1.05))
for c in ["skew_g32_t8192_n4096_k7168", "skew_g32_t8192_n7168_k2048", "skew_g32_t65536_n4096_k7168",
          "skew_g32_t65536_n7168_k2048"]:
    ROWS.append((c, "fp8gemm_grouped_contiguous", "deepgemm_contiguous", 1.2))
    ROWS.append((c, "fp8gemm_grouped_contiguous", "deepgemm_contiguous_with_pad", None))
    ROWS.append((c, "fp8gemm_grouped_contiguous", "torch_scaled_grouped_mm", 1.5))
for c in ["masked_g1x1024_n4096_k7168", "masked_g1x1024_n7168_k2048", "masked_g2x512_n4096_k7168",
          "masked_g2x512_n7168_k2048", "masked_g4x256_n4096_k7168", "masked_g4x256_n7168_k2048"]:
    ROWS.append((c, "fp8gemm_grouped_masked", "deepgemm_masked", 1.05))
    ROWS.append((c, "fp8gemm_grouped_masked", "deepgemm_masked_exact", None))
for c in ["wgrad_g32_t8192_n4096_k7168", "wgrad_g32_t8192_n7168_k2048", "wgrad_g32_t65536_n4096_k7168",
          "wgrad_g32_t65536_n7168_k2048"]:
    ROWS.append((c, "fp8gemm_weight_grad", "deepgemm_kgrouped_wgrad", 1.05))
    ROWS.append((c, "fp8gemm_weight_grad", "torch_scaled_mm_loop_wgrad", None))


def main():
    import sys
    files = sys.argv[1:] or RUNS
    if len(files) < 2:
        sys.exit("summarise.py: two or more runs, or none for this folder's")
    runs = [load(f) for f in files]
    for ctx, _ in runs:
        print(f"# {ctx['git_commit'][:7]} {ctx['gpu']} timing={ctx.get('timing')} delay_us={ctx.get('delay_us')} "
              f"deep_gemm {ctx.get('deep_gemm_version')} torch {ctx.get('torch_version')}")
    names = ", ".join(f"run {i + 1}" for i in range(len(runs)))
    print(f"| case | ours | peer | ours TFLOPS ({names}) | peer TFLOPS | ratio ({names}) | target |")
    print("|---|---|---|---:|---:|---:|---|")
    met = [0] * len(runs)
    total = 0
    for case, ours, peer, target in ROWS:
        o = [t.get((ours, case)) for _, t in runs]
        p = [t.get((peer, case)) for _, t in runs]
        r = [a / b if a and b else float("nan") for a, b in zip(o, p)]
        verdict = ""
        if target:
            total += 1
            ok = [x >= target for x in r]
            for i, x in enumerate(ok):
                met[i] += x
            verdict = f">= {target}: " + ("met" if all(ok) else "**missed**" if not any(ok) else
                                          "met in one run" if len(ok) == 2 else
                                          f"met in {sum(ok)} of {len(ok)} runs")
        print(f"| `{case}` | `{ours}` | `{peer}` | {', '.join(f'{x:.1f}' for x in o)} | "
              f"{', '.join(f'{x:.1f}' for x in p)} | {', '.join(f'{x:.3f}' for x in r)} | {verdict} |")
    print("\ntargets met: " + ", ".join(f"run {i + 1} {m} of {total}" for i, m in enumerate(met)))


if __name__ == "__main__":
    main()
