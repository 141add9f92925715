#!/usr/bin/env python3
"""Session 23, call 2 (binaries and PyTorch package of 442e347: the early first wave the default of
chapter 7's large tiles): chapter 7 against DeepGEMM in one process, interleaved (bench/peers.py
--interleave --impls fp8gemm_block_scaled,deepgemm --cupti-launches 0; an L2 flush and a 50 us
GPU-side delay before each timed call; rounds of one call each; medians), printed as session 17's
and 20's tables are (../engine_wait/peers.py).

    python3 plots/data/h200/session23/summarise.py
"""
import glob
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "engine_wait"))
import peers as session17  # noqa: E402  (its chapter-7 table and JSON reader)

if __name__ == "__main__":
    d = os.path.join(HERE, "call2_442e347")
    (path,) = glob.glob(os.path.join(d, "peers_ch07_*.json"))
    print(session17.ch07(os.path.basename(path), d))
