#!/usr/bin/env python3
"""Session 24 (binaries and PyTorch package of 6e6f2fc: the pinned early-wave loop the default of
chapters 6, 7 and 8's large tiles): the peers in one process, interleaved, printed as session 20's
tables are (../peers_session20/summarise.py: time ratios inverted, > 1 = ours faster):

  call 2: chapter 7 against DeepGEMM (bench/peers.py --interleave --impls
      fp8gemm_block_scaled,deepgemm --cupti-launches 0; L2 flush and a 50 us GPU-side delay
      before each timed call);
  call 3: chapter 8 against DeepGEMM and torch's grouped scaled_mm (bench/peers_moe.py
      --interleave --delay-us 150 --cupti-launches 0).

    python3 plots/data/h200/session24/summarise.py
"""
import glob
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "peers_session20"))
import summarise as session20  # noqa: E402  (its chapter 7 and chapter 8 tables)


def table(sub, fn):
    session20.HERE = os.path.join(HERE, sub)
    return fn()


if __name__ == "__main__":
    print(table("call2_6e6f2fc", session20.ch07) + "\n\n" + table("call3_6e6f2fc", session20.ch08))
