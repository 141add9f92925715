#!/usr/bin/env python3
"""Chapter 8's results table: our JSON (ch08_grouped_moe, Google Benchmark) beside the Python peers'
(bench/peers_moe.py) of the same run, by case name, with issue 10's targets as same-run ratios.

    python3 tools/ch08_table.py plots/data/h200/ch08_grouped_moe.json plots/data/h200/ch08/peers.json

Prints a Markdown table (TFLOPS by the harness's method: L2 flushed, 50 us GPU delay, median) and
the target ratios:
  balanced contiguous   ours / deepgemm_contiguous                          target >= 1.05
  skewed contiguous     ours / deepgemm_contiguous (GEMM alone)              target >= 1.2
                        ours / deepgemm_contiguous_with_pad (with its padding step)
                        ours / torch_scaled_grouped_mm (rowwise)             target >= 1.5
  masked                ours / deepgemm_masked                               target >= 1.05
  weight gradient       ours / deepgemm_kgrouped_wgrad                       target >= 1.05
                        ours / torch_scaled_mm_loop_wgrad (a loop of cuBLASLt calls)
"""
import json
import sys

OURS = {"bal": "ch08_grouped", "skew": "ch08_grouped", "masked": "ch08_grouped", "wgrad": "ch08_wgrad"}
PEERS = {
    "bal": [("deepgemm_contiguous", 1.05), ("torch_scaled_grouped_mm", None)],
    "skew": [("deepgemm_contiguous", 1.2), ("deepgemm_contiguous_with_pad", None),
             ("torch_scaled_grouped_mm", 1.5)],
    "masked": [("deepgemm_masked", 1.05), ("deepgemm_masked_exact", None)],
    "wgrad": [("deepgemm_kgrouped_wgrad", 1.05), ("torch_scaled_mm_loop_wgrad", None)],
}


def load(path):
    d = json.load(open(path))
    out = {}
    for b in d["benchmarks"]:
        impl, case = b["name"].split("/")[:2]
        if "TFLOPS" in b:
            out[(impl, case)] = b["TFLOPS"]
    return d["context"], out


def main(argv):
    if len(argv) != 3:
        print(__doc__)
        return 2
    ctx_o, ours = load(argv[1])
    ctx_p, peers = load(argv[2])
    print(f"ours: {argv[1]} (commit {ctx_o.get('git_commit', '?')}, {ctx_o.get('gpu', '?')}); "
          f"peers: {argv[2]} (commit {ctx_p.get('git_commit', '?')}, DeepGEMM "
          f"{ctx_p.get('deep_gemm_version', '?')}, torch {ctx_p.get('torch_version', '?')})\n")
    cases = sorted({c for (i, c) in ours}, key=lambda c: (["bal", "skew", "masked", "wgrad"].index(c.split("_")[0]), c))
    print("| case | ours TFLOPS | peer | peer TFLOPS | ours / peer | target |")
    print("|---|---:|---|---:|---:|---|")
    misses = 0
    for c in cases:
        kind = c.split("_")[0]
        mine = ours.get((OURS[kind], c))
        if mine is None:
            continue
        for peer, target in PEERS[kind]:
            theirs = peers.get((peer, c))
            if theirs is None:
                continue
            r = mine / theirs
            verdict = "" if target is None else (f">= {target}: met" if r >= target else f">= {target}: **missed**")
            misses += target is not None and r < target
            print(f"| {c} | {mine:.1f} | {peer} | {theirs:.1f} | {r:.3f} | {verdict} |")
    print(f"\n{misses} target(s) missed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
