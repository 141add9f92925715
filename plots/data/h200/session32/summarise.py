#!/usr/bin/env python3
"""Session 32: a consumer warpgroup whose rows of a grouped tile all lie past the group's end
computes nothing for it (common/engine/kernel.cuh, SkipsIdleRows), from the committed files of
each call:

  call 1 (e9e93ec): chapter 8's executable on issue 10's cases, the plan's default kernel, the
      binary of 908b391 (without the skip) and e9e93ec's in one call, order old, new, new, old
      (their JSON in call1_e9e93ec/c.txz, ab/dflt_*.json): new / old time per case;
  call 2 (622dbc7): issue 10's peers in one process, interleaved (bench/peers_moe.py --interleave
      --delay-us 150 --cupti-launches 0), beside session 31's call 3.

    python3 plots/data/h200/session32/summarise.py
    python3 plots/data/h200/session32/summarise.py --check chapters/08_grouped_moe/NOTEBOOK.md
"""
import collections
import io
import json
import os
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "session31"))
sys.path.insert(0, os.path.join(HERE, "..", "ch08"))
import readme_block  # noqa: E402  (the README check)
import summarise as session31  # noqa: E402  (the peers' table)

CALL1, CALL2 = (os.path.join(HERE, d) for d in ("call1_e9e93ec", "call2_622dbc7"))


def old_new():
    """Call 1: the default kernel's time per case, each side's two runs, from the archive."""
    t = collections.defaultdict(lambda: collections.defaultdict(list))
    with tarfile.open(os.path.join(CALL1, "c.txz")) as tar:
        for m in sorted(tar.getmembers(), key=lambda m: m.name):
            name = os.path.basename(m.name)
            if not (name.startswith("dflt_") and name.endswith(".json")):
                continue
            side = name.split("_")[1]  # dflt_<old|new>_<run>.json
            for b in json.load(io.TextIOWrapper(tar.extractfile(m)))["benchmarks"]:
                impl, case = b["name"].split("/")[:2]
                if impl in ("ch08_grouped", "ch08_wgrad"):
                    t[case][side].append(b["real_time"])
    kinds = session31.KINDS
    lines = ["| case (the plan's default kernel) | 908b391 (1st and 4th run), us | e9e93ec (2nd and 3rd), us | e9e93ec / 908b391 |",
             "|---|---:|---:|---:|"]
    for case in sorted(t, key=lambda c: (kinds.index(c.split("_")[0]), c)):
        o, n = t[case]["old"], t[case]["new"]
        lines.append(f"| {case} | {', '.join(f'{x:.1f}' for x in o)} | {', '.join(f'{x:.1f}' for x in n)} | "
                     f"**{sum(n) / len(n) / (sum(o) / len(o)):.3f}** |")
    return "\n".join(lines)


def peers():
    return session31.peers_table(session31.medians(CALL2), session31.medians(session31.CALL3),
                                 "session 31", "call 2")


def blocks():
    return {"session32-skip": old_new(), "session32-peers": peers()}


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        for marker, text in blocks().items():
            readme_block.check(sys.argv[2], marker, text, "session32/summarise.py",
                               "plots/data/h200/session32/call{1,2}_*/")
    else:
        for marker, text in blocks().items():
            print(f"<!-- {marker}:begin -->\n{text}\n<!-- {marker}:end -->\n")
