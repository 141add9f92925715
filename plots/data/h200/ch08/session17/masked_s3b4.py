#!/usr/bin/env python3
"""Session 17, call 8 (binaries and PyTorch package of be15bad): the masked calls with
256x128_s3_c1x1_promoted_tma_b4 (3 stages, a staging buffer per unit) beside the plan's masked
default 256x128_s4_c1x1_promoted_tma_b1. Two views, both interleaved with L2 flushed:
  the chapter's executable (--gpu_delay_us=50), two runs in reversed kernel order
      (masked_*_first_be15bad.json): s3_b4's median time over the default's, per run and mean;
  bench/peers_moe.py with DeepGEMM (peers_masked_be15bad.json; 150 us delay): both kernels by
      name, s3_b4 over the default, and DeepGEMM masked over our default (> 1: ours faster).

    python3 plots/data/h200/ch08/session17/masked_s3b4.py [--check README]
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from readme_block import executable_medians  # noqa: E402
NEW, DEF = "256x128_s3_c1x1_promoted_tma_b4", "256x128_s4_c1x1_promoted_tma_b1"


def exe(path):
    return executable_medians(os.path.join(HERE, path))


def table():
    runs = [exe("masked_default_first_be15bad.json"), exe("masked_s3b4_first_be15bad.json")]
    peers = {}
    for b in json.load(open(os.path.join(HERE, "peers_masked_be15bad.json")))["benchmarks"]:
        impl, case = b["name"].split("/")[:2]
        peers[(impl, case)] = b["median_us"]
    cases = sorted({c for (_, c) in runs[0]})
    lines = ["| case | s3_b4 / default, executable (run 1, run 2: mean) | s3_b4 / default, with DeepGEMM | DeepGEMM / our default |",
             "|---|---:|---:|---:|"]
    for c in cases:
        r = [run[(NEW, c)] / run[(DEF, c)] for run in runs]
        p_new = peers[(f"fp8gemm_grouped_masked:{NEW}", c)]
        p_def = peers[(f"fp8gemm_grouped_masked:{DEF}", c)]
        dg = peers[("deepgemm_masked", c)] / peers[("fp8gemm_grouped_masked", c)]
        lines.append(f"| {c} | {r[0]:.3f}, {r[1]:.3f}: **{sum(r) / 2:.3f}** | {p_new / p_def:.3f} | {dg:.3f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    text = table()
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        sys.path.insert(0, os.path.join(HERE, ".."))
        from readme_block import check  # noqa: E402
        check(sys.argv[2], "session17-masked", text, "session17/masked_s3b4.py", "the JSON beside it")
    print(text)
