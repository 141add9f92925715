#!/usr/bin/env python3
"""Session 54's chapter-9 table: the requantize_block_scaled path on an H100 (call 4, 6bb8131),
from call4_6bb8131/requant.json (`ch09_hopper_mxfp8 --gpu_delay_us=50`: the three Hopper paths,
the path's chapter-7 GEMM alone, the weights-once recipe and chapter 7, in one process). Session
53's table (session53/requant_h100.py) with one column more: ch09_requant_weights_once, the path as
an inference user with fixed MXFP8 weights runs it from the public functions (B re-quantised once,
outside the timing; per call requantize_mx on A alone, then chapter 7's plan). Per shape: the path
and the weights-once recipe over chapter 7 (median against median), the path's re-quantisation
(its median minus its GEMM's; GB/s: the 2 (M + N) K bytes it reads and writes over that time, a
model of its traffic, not ncu's DRAM count), its GEMM alone over chapter 7; then the geomeans over
the six M = 4096 DeepSeek-V3 shapes, the other two paths' beside them.
Usage: python3 requant_h100.py [--check README] (--check: README's requant-h100 block must equal
this output; CTest chapter_09_requant_h100)."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "ch08"))
sys.path.insert(0, os.path.join(HERE, "..", "session53"))
import readme_block  # noqa: E402
from requant_h100 import ORDER, geomean, trunc3  # noqa: E402  (session 53's)

SOURCE = "plots/data/h200/session54/call4_6bb8131/requant.json"


def table():
    doc = json.load(open(os.path.join(HERE, "call4_6bb8131", "requant.json")))
    med = {}
    for b in doc["benchmarks"]:
        impl, shape = b["name"].split("/")[:2]
        med[(impl, shape)] = b["median_us"]
    lines = [f"Measured on {doc['context']['gpu']}, commit {doc['context']['git_commit'][:7]} "
             f"(`{SOURCE}`):", "",
             "| shape | the path over chapter 7 | weights once over chapter 7 | "
             "the path's re-quantisation | its chapter-7 GEMM alone over chapter 7 |",
             "|---|---:|---:|---:|---:|"]
    over = {"requant": [], "once": [], "default": [], "bf16": []}
    for shape in ORDER:
        m, n, k = map(int, shape.split("x"))
        ch07 = med[("ch07_block_scaled", shape)]
        path, alone = med[("ch09_hopper_mx_requant", shape)], med[("ch09_requant_gemm_alone", shape)]
        once = med[("ch09_requant_weights_once", shape)]
        rq = path - alone
        name = "8192^3" if m == n == k else shape.replace("x", " x ")
        lines.append(f"| {name} | {trunc3(ch07 / path)}x | {trunc3(ch07 / once)}x | {rq:.1f} us "
                     f"({2 * (m + n) * k / rq / 1e6:.2f} TB/s) | {trunc3(ch07 / alone)}x |")
        if m == 4096:
            over["requant"].append(ch07 / path)
            over["once"].append(ch07 / once)
            over["default"].append(ch07 / med[("ch09_hopper_mx", shape)])
            over["bf16"].append(ch07 / med[("ch09_hopper_mx_bf16", shape)])
    lines += ["", f"Geomean over the six M = 4096 shapes: the path {trunc3(geomean(over['requant']))}x, "
              f"weights once {trunc3(geomean(over['once']))}x; in the same run the default path "
              f"{trunc3(geomean(over['default']))}x and dequantize_bf16 "
              f"{trunc3(geomean(over['bf16']))}x. Ratios truncated to three decimals, as "
              f"`plots/plot.py` prints them."]
    return "\n".join(lines)


if __name__ == "__main__":
    readme_block.table_main(sys.argv, "requant-h100", table, "chapter_09_requant_h100", SOURCE)
