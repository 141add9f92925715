#!/usr/bin/env python3
"""Session 35, call 5: chapter 8's forward kernels on the masked N = 7168, K = 2048 cases, each
kernel's time over the default's (256x128_s4_c1x1_promoted_tma_b1_noew) run by run.

    python3 plots/data/h200/session35/masked_sweep.py [masked_1.json masked_2.json ...]
    (default: call5_3067ce7/masked_*.json)
"""
import collections
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = "256x128_s4_c1x1_promoted_tma_b1_noew"


def times(files):
    """{case: {kernel: [us per run]}} of chapter 8's kernels in the files."""
    t = collections.defaultdict(lambda: collections.defaultdict(list))
    for f in files:
        for b in json.load(open(f))["benchmarks"]:
            impl, case = b["name"].split("/")[:2]
            if impl.startswith("ch08:"):
                t[case][impl[len("ch08:"):]].append(b["real_time"])
    return t


def table(t):
    cases = sorted(t)

    def worst(k):  # the kernel's largest mean ratio over the cases (9 where it cannot be formed)
        r = [sum(t[c][k]) / len(t[c][k]) / (sum(t[c][DEFAULT]) / len(t[c][DEFAULT]))
             for c in cases if t[c].get(k) and t[c].get(DEFAULT)]
        return max(r) if r else 9.0

    kernels = sorted({k for c in cases for k in t[c]}, key=worst)
    lines = ["| kernel | " + " | ".join(f"{c}: time / default's (runs)" for c in cases) +
             " | worst mean |", "|---|" + "---:|" * (len(cases) + 1)]
    for k in kernels:
        cells = []
        for c in cases:
            if not t[c].get(k) or not t[c].get(DEFAULT):
                cells.append("-")
                continue
            runs = [x / d for x, d in zip(t[c][k], t[c][DEFAULT])]
            cells.append(", ".join(f"{r:.3f}" for r in runs))
        lines.append(f"| {k} | " + " | ".join(cells) + f" | {worst(k):.3f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    files = sys.argv[1:] or sorted(glob.glob(os.path.join(HERE, "call5_3067ce7", "masked_*.json")))
    print(table(times(files)))
