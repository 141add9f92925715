#!/usr/bin/env python3
"""Session 36, call 5: does the order of the experts change the grouped forward's time? The same
seeded skewed groups (bench/peers_moe.py's 8192- and 65536-token cases) given in four orders:
`orig` (the peers' order), `desc` (largest expert first), `asc` (smallest first) and `mix`
(largest, smallest, second largest, second smallest, ...). The total work is the same; the tile
schedule walks the groups in the given order, so a compute-heavy expert's tiles (many row tiles
sharing each B slice) and a memory-heavy one's (one row tile per B slice: 2 x rows FLOP per byte
of B, below the H200's ~370) run side by side in `mix` and apart in `desc`/`asc`.

    python3 plots/data/h200/session36/group_order.py [JSON ...]   (default: call5's runs)
    python3 plots/data/h200/session36/group_order.py --check chapters/08_grouped_moe/NOTEBOOK.md
"""
import collections
import glob
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "ch08"))
import readme_block  # noqa: E402

ORDERS = ["orig", "desc", "asc", "mix"]


def table(files):
    out = []
    t = collections.defaultdict(list)  # (kernel, base case, order) -> [us per run]
    for f in files:
        for (kernel, case), us in readme_block.executable_medians(f).items():
            m = re.match(r"(.+)_(orig|desc|asc|mix)$", case)
            if m:
                t[(kernel, m.group(1), m.group(2))].append(us)
    out.append("| kernel | case | " + " | ".join(f"`{o}` us" for o in ORDERS) + " | "
               + " | ".join(f"`{o}` / `orig`" for o in ORDERS[1:]) + " |")
    out.append("|---|---|" + "---|" * len(ORDERS) + "---:|" * (len(ORDERS) - 1))
    for kernel, case in sorted({(k, c) for k, c, _ in t}):
        cells, ratios = [], []
        base = t.get((kernel, case, "orig"))
        for o in ORDERS:
            v = t.get((kernel, case, o))
            cells.append(", ".join(f"{x:.1f}" for x in v) if v else "-")
            if o != "orig":
                ratios.append(f"{statistics.mean(v) / statistics.mean(base):.3f}" if v and base else "-")
        out.append(f"| `{kernel}` | {case} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
    return "\n".join(out)


if __name__ == "__main__":
    argv = sys.argv[1:]
    default = sorted(glob.glob(os.path.join(HERE, "call5*", "order_*.json")))
    if "--check" in argv:
        readme_block.check(argv[argv.index("--check") + 1], "session36-order", table(default),
                           "session36/group_order.py", "plots/data/h200/session36/call5_53fe42f/")
    else:
        print(table(argv or default))
