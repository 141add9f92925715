#!/usr/bin/env python3
"""Chapter 6's table (both modes against cuBLASLt's same mode), timed one benchmark after the
other (per_launch, binaries 1231d38, settle 0 / 100 / 300 ms, two runs each, in the order
s0 s100 s300 s0 s100 s300) and interleaved (binaries ba5bcc2, three runs; the third was asked for
as per_launch but the script passed "--timing=per", which Google Benchmark ignored: its JSON
context says interleaved, and since da77cbf an unknown --timing= stops the run).
Prints, per shape, ours / cuBLASLt (cuBLASLt's median time over ours) for fast and promoted.

  python3 plots/data/h200/ch06/timing_order/summarise.py
"""
import json
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
RUNS = [("per_launch_settle0_1_1231d38", "seq s0"), ("per_launch_settle0_2_1231d38", "seq s0"),
        ("per_launch_settle100_1_1231d38", "seq s100"), ("per_launch_settle100_2_1231d38", "seq s100"),
        ("per_launch_settle300_1_1231d38", "seq s300"), ("per_launch_settle300_2_1231d38", "seq s300"),
        ("interleaved_1_ba5bcc2", "interl."), ("interleaved_2_ba5bcc2", "interl."),
        ("interleaved_3_ba5bcc2", "interl.")]
M4096 = ["4096x2112x7168", "4096x24576x1536", "4096x32768x512", "4096x7168x16384",
         "4096x4096x7168", "4096x7168x2048"]


def load(name):
    d = json.load(open(os.path.join(HERE, name + ".json")))
    return d["context"].get("timing"), {b["name"].split("/iterations")[0]: b["median_us"]
                                         for b in d["benchmarks"]}


def ratio(m, shape, mode):
    ours = m["ch06_%s/%s" % (mode, shape)]
    peer = m[("cublaslt_per_tensor" if mode == "fast" else "cublaslt_per_tensor_promoted") + "/" + shape]
    return peer / ours


def main():
    runs = [(label, *load(name)) for name, label in RUNS]
    for label, timing, _ in runs:
        assert (timing == "interleaved") == (label == "interl."), (label, timing)
    shapes = [k.split("/")[1] for k in runs[0][2] if k.startswith("ch06_fast/")]
    print("ours / cuBLASLt, fast | promoted; columns: " + ", ".join(l for l, _, _ in runs))
    for shape in shapes:
        cells = ["%.3f|%.3f" % (ratio(m, shape, "fast"), ratio(m, shape, "promoted")) for _, _, m in runs]
        print("%-16s %s" % (shape, " ".join(cells)))
    for mode in ("fast", "promoted"):
        g = [math.exp(sum(math.log(ratio(m, s, mode)) for s in M4096) / len(M4096)) for _, _, m in runs]
        print("geomean M=4096, %-8s %s" % (mode, " ".join("%.3f" % x for x in g)))
    small = [s for s in shapes if s.startswith("64x") or s.startswith("128x")]
    print("M <= 128 ratios >= 0.9 (of 24):", " ".join(
        str(sum(ratio(m, s, mode) >= 0.9 for s in small for mode in ("fast", "promoted")))
        for _, _, m in runs))


if __name__ == "__main__":
    main()
