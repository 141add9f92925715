#!/usr/bin/env python3
"""Session 35, from the committed files:

  call 1 (19dad58): the counter kernel (128 x 256, _dyn) against chapter 8's contiguous default
      (256 x 128 in 1 x 2 clusters) on the peers' seeded skewed groups (32 experts) at 1024 and
      1536 rows per expert on average, four shapes (N 4096 / 7168, K 2048 / 7168), forward only,
      runs in alternating order in one process each (call1_19dad58/thr_*.json): where the counter
      schedule's regime should end, with session 33's call 6 (1024 and 2048 rows, two shapes);
  call 2 (8ce39cb): the same at K = 4096 (the new rule's boundary), two runs (call2_8ce39cb/);
  call 3 (c09fe6a): the same at 2048 rows per expert (the regime's upper end) for the three
      shapes session 33 did not time there, two runs (call3_c09fe6a/);
  call 5 (0e690b7's binary): the same at K = 3072 (call5_3067ce7/thr_*.json), and 13 forward
      kernels on the masked N 7168 K 2048 cases, each over the masked default, two runs in opposite
      orders (masked_*.json; masked_sweep.py);
  call 6 (the same binary): 256x128_s3_c1x1_promoted_tma_b4 over the masked default on eight
      masked cases (M_max 256-2048, N 4096 / 7168, K 1024 / 2048), two runs (call6_3067ce7/);
  call 7 (b8164d1): issue 10's peers in one process, interleaved (bench/peers_moe.py --interleave
      --delay-us 150 --cupti-launches 0), beside session 33's call 4.

    python3 plots/data/h200/session35/summarise.py
    python3 plots/data/h200/session35/summarise.py --files a.json b.json ...   # any such runs
    python3 plots/data/h200/session35/summarise.py --check chapters/08_grouped_moe/NOTEBOOK.md
"""
import collections
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "ch08"))
import readme_block  # noqa: E402  (the README check)
sys.path.insert(0, os.path.join(HERE, "..", "session31"))
import summarise as session31  # noqa: E402  (the peers' table)
sys.path.insert(0, HERE)
import masked_sweep  # noqa: E402

CALL1 = os.path.join(HERE, "call1_19dad58")
CALL2 = os.path.join(HERE, "call2_8ce39cb")
CALL3 = os.path.join(HERE, "call3_c09fe6a")
CALL5 = os.path.join(HERE, "call5_3067ce7")
CALL6 = os.path.join(HERE, "call6_3067ce7")
CALL7 = os.path.join(HERE, "call7_b8164d1")
S33_CALL4 = os.path.join(HERE, "..", "session33", "call4_15e58a2")
S33_CALL6 = os.path.join(HERE, "..", "session33", "call6_454b1a9")


def times(files):
    """{case: {"dyn": [us per run], "default": [...]}} of chapter 8's JSON files: the _dyn
    kernel's times and the other kernel's, run by run (a file that cannot be read is skipped)."""
    t = collections.defaultdict(lambda: collections.defaultdict(list))
    for f in files:
        try:
            bs = json.load(open(f))["benchmarks"]
        except (OSError, ValueError, KeyError) as e:
            print(f"{f}: unreadable ({e})", file=sys.stderr)
            continue
        for b in bs:
            impl, case = b["name"].split("/")[:2]
            if impl.startswith("ch08:"):
                t[case]["dyn" if impl.endswith("_dyn") else "default"].append(b["real_time"])
    return t


def tokens(case):
    return int(case.split("_t")[1].split("_")[0])


def shape(case):
    return case.split("_", 3)[3]  # n4096_k7168


def ratio(s):
    return sum(s["dyn"]) / len(s["dyn"]) / (sum(s["default"]) / len(s["default"]))


def table(t, where):
    """One row per case: both kernels' times run by run and the ratio of their means."""
    lines = ["| shape | rows per expert (mean) | 256 x 128, 1 x 2 (the default), us | 128 x 256 _dyn, us | "
             "_dyn / default (means) | run |",
             "|---|---:|---:|---:|---:|---|"]
    for case in sorted(t, key=lambda c: (shape(c), tokens(c))):
        s = t[case]
        if not s["dyn"] or not s["default"]:
            continue
        lines.append(f"| {shape(case).replace('_', ', ').replace('n', 'N ').replace('k', 'K ')} | "
                     f"{tokens(case) // 32} | {', '.join(f'{x:.1f}' for x in s['default'])} | "
                     f"{', '.join(f'{x:.1f}' for x in s['dyn'])} | **{ratio(s):.3f}** | {where(case)} |")
    return "\n".join(lines)


RUNS = [(S33_CALL6, "session 33, call 6"), (CALL1, "session 35, call 1"),
        (CALL2, "session 35, call 2"), (CALL3, "session 35, call 3"), (CALL5, "session 35, call 5")]


def regime():
    every, where = {}, {}
    for folder, label in RUNS:
        for case, s in times(sorted(glob.glob(os.path.join(folder, "thr_*.json")))).items():
            assert case not in every, case  # the calls time different cases
            every[case], where[case] = s, label
    return table(every, lambda c: where[c])


def masked(folder):
    return masked_sweep.table(masked_sweep.times(sorted(glob.glob(os.path.join(folder, "masked_*.json")))))


def masked_rule():
    """Call 6, one row per case: both kernels' times run by run and the ratio of their means."""
    t = masked_sweep.times(sorted(glob.glob(os.path.join(CALL6, "masked_*.json"))))
    new = "256x128_s3_c1x1_promoted_tma_b4"
    lines = [f"| case | default ({masked_sweep.DEFAULT}), us | {new}, us | ratio (means) |",
             "|---|---:|---:|---:|"]
    for case in sorted(t):
        d, n = t[case][masked_sweep.DEFAULT], t[case][new]
        lines.append(f"| {case} | {', '.join(f'{x:.1f}' for x in d)} | {', '.join(f'{x:.1f}' for x in n)} | "
                     f"**{sum(n) / len(n) / (sum(d) / len(d)):.3f}** |")
    return "\n".join(lines)


def blocks():
    return {"session35-regime": regime(), "session35-masked-sweep": masked(CALL5),
            "session35-masked-rule": masked_rule(),
            "session35-peers": session31.peers_table(session31.medians(CALL7),
                                                     session31.medians(S33_CALL4), "session 33",
                                                     "call 7")}


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--files":
        print(table(times(sys.argv[2:]), lambda c: "this call"))
    elif len(sys.argv) == 3 and sys.argv[1] == "--check":
        for marker, text in blocks().items():
            readme_block.check(sys.argv[2], marker, text, "session35/summarise.py",
                               "plots/data/h200/session35/")
    else:
        for marker, text in blocks().items():
            print(f"<!-- {marker}:begin -->\n{text}\n<!-- {marker}:end -->\n")
