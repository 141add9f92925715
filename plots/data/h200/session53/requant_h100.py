#!/usr/bin/env python3
"""Session 53's chapter-9 table: the requantize_block_scaled path on an H100 (call 4, 0e3075f),
from call4_0e3075f/ch09_hopper_requant_0e3075f.json (`ch09_hopper_mxfp8 --gpu_delay_us=50`: the
three Hopper paths, the path's chapter-7 GEMM alone and chapter 7 in one process). Per shape: the
path over chapter 7 (median against median), the re-quantisation (the path's median minus its
GEMM's; GB/s: the 2 (M + N) K bytes it reads and writes over that time, a model of its traffic,
not ncu's DRAM count), its GEMM alone over chapter 7; then the
geomeans over the six M = 4096 DeepSeek-V3 shapes, the other two paths' beside them.
Usage: python3 requant_h100.py [--check README] (--check: README's requant-h100 block must equal
this output; CTest chapter_09_requant_h100 checked it until session 54, whose
session54/requant_h100.py prints the block now, through table_of below)."""
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "ch08"))
import readme_block  # noqa: E402

SOURCE = "plots/data/h200/session53/call4_0e3075f/ch09_hopper_requant_0e3075f.json"
ORDER = ["8192x8192x8192", "4096x2112x7168", "4096x24576x1536", "4096x32768x512",
         "4096x7168x16384", "4096x4096x7168", "4096x7168x2048"]


def trunc3(x):
    """Three decimals, truncated, as plots/plot.py prints ratios to targets (0.6999 reads 0.699)."""
    return f"{math.floor(x * 1000 + 1e-9) / 1000:.3f}"


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def table_of(path, source, once=False):
    """The table of one run's JSON (path; source: its repository path, for the header). once: with
    the weights-once column (ch09_requant_weights_once, session 54's bench; session54/requant_h100.py)."""
    doc = json.load(open(path))
    med = {}
    for b in doc["benchmarks"]:
        impl, shape = b["name"].split("/")[:2]
        med[(impl, shape)] = b["median_us"]
    once_head = "weights once over chapter 7 | " if once else ""
    lines = [f"Measured on {doc['context']['gpu']}, commit {doc['context']['git_commit'][:7]} "
             f"(`{source}`):", "",
             f"| shape | the path over chapter 7 | {once_head}"
             f"{'the path' + chr(39) + 's re-quantisation' if once else 'the re-quantisation'} | "
             "its chapter-7 GEMM alone over chapter 7 |",
             "|---|---:|---:|---:|" + ("---:|" if once else "")]
    over = {"requant": [], "once": [], "default": [], "bf16": []}
    for shape in ORDER:
        m, n, k = map(int, shape.split("x"))
        ch07 = med[("ch07_block_scaled", shape)]
        path, alone = med[("ch09_hopper_mx_requant", shape)], med[("ch09_requant_gemm_alone", shape)]
        rq = path - alone
        name = "8192^3" if m == n == k else shape.replace("x", " x ")
        once_cell = ""
        if once:
            t = med[("ch09_requant_weights_once", shape)]
            once_cell = f" {trunc3(ch07 / t)}x |"
            if m == 4096:
                over["once"].append(ch07 / t)
        lines.append(f"| {name} | {trunc3(ch07 / path)}x |{once_cell} {rq:.1f} us "
                     f"({2 * (m + n) * k / rq / 1e6:.2f} TB/s) | {trunc3(ch07 / alone)}x |")
        if m == 4096:
            over["requant"].append(ch07 / path)
            over["default"].append(ch07 / med[("ch09_hopper_mx", shape)])
            over["bf16"].append(ch07 / med[("ch09_hopper_mx_bf16", shape)])
    if once:
        head = (f"Geomean over the six M = 4096 shapes: the path {trunc3(geomean(over['requant']))}x, "
                f"weights once {trunc3(geomean(over['once']))}x; in the same run")
    else:
        head = f"Geomean over the six M = 4096 shapes {trunc3(geomean(over['requant']))}x; in the same run"
    lines += ["", f"{head} the default path {trunc3(geomean(over['default']))}x and "
              f"dequantize_bf16 {trunc3(geomean(over['bf16']))}x. Ratios truncated to three "
              f"decimals, as `plots/plot.py` prints them."]
    return "\n".join(lines)


def table():
    return table_of(os.path.join(HERE, "call4_0e3075f", "ch09_hopper_requant_0e3075f.json"), SOURCE)


if __name__ == "__main__":
    readme_block.table_main(sys.argv, "requant-h100", table, "chapter_09_requant_h100", SOURCE)
