#!/usr/bin/env python3
"""Chapter 8's executable's JSON (ch08_kernels_step): each case's median time per kernel, and
each kernel's time over BASE's (the first kernel named on the command line unless --base):
  python3 ch08_ratios.py ch08_f32_<commit>.json [--base KERNEL]"""
import argparse
import json
from collections import defaultdict

ap = argparse.ArgumentParser()
ap.add_argument("json")
ap.add_argument("--base", default="128x256_s4_c1x1_promoted_f32_tma_b1")
a = ap.parse_args()
t = defaultdict(dict)
for b in json.load(open(a.json))["benchmarks"]:
    head = b["name"].split("/")[0]
    if b.get("run_type") != "iteration" or "median_us" not in b or not head.startswith("ch08:"):
        continue  # chapter 7's loop per group and other comparison rows
    kernel, case = head.split(":", 1)[1], b["name"].split("/")[1]
    t[case][kernel] = b["median_us"]
kernels = sorted({k for c in t.values() for k in c})
print("case", *[f"{k} (us, /base)" for k in kernels], sep=" | ")
for case in sorted(t):
    base = t[case].get(a.base)
    cells = []
    for k in kernels:
        us = t[case].get(k)
        cells.append("-" if us is None else f"{us:.1f} ({us / base:.3f})" if base else f"{us:.1f}")
    print(case, *cells, sep=" | ")
