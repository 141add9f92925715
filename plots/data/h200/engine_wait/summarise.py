#!/usr/bin/env python3
"""Session 17: the engine's sleeping barrier wait against the old re-trying one (kernels named
*_spin), from the chapters' benchmark JSON in this folder (pairs of runs in reversed kernel
order: *_sleep_first.json and *_spin_first.json). Prints, per kernel and shape, the default's
median time over its _spin twin's in each run and their mean (< 1: the sleeping wait is faster),
and the geomean per kernel over its shapes.

    python3 plots/data/h200/engine_wait/summarise.py [--check README.md]
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
    rows = []
    for first in sorted(glob.glob(os.path.join(HERE, "*_sleep_first.json"))):
        stem = os.path.basename(first)[: -len("_sleep_first.json")]
        second = first.replace("_sleep_first.json", "_spin_first.json")
        runs = [medians(first), medians(second)]
        kernels = sorted({k for k, _ in runs[0] if not k.endswith("_spin")})
        for k in kernels:
            ratios_k = []
            for (kk, shape) in sorted(runs[0], key=lambda x: [int(v) for v in x[1].split("x")]):
                if kk != k:
                    continue
                r = [run[(k, shape)] / run[(k + "_spin", shape)] for run in runs
                     if (k, shape) in run and (k + "_spin", shape) in run]
                if len(r) != 2:
                    continue
                mean = (r[0] + r[1]) / 2
                ratios_k.append(mean)
                rows.append((stem, k, shape, r[0], r[1], mean))
            if ratios_k:
                g = math.exp(sum(math.log(x) for x in ratios_k) / len(ratios_k))
                rows.append((stem, k, "geomean", None, None, g))
    return rows


def render(rows):
    lines = ["| runs | kernel | shape | sleep / spin, run 1 | run 2 | mean |",
             "|---|---|---|---:|---:|---:|"]
    for stem, k, shape, a, b, m in rows:
        if a is None:
            lines.append(f"| {stem} | `{k}` | **geomean** | | | **{m:.3f}** |")
        else:
            lines.append(f"| {stem} | `{k}` | {shape} | {a:.3f} | {b:.3f} | {m:.3f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    text = render(table())
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        sys.path.insert(0, os.path.join(HERE, "..", "ch08"))
        from readme_block import check_block  # noqa: E402
        sys.exit(check_block(sys.argv[2], "engine-wait", text))
    print(text)
