#!/usr/bin/env python3
"""Session 33: how much tensor-core work each side of issue 10's skewed comparison does, to say
what its 1.2x DeepGEMM target asks of the GEMM itself. Arithmetic on the peers' seeded groups
(bench/peers_moe.py), no measurement.

A wgmma is 64 rows tall, so work is counted in 64-row slabs, each N x K. DeepGEMM's contiguous
layout pads every expert to a multiple of 128 rows and marks the padding rows -1 in m_indices; its
SM90 kernel skips a consumer warpgroup whose first row is padding
(deep_gemm/include/deep_gemm/scheduler/gemm.cuh, is_computation_valid), so an expert of c rows
costs it ceil(c / 64) slabs (BLOCK_M 64 or 128; the alignment allows no larger). Ours, the plan's
default tiles (grouped_gemm.cpp): 128 x 256 below 1024 rows per expert on average, two warpgroups
of 64 rows, the idle one skipped since session 32: ceil(c / 64) slabs, the same; 256 x 128 above,
two warpgroups of 128 rows (two slabs each, no skip inside a warpgroup): 2 ceil(c / 128).

"ours / DeepGEMM (speed) at equal time per slab" is DeepGEMM's slabs over ours: the ratio issue 10
compares (DeepGEMM's GEMM time over ours) if both kernels did a slab in the same time. Every gain
over it has to come from doing a slab faster.

    python3 plots/data/h200/session33/tile_work.py
"""
import importlib.util
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("peers_moe", os.path.join(HERE, "..", "..", "..", "..",
                                                                          "bench", "peers_moe.py"))
peers_moe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peers_moe)


def main():
    print("| workload | real rows | DeepGEMM's padded rows | its 64-row slabs | our default tile | our slabs | "
          "ours / DeepGEMM (speed) at equal time per slab |")
    print("|---|---:|---:|---:|---|---:|---:|")
    for total in (8192, 65536):
        counts = peers_moe.skewed_counts(total, 32, peers_moe.workload_seed(0, 32, total), 1.0, 2)
        padded = sum(peers_moe.align(c) for c in counts)
        dg = sum(math.ceil(c / 64) for c in counts)
        if total < 1024 * 32:
            tile, ours = "128 x 256", sum(math.ceil(c / 64) for c in counts)
        else:
            tile, ours = "256 x 128", sum(2 * math.ceil(c / 128) for c in counts)
        print(f"| skew_g32_t{total} | {sum(counts)} | {padded} | {dg} | {tile} | {ours} | {dg / ours:.3f} |")


if __name__ == "__main__":
    main()
