#!/usr/bin/env python3
"""Session 49: variants of the rule table_sms replayed in Python (session 48's rescale_check.py
model of the library's rule: whole waves, 3% margin, the row kept on fewer SMs where its waves do
not change) against every 112-SM sweep since session 46, counting picks within 3% of the fastest
by each sweep's ranking (its interleaved confirmation where a shape has one; a pick it did not
confirm is a miss):
  block  the library's rule: every candidate by its block median (unchanged)
  cal    confirmed candidates by their confirmed medians, the rest by block median times the
         row's confirmed / block ratio
  auto   confirmed medians only where the confirmation overturned the block ranking at the row
  guard  the library's rule, and the row kept unless its waves grow by a factor more than 3%
         above the other kernel's (the guard tried in the C++ and reverted: it fixed 8192^3 and
         reversed 4096 x 24576 x 1536, which calls 4-6 measured 3.0-3.5% the other way)
The sweeps: the per-tensor ones of session 48 (H100 call 3, H200 call 5), the block-scaled one of
session 46 (H200, the committed CTest's data) and session 49's call 1 (H100: 8192^3, MXFP8).
  python3 plots/data/h200/session49/rescale_variants.py      (output: rescale_variants.txt)
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "session48"))
import rescale_check as R  # noqa: E402

S48 = os.path.join(HERE, "..", "session48")
CH10 = os.path.join(HERE, "..", "ch10")
C1 = os.path.join(HERE, "call1_h100_a2836d9")


def candidates(mode, res):
    block = {k: v[0] for k, v in res.items()}
    conf = {k: v[1] for k, v in res.items() if v[1]}
    if mode in ("block", "guard") or not conf:
        return block
    row = min(conf, key=conf.get)
    if mode == "cal":
        c = conf[row] / block[row]
        return {k: conf.get(k, block[k] * c) for k in block}
    return block if min(block, key=block.get) == row else conf  # auto


def pick(mode, shape, res, row, usable, swept, margin=0.03):
    cands = candidates(mode, res)
    p = R.choice("int", shape, cands, row, usable, swept, margin)
    if mode == "guard" and p != row and row in cands:
        share = lambda k: R.ratio("int", shape, k, usable, swept)
        if share(row) <= share(p) * (1 + margin):
            return row
    return p


def evaluate(label, table_sweep, test_sweep, families, total):
    A, B = R.load(table_sweep), R.load(test_sweep)
    print(label)
    for mode in ("block", "cal", "auto", "guard"):
        n, misses = 0, []
        for (family, shape), results in sorted(B.items()):
            if family not in families or (family, shape) not in A:
                continue
            ra = R.ranking(A[(family, shape)])
            row = min(ra, key=ra.get)
            p = pick(mode, shape, A[(family, shape)], row, 112, 132)
            rb = R.ranking(results)
            best = min(rb, key=rb.get)
            n += 1
            if p not in rb:
                misses.append(f"{family} {shape} {p}: not confirmed")
            elif rb[p] > 1.03 * rb[best]:
                misses.append(f"{family} {shape} {p}: {rb[p] / rb[best]:.3f}x the fastest")
        total.setdefault("count", {}).setdefault(mode, 0)
        total["count"][mode] += n - len(misses)
        total.setdefault("of", {}).setdefault(mode, 0)
        total["of"][mode] += n
        print(f"  {mode:6s} {n - len(misses)}/{n} within 3%" + "".join("\n      miss: " + m for m in misses))


if __name__ == "__main__":
    pt = ["per_tensor_promoted", "per_tensor_fast"]
    t = {}
    table = os.path.join(CH10, "dispatch_sweep.json")
    evaluate("H100, per-tensor, 112 SMs (session 48 call 3)", table,
             os.path.join(S48, "call3_h100_6557f23", "dispatch_sweep_per_tensor_sms112_6557f23.json"), pt, t)
    evaluate("H200, per-tensor, 112 SMs (session 48 call 5)", table,
             os.path.join(S48, "call5_h200_3d2ce3a", "dispatch_sweep_per_tensor_sms112_3d2ce3a.json"), pt, t)
    evaluate("H200, block-scaled, 112 SMs (session 46; the CTest's data)",
             os.path.join(CH10, "dispatch_sweep_block_scaled.json"),
             os.path.join(CH10, "dispatch_sweep_block_scaled_sms112.json"), ["block_scaled"], t)
    evaluate("H100, 8192^3, 112 SMs (session 49 call 1)", table,
             os.path.join(C1, "dispatch_sweep_sq_sms112_a2836d9.json"), pt + ["block_scaled"], t)
    evaluate("H100, MXFP8, 112 SMs (session 49 call 1)", table,
             os.path.join(C1, "dispatch_sweep_mx_sms112_a2836d9.json"), ["mxfp8_hopper"], t)
    print("total: " + ", ".join(f"{m} {t['count'][m]}/{t['of'][m]}" for m in ("block", "cal", "auto", "guard")))
