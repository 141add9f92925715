#!/usr/bin/env python3
"""Same-tile comparison of the cooperative and ping-pong consumer orders (fast accumulation) from
the --kernels runs of chapter 6 in this folder: per shape, each ping-pong kernel's TFLOPS against
its cooperative twin (same tile, stages as compiled, same cluster) in each run, and the best of
each order. Prints Markdown.

  python3 plots/data/h200/ch06/pingpong_9c02c6b/summarise.py
"""
import json
import os
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))
# ping-pong kernel -> its cooperative twin (same BlockM x BlockN and cluster)
TWINS = {
    "128x192_s4_c1x1_fast_tma_b2_pp": "128x192_s4_c1x1_fast_tma_b3",
    "128x192_s4_c2x1_fast_tma_b2_pp": "128x192_s4_c2x1_fast_tma_b3",
    "128x128_s6_c1x1_fast_tma_b2_pp": "128x128_s6_c1x1_fast_tma_b2",
    "128x128_s6_c2x1_fast_tma_b2_pp": "128x128_s6_c2x1_fast_tma_b2",
}


def load(path):
    with open(path) as f:
        d = json.load(f)
    out = {}
    for b in d["benchmarks"]:
        impl, shape = b["name"].split("/")[:2]
        out.setdefault(shape, {})[impl] = b["TFLOPS"]
    return d["context"]["git_commit"][:7], out


def best_cells(runs, shape, mode):
    """'TFLOPS (kernel)' of the fastest cooperative and the fastest ping-pong kernel of `mode`
    ("_fast_" or "_promoted_") at `shape`, each as 'run 1 / run 2'."""
    cells = []
    for pingpong in (False, True):
        vals = []
        for _, run in runs:
            names = [k for k in run[shape] if mode in k and k.endswith("_pp") == pingpong]
            k = max(names, key=lambda k: run[shape][k])
            vals.append(f"{run[shape][k]:.0f} (`{k}`)")
        cells.append(" / ".join(vals))
    return cells


def main():
    runs = [load(os.path.join(HERE, "call3_9c02c6b", f"cmp_{i}.json")) for i in (1, 2)]
    commit = runs[0][0]
    shapes = list(runs[0][1])
    print(f"Binaries of {commit}; two runs of `ch06_warp_specialization --kernels=...` one after "
          "the other (run 1 / run 2); TFLOPS; ratio = ping-pong / cooperative twin.\n")
    print("| shape | " + " | ".join(f"`{k}` vs twin" for k in TWINS) +
          " | best cooperative (fast) | best ping-pong |")
    print("|---|" + "---:|" * (len(TWINS) + 2))
    for s in shapes:
        cells = []
        for pp, coop in TWINS.items():
            r = [run[s][pp] / run[s][coop] for _, run in runs]
            cells.append(" / ".join(f"{x:.3f}" for x in r))
        print(f"| {s} | " + " | ".join(cells + best_cells(runs, s, "_fast_")) + " |")
    allr = [run[s][pp] / run[s][coop] for s in shapes for pp, coop in TWINS.items() for _, run in runs]
    print(f"\nGeomean of all {len(allr)} same-tile ratios: "
          f"{statistics.geometric_mean(allr):.3f}")

    # Promoted accumulation (the first --kernels runs, binaries of d26ca3f: the same ping-pong
    # kernels, before the 128 x 192 ones were added).
    runs = [load(os.path.join(HERE, "call2_d26ca3f", f"kernels_{i}.json")) for i in (1, 2)]
    pp, coop = "128x128_s6_c2x1_promoted_tma_b2_pp", "128x128_s6_c2x1_promoted_tma_b2"
    print(f"\nPromoted accumulation, binaries of {runs[0][0]} (two runs): `{pp}` against `{coop}`, "
          "and the best promoted ping-pong kernel against the best cooperative one.\n")
    print("| shape | same tile (run 1 / run 2) | best cooperative promoted | best ping-pong promoted |")
    print("|---|---:|---:|---:|")
    allp = []
    for s in runs[0][1]:
        r = [run[s][pp] / run[s][coop] for _, run in runs]
        allp += r
        print(f"| {s} | " + " / ".join(f"{x:.3f}" for x in r) + " | " +
              " | ".join(best_cells(runs, s, "_promoted_")) + " |")
    print(f"\nGeomean of the {len(allp)} promoted same-tile ratios: "
          f"{statistics.geometric_mean(allp):.3f}")


if __name__ == "__main__":
    main()
