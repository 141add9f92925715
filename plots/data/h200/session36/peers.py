#!/usr/bin/env python3
"""Session 36, call 6: issue 10's peers in one process, interleaved (bench/peers_moe.py
--interleave --delay-us 150 --cupti-launches 0, the PyTorch package of 53fe42f, DeepGEMM 2.6.1),
a second run of the kernels session 35's call 7 timed at b8164d1 (no grouped kernel changed
since), that run's ratios in brackets.

    python3 plots/data/h200/session36/peers.py
    python3 plots/data/h200/session36/peers.py --check chapters/08_grouped_moe/NOTEBOOK.md
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "ch08"))
import readme_block  # noqa: E402
sys.path.insert(0, os.path.join(HERE, "..", "session31"))
import summarise as session31  # noqa: E402

CALL6 = os.path.join(HERE, "call6_53fe42f")
S35_CALL7 = os.path.join(HERE, "..", "session35", "call7_b8164d1")


def table():
    return session31.peers_table(session31.medians(CALL6), session31.medians(S35_CALL7),
                                 "session 35", "call 6")


if __name__ == "__main__":
    readme_block.table_main(sys.argv, "session36-peers", table, "session36/peers.py",
                            "plots/data/h200/session36/call6_53fe42f/")
