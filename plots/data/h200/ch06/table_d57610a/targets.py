#!/usr/bin/env python3
"""Issue 8's targets from one run of chapter 6's executable (its default table, chapter 6 and
cuBLASLt per-tensor interleaved in the same process): session 20, call 2, binaries of d57610a (the
kernels of 4aa7ef8: the scheduler's FastDiv included), by scripts/gpu_loop.sh's chapters step.
Ratios are cuBLASLt's time over ours (> 1: ours faster). Usage: targets.py [JSON]"""
import json, math, os, sys

path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "ch06_d57610a.json")
d = json.load(open(path))
t = {b["name"].split("/iterations")[0]: b["real_time"] for b in d["benchmarks"] if "real_time" in b}
M4096 = ["4096x2112x7168", "4096x24576x1536", "4096x32768x512", "4096x7168x16384",
         "4096x4096x7168", "4096x7168x2048"]
SMALL = [f"{m}x{nk}" for m in (64, 128) for nk in ("2112x7168", "24576x1536", "32768x512",
                                                  "7168x16384", "4096x7168", "7168x2048")]


def r(mode, s):
    peer = "cublaslt_per_tensor" if mode == "fast" else "cublaslt_per_tensor_promoted"
    return t[f"{peer}/{s}"] / t[f"ch06_{mode}/{s}"]


def gm(v):
    return math.exp(sum(map(math.log, v)) / len(v))


print(f"commit {d['context'].get('git_commit', '?')[:10]}")
for s in ["8192x8192x8192", "4096x4096x4096", "2048x2048x2048"]:
    print(f"fast {s}: {r('fast', s):.3f}x cuBLASLt fast")
print("fast, six M = 4096 shapes: " + ", ".join(f"{r('fast', s):.3f}" for s in M4096)
      + f"; geomean {gm([r('fast', s) for s in M4096]):.3f}x (target 1.05)")
print("promoted, same shapes: " + ", ".join(f"{r('promoted', s):.3f}" for s in M4096)
      + f"; geomean {gm([r('promoted', s) for s in M4096]):.3f}x (target 1.10)")
print("promoted / fast (ours), same shapes: " + ", ".join(
    f"{t[f'ch06_fast/{s}'] / t[f'ch06_promoted/{s}']:.3f}" for s in M4096 + ["8192x8192x8192"])
      + " (the last 8192^3; target >= 0.95)")
low = [(r(m, s), m, s) for m in ("fast", "promoted") for s in SMALL]
print(f"M = 64 and 128: {sum(1 for x in low if x[0] >= 0.9)} of {len(low)} at >= 0.9x; lowest "
      + ", ".join(f"{s} {m} {v:.3f}" for v, m, s in sorted(low)[:3]))
