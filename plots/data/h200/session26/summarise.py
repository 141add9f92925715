#!/usr/bin/env python3
"""Session 26's GPU calls, summarised from their committed files (Python 3, standard library):

  call C (binaries and PyTorch package of c8abf19: chapters 6 and 7 with the picks of the table
      re-learned from the full dispatch sweep at 945b0eb): chapter 7 against DeepGEMM in one
      process, interleaved (bench/peers.py --interleave --impls fp8gemm_block_scaled,deepgemm
      --cupti-launches 0; an L2 flush and a 50 us GPU-side delay before each timed call). Its JSON
      did not come back from the GPU machine (more than 8 files in $OUT); the log, which prints
      every implementation's median per shape, did (callC_c8abf19/peers_ch07_interleaved_*.log).
      Printed as time ratios inverted (> 1: ours faster), with session 24's run of the same
      method beside them (its log in session24/call2_6e6f2fc/logs.txz, p/peers_ch07.log).
  call D (c8abf19's chapter 7 binary): the old and the new pick of each changed M > 128 row side by
      side, interleaved by the harness, with the 50 us delay and without, twice each: the new
      kernel's median over the old one's.

    python3 plots/data/h200/session26/summarise.py
"""
import glob
import io
import json
import math
import os
import re
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
LARGE = ["8192x8192x8192", "4096x2112x7168", "4096x24576x1536", "4096x32768x512",
         "4096x7168x16384", "4096x4096x7168", "4096x7168x2048"]
ROW = re.compile(r"^(fp8gemm_block_scaled|deepgemm)\s+(\d+x\d+x\d+)\s+\S+\s+([\d.]+)")


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def peers_log(text):
    """{(impl, shape): median_us}, and the (impl, shape) the log flags as not covered by the delay."""
    med, flagged = {}, set()
    for line in text.splitlines():
        m = ROW.match(line)
        if m:
            med[(m.group(1), m.group(2))] = float(m.group(3))
            if "NOT covered" in line:
                flagged.add((m.group(1), m.group(2)))
    return med, flagged


def session24_log():
    with tarfile.open(os.path.join(HERE, "..", "session24", "call2_6e6f2fc", "logs.txz")) as t:
        return t.extractfile("p/peers_ch07.log").read().decode()


def ch07_interleaved():
    (path,) = glob.glob(os.path.join(HERE, "callC_c8abf19", "peers_ch07_interleaved_*.log"))
    runs = [("session 26 (c8abf19)", *peers_log(open(path).read())),
            ("session 24 (6e6f2fc)", *peers_log(session24_log()))]
    lines = ["| ours / DeepGEMM (time ratio inverted: > 1 = ours faster) | " +
             " | ".join(name for name, _, _ in runs) + " |", "|---|" + "---:|" * len(runs)]
    ratios = []
    for name, med, flagged in runs:
        ratios.append({s: med[("deepgemm", s)] / med[("fp8gemm_block_scaled", s)]
                       for (i, s) in med if i == "deepgemm"})
    for s in LARGE:
        cells = []
        for (name, med, flagged), r in zip(runs, ratios):
            mark = " (host work not covered)" if any((i, s) in flagged for i in
                                                   ("deepgemm", "fp8gemm_block_scaled")) else ""
            cells.append(f"{r[s]:.3f}{mark}")
        lines.append(f"| {s} | " + " | ".join(cells) + " |")
    lines.append("| geomean, 8192^3 and M = 4096 (target 1.05) | " +
                 " | ".join(f"{geomean([r[s] for s in LARGE]):.3f}" for r in ratios) + " |")
    lines.append("| geomean, the six M = 4096 shapes | " +
                 " | ".join(f"{geomean([r[s] for s in LARGE[1:]]):.3f}" for r in ratios) + " |")
    lines.append("| geomean, M <= 128 (12 shapes; target 1.10) | " +
                 " | ".join(f"{geomean([v for s, v in r.items() if s not in LARGE]):.3f}"
                            for r in ratios) + " |")
    return "\n".join(lines)


NEW = {"8192x8192x8192": "192x128_s4_c1x1_promoted_tma_b2",
       "4096x32768x512": "256x128_s3_c1x2_promoted_tma_b4",
       "4096x7168x16384": "256x128_s3_c1x2_promoted_tma_b4",
       "4096x4096x7168": "256x128_s3_c1x2_promoted_tma_b4",
       "4096x7168x2048": "256x128_s3_c1x2_promoted_tma_b4"}
OLD = {"8192x8192x8192": "256x128_s3_c1x2_promoted_tma_b4",
       "4096x32768x512": "128x256_s3_c1x2_promoted_tma_b4",
       "4096x7168x16384": "256x128_s4_c2x1_promoted_tma_b1",
       "4096x4096x7168": "256x128_s4_c2x1_promoted_tma_b1",
       "4096x7168x2048": "128x256_s3_c1x2_promoted_tma_b4"}


def ch07_ab():
    lines = ["| run | " + " | ".join(NEW) + " |", "|---|" + "---:|" * len(NEW)]
    with tarfile.open(os.path.join(HERE, "callD_c8abf19", "ab.txz")) as t:
        for member in sorted(m for m in t.getnames() if m.endswith(".json")):
            doc = json.load(io.TextIOWrapper(t.extractfile(member)))
            med = {}
            for b in doc["benchmarks"]:
                m = re.match(r"ch07:([^/]+)/(\d+x\d+x\d+)", b["name"])
                if m and b.get("run_type") != "aggregate":
                    med[(m.group(1), m.group(2))] = b["median_us"]
            cells = [f"{med[(NEW[s], s)] / med[(OLD[s], s)]:.4f}" for s in NEW]
            lines.append(f"| {os.path.basename(member)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(ch07_interleaved() + "\n\n" + ch07_ab())
