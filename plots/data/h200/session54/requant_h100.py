#!/usr/bin/env python3
"""Session 54's chapter-9 table: the requantize_block_scaled path on an H100 (call 6, a8ff964),
from call6_a8ff964/requant.json (`ch09_hopper_mxfp8 --gpu_delay_us=50`: the three Hopper paths,
the path's chapter-7 GEMM alone, the weights-once recipe and chapter 7, in one process). Session
53's table (session53/requant_h100.py) with one column more: ch09_requant_weights_once, the path as
an inference user with fixed MXFP8 weights runs it from the public functions (B re-quantised once,
outside the timing; per call requantize_mx on A alone, then chapter 7's plan). Per shape: the path
and the weights-once recipe over chapter 7 (median against median), the path's re-quantisation
(its median minus its GEMM's; GB/s: the 2 (M + N) K bytes it reads and writes over that time, a
model of its traffic, not ncu's DRAM count), its GEMM alone over chapter 7; then the geomeans over
the six M = 4096 DeepSeek-V3 shapes, the other two paths' beside them.
Usage: python3 requant_h100.py [--check README] (--check: README's requant-h100 block must equal
this output; CTest chapter_09_requant_h100)."""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "ch08"))
import readme_block  # noqa: E402

# Session 53's script by its path (it has this file's name, so not through sys.path): its
# table_of, with the weights-once column.
_spec = importlib.util.spec_from_file_location(
    "session53_requant_h100", os.path.join(HERE, "..", "session53", "requant_h100.py"))
_session53 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_session53)
table_of = _session53.table_of

SOURCE = "plots/data/h200/session54/call6_a8ff964/requant.json"


def table():
    return table_of(os.path.join(HERE, "call6_a8ff964", "requant.json"), SOURCE, once=True)


if __name__ == "__main__":
    readme_block.table_main(sys.argv, "requant-h100", table, "chapter_09_requant_h100", SOURCE)
