#!/usr/bin/env python3
"""Session 32: a model of the grouped forward's persistent grid, to say why skipping a tile's idle
warpgroup (common/engine/kernel.cuh, SkipsIdleRows) moves the kernel's time so little, and what a
schedule that hands tiles out from a counter (common/engine/grouped.cuh, GroupedDynamicMath)
would give. A model, not a measurement: its cost per tile is an assumption stated below.

Tiles as the engine numbers them (grouped_schedule.hpp): group by group, within a group the row
tile fastest, then the column tile; P = 132 CTAs. The fixed stride gives CTA c the tiles
c, c + P, c + 2P, ...; the counter gives each next tile to the CTA that is free first. A tile costs
its K blocks plus an epilogue of `epi` K blocks when both consumer warpgroups have rows;
`alpha` x the K blocks plus half the epilogue when only the first has (one warpgroup's loop alone
on the tensor cores: its promotions no longer hidden behind the other's wgmma, session 19's
timeline puts a two-warpgroup K block at ~1100 cycles against 1024 of tensor work). The kernel's
time is the most loaded CTA's. Clusters are ignored (the 65536-token default pairs column tiles
in 1 x 2 clusters; both CTAs of a pair have the same rows).

    python3 plots/data/h200/session32/schedule_model.py [--alpha 0.8] [--epi 3]
"""
import argparse
import heapq
import importlib.util
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("peers_moe", os.path.join(HERE, "..", "..", "..", "..",
                                                                          "bench", "peers_moe.py"))
peers_moe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peers_moe)
P = 132


def tiles(counts, block_m, block_n, N, wg_rows):
    """Per tile, in the engine's order: how many consumer warpgroups have rows in it."""
    out = []
    for c in counts:
        for _ in range(math.ceil(N / block_n)):
            for m in range(math.ceil(c / block_m)):
                rows = min(c - m * block_m, block_m)
                out.append(math.ceil(rows / wg_rows))
    return out


def fixed_stride(costs):
    load = [0.0] * P
    for i, c in enumerate(costs):
        load[i % P] += c
    return max(load), sum(load) / P


def from_counter(costs):
    free = [(0.0, c) for c in range(P)]
    for c in costs:
        t, cta = heapq.heappop(free)
        heapq.heappush(free, (t + c, cta))
    return max(t for t, _ in free)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--alpha", type=float, default=0.8, help="a one-warpgroup K block's cost (default 0.8)")
    ap.add_argument("--epi", type=float, default=3.0, help="the epilogue's cost in K blocks (default 3)")
    a = ap.parse_args()
    print(f"alpha {a.alpha}, epilogue {a.epi} K blocks; times relative to the fixed stride without the skip")
    print("| case | tile | tiles | with an idle warpgroup | skip, fixed stride | skip, mean load (perfect balance) | skip, from a counter |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for total in (8192, 65536):
        counts = peers_moe.skewed_counts(total, 32, peers_moe.workload_seed(0, 32, total), 1.0, 2)
        # The plan's defaults (grouped_gemm.cpp): 128 x 256 below 1024 rows per group on average
        # (two warpgroups of 64 rows), 256 x 128 above (two of 128).
        bm, bn, wg = (128, 256, 64) if total < 1024 * 32 else (256, 128, 128)
        for N, K in ((4096, 7168), (7168, 2048)):
            ts = tiles(counts, bm, bn, N, wg)
            kb = K // 128
            full = kb + a.epi
            before = [full] * len(ts)
            after = [full if w == 2 else kb * a.alpha + a.epi / 2 if w == 1 else 0.0 for w in ts]
            t0, _ = fixed_stride(before)
            t1, mean = fixed_stride(after)
            print(f"| skew_g32_t{total}_n{N}_k{K} | {bm} x {bn} | {len(ts)} | {sum(w == 1 for w in ts)} | "
                  f"{t1 / t0:.3f} | {mean / t0:.3f} | {from_counter(after) / t0:.3f} |")


if __name__ == "__main__":
    main()
