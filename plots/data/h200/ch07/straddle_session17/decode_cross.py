#!/usr/bin/env python3
"""Session 17: chapter 7's decode table kernels (and their _spin twins) in call 3 (binaries of
81c7fc5: the promotion without a run-time offset choice, 7787d2c) over the same kernels in call 1
(4f77b7d, before it), same command, same five shapes: the median time of call 3 over the mean of
call 1's two runs. Different GPU sessions: a hint, not a same-run comparison.

    python3 plots/data/h200/ch07/straddle_session17/decode_cross.py
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CALL1 = os.path.join(HERE, "..", "..", "engine_wait")
sys.path.insert(0, HERE)
from summarise import medians  # noqa: E402  (chapter 7's executable's JSON: {(kernel, shape): median_us})


new = medians(os.path.join(HERE, "decode_81c7fc5.json"))
old = [medians(os.path.join(CALL1, f"ch07_decode_{o}_first.json")) for o in ("sleep", "spin")]
ratios = {}
for key in sorted(new):
    r = new[key] / ((old[0][key] + old[1][key]) / 2)
    ratios[key] = r
    print(f"{key[0]:40s} {key[1]:16s} {r:.3f}")
defaults = [r for (k, _), r in ratios.items() if not k.endswith("_spin")]
print(f"defaults: {min(defaults):.3f} - {max(defaults):.3f}; all: {min(ratios.values()):.3f} - {max(ratios.values()):.3f}")
