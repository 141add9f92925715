#!/usr/bin/env python3
"""Session 33, from the committed files:

  call 2 (03880fe): chapter 8's executable on the skewed 8192-token cases (the ones whose plan
      picks the static 128 x 256 kernel), forward only, the static kernel and its _dyn twin (tiles
      drawn from a counter) in one process, four runs in alternating order (call2_03880fe/dyn_*.json):
      _dyn / static time per case;
  tile_work.py: the tensor-core work of each side of issue 10's skewed comparison in 64-row slabs;
  call 4 (15e58a2): issue 10's peers in one process, interleaved (bench/peers_moe.py --interleave
      --delay-us 150 --cupti-launches 0), the PyTorch grouped op on the counter schedule, beside
      session 32's call 2;
  call 6 (454b1a9): the counter kernel against the plan's 256 x 128 1 x 2 default on the skewed
      32768- and 65536-token groups (1024 and 2048 rows per expert on average), forward only, two
      runs in opposite orders (call6_454b1a9/thr_*.json).

    python3 plots/data/h200/session33/summarise.py
    python3 plots/data/h200/session33/summarise.py --check chapters/08_grouped_moe/NOTEBOOK.md
"""
import collections
import contextlib
import glob
import io
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "ch08"))
sys.path.insert(0, os.path.join(HERE, "..", "session31"))
import readme_block  # noqa: E402  (the README check)
import summarise as session31  # noqa: E402  (the peers' table)
import tile_work  # noqa: E402

CALL2 = os.path.join(HERE, "call2_03880fe")
CALL4 = os.path.join(HERE, "call4_15e58a2")
CALL6 = os.path.join(HERE, "call6_454b1a9")
S32 = os.path.join(HERE, "..", "session32", "call2_622dbc7")


def times(pattern, other):
    """{case: {"dyn": [us per run], other: [...]}} of chapter 8's JSON files matching `pattern`:
    the _dyn kernel's times and the other kernel's, run by run."""
    t = collections.defaultdict(lambda: collections.defaultdict(list))
    for f in sorted(glob.glob(pattern)):
        for b in json.load(open(f))["benchmarks"]:
            impl, case = b["name"].split("/")[:2]
            if impl.startswith("ch08:"):
                t[case]["dyn" if impl.endswith("_dyn") else other].append(b["real_time"])
    return t


def dyn_static():
    t = times(os.path.join(CALL2, "dyn_*.json"), "static")
    lines = ["| case | static 128 x 256, us (runs 1-4) | _dyn, us (runs 1-4) | _dyn / static (means) |",
             "|---|---:|---:|---:|"]
    for case in sorted(t):
        s, d = t[case]["static"], t[case]["dyn"]
        lines.append(f"| {case} | {', '.join(f'{x:.1f}' for x in s)} | {', '.join(f'{x:.1f}' for x in d)} | "
                     f"**{sum(d) / len(d) / (sum(s) / len(s)):.3f}** |")
    return "\n".join(lines)


def threshold():
    t = times(os.path.join(CALL6, "thr_*.json"), "default")
    lines = ["| case (rows per expert on average) | 256 x 128, 1 x 2 (the default), us (runs 1, 2) | "
             "128 x 256 _dyn, us (runs 1, 2) | _dyn / default (means) |",
             "|---|---:|---:|---:|"]
    for case in sorted(t, key=lambda c: (int(c.split("_t")[1].split("_")[0]), c)):
        s, d = t[case]["default"], t[case]["dyn"]
        mean = int(case.split("_t")[1].split("_")[0]) // 32
        lines.append(f"| {case} ({mean}) | {', '.join(f'{x:.1f}' for x in s)} | {', '.join(f'{x:.1f}' for x in d)} | "
                     f"**{sum(d) / len(d) / (sum(s) / len(s)):.3f}** |")
    return "\n".join(lines)


def work():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        tile_work.main()
    return out.getvalue().strip()


def peers():
    return session31.peers_table(session31.medians(CALL4), session31.medians(S32), "session 32",
                                 "call 4")


def blocks():
    return {"session33-dyn": dyn_static(), "session33-work": work(), "session33-peers": peers(),
            "session33-threshold": threshold()}


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        for marker, text in blocks().items():
            readme_block.check(sys.argv[2], marker, text, "session33/summarise.py",
                               "plots/data/h200/session33/")
    else:
        for marker, text in blocks().items():
            print(f"<!-- {marker}:begin -->\n{text}\n<!-- {marker}:end -->\n")
