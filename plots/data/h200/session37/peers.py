#!/usr/bin/env python3
"""Session 37, call 4: issue 10's peers in one process, interleaved (bench/peers_moe.py
--interleave --delay-us 150 --cupti-launches 0, the PyTorch package of db77afb: the masked rule
to K = 4096, one-CTA clusters launched as plain grids; DeepGEMM 2.6.1), session 36's call 6
ratios in brackets.

    python3 plots/data/h200/session37/peers.py
    python3 plots/data/h200/session37/peers.py --check chapters/08_grouped_moe/NOTEBOOK.md
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "ch08"))
import readme_block  # noqa: E402
sys.path.insert(0, os.path.join(HERE, "..", "session31"))
import summarise as session31  # noqa: E402

CALL4 = os.path.join(HERE, "call4_db77afb")
S36_CALL6 = os.path.join(HERE, "..", "session36", "call6_53fe42f")


def table():
    return session31.peers_table(session31.medians(CALL4), session31.medians(S36_CALL6),
                                 "session 36", "call 4")


if __name__ == "__main__":
    readme_block.table_main(sys.argv, "session37-peers", table, "session37/peers.py",
                            "plots/data/h200/session37/call4_db77afb/")
