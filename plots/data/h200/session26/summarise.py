#!/usr/bin/env python3
"""Session 26, call C (binaries and PyTorch package of c8abf19 (6055bb7's GEMM kernels): chapters 6 and 7 with the picks of
the table re-learned from the full dispatch sweep at 945b0eb): chapter 7 against DeepGEMM in one
process, interleaved (bench/peers.py --interleave --impls fp8gemm_block_scaled,deepgemm
--cupti-launches 0; an L2 flush and a 50 us GPU-side delay before each timed call), printed as
time ratios inverted (> 1: ours faster) by session 17's table (../engine_wait/peers.py), as
session 24's summarise.py does.

    python3 plots/data/h200/session26/summarise.py
"""
import glob
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "engine_wait"))
import peers as session17  # noqa: E402  (its chapter-7 table and JSON reader)


def ch07():
    folder = os.path.join(HERE, "callC_c8abf19")
    (path,) = glob.glob(os.path.join(folder, "peers_ch07_interleaved_*.json"))
    return session17.ch07(os.path.basename(path), folder)


if __name__ == "__main__":
    print(ch07())
