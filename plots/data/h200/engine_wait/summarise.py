#!/usr/bin/env python3
"""Session 17: the engine's sleeping barrier wait against the old re-trying one (kernels named
*_spin), from the chapters' benchmark JSON in this folder (pairs of runs in reversed kernel
order: *_sleep_first.json and *_spin_first.json). Per kernel and shape, the default's median time
over its _spin twin's, the mean of the two runs (< 1: the sleeping wait is faster); printed per
kernel: the geomean over its shapes and the lowest and highest shape.

    python3 plots/data/h200/engine_wait/summarise.py [--check NOTEBOOK.md]

(the table is in chapter 6's lab notebook, chapters/06_warp_specialization/NOTEBOOK.md).
"""
import glob
import json
import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def medians(path):
    """{(kernel, shape): median_us} of one run (the chapters' own kernels, not cuBLASLt's)."""
    out = {}
    for b in json.load(open(path))["benchmarks"]:
        # "ch07:KERNEL/MxNxK/..." (chapter 7), "KERNEL/MxNxK/..." (chapter 6); cuBLASLt's rows
        # have other names.
        m = re.match(r"(?:ch0\d:)?(\d+x\d+_s[^/]+)/(\d+x\d+x\d+)/", b["name"])
        if m and "median_us" in b:
            out[(m.group(1), m.group(2))] = b["median_us"]
    return out


def table():
    """Per kernel: the mean of the two runs' time ratios at each shape, their geomean and extremes."""
    rows = []
    for first in sorted(glob.glob(os.path.join(HERE, "*_sleep_first.json"))):
        stem = os.path.basename(first)[: -len("_sleep_first.json")]
        second = first.replace("_sleep_first.json", "_spin_first.json")
        runs = [medians(first), medians(second)]
        kernels = sorted({k for k, _ in runs[0] if not k.endswith("_spin")})
        for k in kernels:
            per_shape = {}
            for (kk, shape) in runs[0]:
                if kk != k:
                    continue
                r = [run[(k, shape)] / run[(k + "_spin", shape)] for run in runs
                     if (k, shape) in run and (k + "_spin", shape) in run]
                if len(r) == 2:
                    per_shape[shape] = (r[0] + r[1]) / 2
            if per_shape:
                g = math.exp(sum(math.log(x) for x in per_shape.values()) / len(per_shape))
                lo = min(per_shape, key=per_shape.get)
                hi = max(per_shape, key=per_shape.get)
                rows.append((stem, k, len(per_shape), g, lo, per_shape[lo], hi, per_shape[hi]))
    return rows


def render(rows):
    lines = ["| runs | kernel | shapes | sleep / spin, geomean | lowest | highest |",
             "|---|---|---:|---:|---|---|"]
    for stem, k, n, g, lo, vlo, hi, vhi in rows:
        lines.append(f"| {stem} | `{k}` | {n} | **{g:.3f}** | {vlo:.3f} ({lo}) | {vhi:.3f} ({hi}) |")
    return "\n".join(lines)


if __name__ == "__main__":
    text = render(table())
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        sys.path.insert(0, os.path.join(HERE, "..", "ch08"))
        from readme_block import check  # noqa: E402  (chapter 8's shared README-block check)
        check(sys.argv[2], "engine-wait", text, "plots/data/h200/engine_wait/summarise.py", "the JSON beside it")
    print(text)
