#!/usr/bin/env python3
"""Session 48's H200 call (call5_h200_3d2ce3a: session 47's plan, plots/data/h200/session47/
h200_call.sh, run from binaries and package of 3d2ce3a), read with session 47's summariser:
  the block-scaled dispatch sweep at M <= 128 (the new kernels 64x32_s16 and 64x64_s13 against the
  table's), the chapters' rules planning for the grid's SMs (block-scaled sweeps outside the table,
  112 SMs and all 132), and the PyTorch op against DeepGEMM 2.6.1 on 112 SMs, runs old1 / new1 /
  new2 / old2. The per-tensor check on 112 SMs: call5's check_per_tensor_*.txt and rescale_check.py.
Usage: python3 plots/data/h200/session48/summarise.py"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "session47"))
import summarise as s47  # noqa: E402

C5 = os.path.join(HERE, "call5_h200_3d2ce3a")
if __name__ == "__main__":
    s47.call1_sweep(C5, "3d2ce3a", call="Call 5 (H200)")
    s47.call1_peers(C5, "3d2ce3a", gpu="H200", call="Call 5")
    s47.call2_rules(C5, "3d2ce3a", gpu="H200", call="Call 5", families=("block_scaled",))
