#!/usr/bin/env python3
"""Session 36, call 7: the masked 3-stage tile with a staging buffer per store unit
(256x128_s3_c1x1_promoted_tma_b4, the masked default at K <= 2048 and M_max >= 1024 since session
35) against the default at K > 2048 (256x128_s4_c1x1_promoted_tma_b1), masked calls with
M_max >= 1024 at K 4096 and 7168, four runs in alternating order, one process each.

    python3 plots/data/h200/session36/masked_k.py
    python3 plots/data/h200/session36/masked_k.py --check chapters/08_grouped_moe/NOTEBOOK.md
"""
import collections
import glob
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "ch08"))
import readme_block  # noqa: E402

DEF, S3 = "256x128_s4_c1x1_promoted_tma_b1", "256x128_s3_c1x1_promoted_tma_b4"


def table():
    t = collections.defaultdict(lambda: collections.defaultdict(list))
    for f in sorted(glob.glob(os.path.join(HERE, "call7_53fe42f", "ab_*.json"))):
        for (kernel, case), us in readme_block.executable_medians(f).items():
            t[case][kernel].append(us)
    key = lambda c: (int(c.split("_k")[1]), int(c.split("_n")[1].split("_")[0]), c)  # noqa: E731
    lines = [f"| case | `{DEF}` us | `{S3}` us | s3 b4 / s4 b1 (means) |", "|---|---|---|---:|"]
    for c in sorted(t, key=key):
        a, b = t[c][DEF], t[c][S3]
        lines.append(f"| {c} | " + ", ".join(f"{x:.1f}" for x in a) + " | "
                     + ", ".join(f"{x:.1f}" for x in b) + f" | {statistics.mean(b) / statistics.mean(a):.3f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    readme_block.table_main(sys.argv, "session36-masked-k", table, "session36/masked_k.py",
                            "plots/data/h200/session36/call7_53fe42f/")
