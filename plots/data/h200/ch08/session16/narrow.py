#!/usr/bin/env python3
"""Session 16, calls 1-4: chapter 8's narrow tiles (256 x 112, 128 x 224) against the tiles they cut
(256 x 128, 128 x 256) on the masked N = 7168 cases, each call two runs of ch08_grouped_moe (the
kernels' order reversed; each run interleaves its kernels per case). Prints the README's table: per
case and call, the narrow kernel's time over its base tile's in the same run, the mean of the two
runs. With --check README, exits 1 unless README's block between <!-- session16-narrow:begin -->
and <!-- session16-narrow:end --> is exactly that output.

    python3 plots/data/h200/ch08/session16/narrow.py [--check chapters/08_grouped_moe/NOTEBOOK.md]
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import readme_block  # noqa: E402  (plots/data/h200/ch08/readme_block.py)

HERE = os.path.dirname(os.path.abspath(__file__))
CALLS = [("11fd3af", 1), ("29b55d1", 2), ("57017c8", 3), ("35e7540", 4)]
P = "ch08:{}_promoted_tma_{}"
BASE = {"256": P.format("256x128_s4_c1x1", "b1"), "128": P.format("128x256_s4_c1x1", "b1")}
# (column title, call, kernel, base)
COLUMNS = [
    ("256 x 112, choice in the loop, 8x, b1 (1)", 1, P.format("256x112_s4_c1x1", "b1"), "256"),
    ("per tile, 8x, b1 (2)", 2, P.format("256x112_s4_c1x1", "b1"), "256"),
    ("per tile, 8x, b7 (3)", 3, P.format("256x112_s4_c1x1", "b7"), "256"),
    ("per tile, rolled, b7 (4)", 4, P.format("256x112_s4_c1x1", "b7_loop1"), "256"),
    ("128 x 224, choice in the loop, 4x, b1 (1)", 1, P.format("128x224_s4_c1x1", "b1"), "128"),
    ("per tile, 4x, b1 (2)", 2, P.format("128x224_s4_c1x1", "b1"), "128"),
    ("per tile, 4x, b3 (3)", 3, P.format("128x224_s4_c1x1", "b3"), "128"),
    ("per tile, rolled, b3 (4)", 4, P.format("128x224_s4_c1x1", "b3_loop1"), "128"),
]
CASES = ["masked_g1x1024_n7168_k2048", "masked_g2x512_n7168_k2048", "masked_g4x256_n7168_k2048",
         "masked_g2x256_n7168_k2048", "masked_g8x128_n7168_k2048"]


def load(commit, call):
    runs = []
    for first in ("base", "narrow"):
        d = json.load(open(os.path.join(HERE, f"masked_{first}_first_{commit}_call{call}.json")))
        assert d["context"]["git_commit"].startswith(commit), d["context"]["git_commit"]
        by = {}
        for b in d["benchmarks"]:
            impl, case = b["name"].split("/")[:2]
            by[(impl, case)] = b["real_time"]
        runs.append((d["context"], by))
    return runs


data = {call: load(commit, call) for commit, call in CALLS}
ctx = data[1][0][0]
lines = [f"Sources: `masked_{{base,narrow}}_first_<commit>_call<N>.json` of calls 1-4 (commits "
         f"{', '.join(c for c, _ in CALLS)}; {ctx['gpu']}, timing {ctx['timing']}, GPU delay "
         f"{float(ctx['gpu_delay_us']):.0f} us, L2 flushed before each timed call). Each cell: the narrow "
         "kernel's time over that of the tile it cuts (256 x 128 or 128 x 256, 4 stages, no cluster) in "
         "the same run, the mean of the call's two runs; 0.875 would be the narrow tile's share of the "
         "work.\n",
         "| case | " + " | ".join(t for t, *_ in COLUMNS) + " |",
         "|---|" + "---:|" * len(COLUMNS)]
for case in CASES:
    cells = []
    for _, call, kernel, base in COLUMNS:
        r = [by[(kernel, case)] / by[(BASE[base], case)] for _, by in data[call]]
        cells.append(f"{sum(r) / len(r):.2f}")
    lines.append(f"| `{case}` | " + " | ".join(cells) + " |")
text = "\n".join(lines)
args = sys.argv[1:]
if "--check" in args:
    readme_block.check(args[args.index("--check") + 1], "session16-narrow", text, "narrow.py",
                       "the JSON")
else:
    print(text)
