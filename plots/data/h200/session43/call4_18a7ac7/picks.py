#!/usr/bin/env python3
"""The block-scaled kernel a fresh fp8gemm_dispatch_sweep JSON ranks fastest per shape, as the
library's FP8GEMM_KERNEL_BLOCK_SCALED value "MxNxK=NAME,..." (what tools/gen_dispatch_table.py
would put in the table: the interleaved confirmation medians, confirm_median_us, rank a shape
where at least two kernels have one; else the block medians). Also prints, to stderr, each shape's
pick and, given the library's current table as a file of "MxNxK NAME" lines, that kernel's time
over the pick's in the same sweep.
Usage: picks.py SWEEP_JSON [CURRENT_TABLE_TXT]"""
import json
import sys

doc = json.load(open(sys.argv[1]))
current = {}
if len(sys.argv) > 2:
    for line in open(sys.argv[2]):
        if line.strip():
            s, k = line.split()
            current[s] = k
block, confirm = {}, {}
for r in doc["results"]:
    if r.get("family") != "block_scaled" or r.get("peer") or not r.get("ok"):
        continue
    block.setdefault(r["shape"], {})[r["kernel"]] = float(r["median_us"])
    if r.get("confirm_median_us") is not None:
        confirm.setdefault(r["shape"], {})[r["kernel"]] = float(r["confirm_median_us"])
out = []
for shape in sorted(block, key=lambda s: [int(x) for x in s.split("x")]):
    times = confirm[shape] if len(confirm.get(shape, {})) >= 2 else block[shape]
    best = min(times, key=times.get)
    out.append(f"{shape}={best}")
    cur = current.get(shape)
    note = ""
    if cur and cur in times:
        note = f"  current table {cur}: {times[cur] / times[best]:.3f}x the pick's time"
    elif cur:
        note = f"  current table {cur}: not confirmed in this run"
    print(f"{shape}: {best} {times[best]:.2f} us{note}", file=sys.stderr)
print(",".join(out))
