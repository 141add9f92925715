#!/usr/bin/env python3
"""Session 30: the weight gradient's early first wave (kgrouped.cuh, kPinnedLoop + kEarlyWaveLoop + u),
from the committed files of each call:

  call 1 (binaries and PyTorch package of 594c9a4: the early wave as comparison twins _pin_ew4 /
      _pin_ew2 / _pin_ew1): the chapter-8 sweep, two runs in opposite kernel orders (the six
      Fp8Linear shapes as one group of 4096 tokens, the two 65536-token cases), as TFLOPS ratios
      twin / base on the same tile; and chapter 8 against DeepGEMM and torch in one process,
      interleaved (bench/peers_moe.py --interleave --delay-us 150 --cupti-launches 0);
  calls 3 and 4 (bcf0c18: FP32 dB with two staging units, with and without the early wave):
      three sweeps of the 32-expert weight-gradient cases (TFLOPS over the one-unit 128 x 256
      default of the time) and one interleaved peers run of the weight gradient alone (--only
      wgrad), as DeepGEMM's time over each kernel's;
  call 5 (the final defaults; when present): the peers' table, ratios of the peer's time to ours
      (> 1 = ours faster), session 24's in brackets: the table between
      <!-- session30-peers:begin/end --> in chapter 8's NOTEBOOK.md (call 1's until call 5 ran).

    python3 plots/data/h200/session30/summarise.py
    python3 plots/data/h200/session30/summarise.py --check chapters/08_grouped_moe/NOTEBOOK.md
"""
import collections
import glob
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "engine_wait"))
sys.path.insert(0, os.path.join(HERE, "..", "ch08"))
import peers as session17  # noqa: E402  (the JSON reader)
import readme_block  # noqa: E402  (the README check)

CALL1 = os.path.join(HERE, "call1_594c9a4")
CALL3 = os.path.join(HERE, "call3_bcf0c18")
CALL4 = os.path.join(HERE, "call4_bcf0c18")
FINAL = (sorted(glob.glob(os.path.join(HERE, "call5_*"))) or [CALL1])[-1]
DEFAULT_F32 = "128x256_s4_c1x1_promoted_f32_tma_b1"
KINDS = ["bal", "skew", "masked", "wgrad"]
OURS = {"masked": "fp8gemm_grouped_masked", "wgrad": "fp8gemm_weight_grad"}
DG = {"masked": "deepgemm_masked", "wgrad": "deepgemm_kgrouped_wgrad"}
# (twin suffix, base suffix) pairs on the same tile: "" is the tile's default at 594c9a4 (the lean loop).
PAIRS = [("_pin_ew4", ""), ("_pin_ew2", ""), ("_pin_ew1", ""), ("_pin_ew1", "_pin_loop1")]


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs))


def sweep():
    ratios = collections.defaultdict(list)
    for path in sorted(glob.glob(os.path.join(CALL1, "sweep_*.json"))):
        table = collections.defaultdict(dict)
        for b in json.load(open(path))["benchmarks"]:
            impl, case = b["name"].split("/")[:2]
            if impl.startswith("ch08_wgrad:"):
                table[case][impl[len("ch08_wgrad:"):]] = b["TFLOPS"]
        for case, row in table.items():
            for name, tflops in row.items():
                for twin, base in PAIRS:
                    tile = name[: -len(twin)]
                    if name.endswith(twin) and tile + base in row:
                        r = tflops / row[tile + base]
                        ratios[(tile, twin, base or "(default)", "all")].append(r)
                        ratios[(tile, twin, base or "(default)", "t65536" if "t65536" in case else "4096 tokens")].append(r)
    lines = ["| tile | twin / base | cases | geomean | min | max |", "|---|---|---|---:|---:|---:|"]
    for (tile, twin, base, which), xs in sorted(ratios.items()):
        lines.append(f"| `{tile}` | `{twin}` / `{base}` | {which} ({len(xs)}) | {geomean(xs):.3f} | {min(xs):.3f} | {max(xs):.3f} |")
    return "\n".join(lines)


def fp32_units():
    """Calls 3-4: each FP32 kernel's TFLOPS over the one-unit 128 x 256 default's, per sweep."""
    lines = ["| case | kernel | sweep 1 | sweep 2 | sweep 3 |", "|---|---|---:|---:|---:|"]
    runs = [os.path.join(CALL3, "sweep_bcf0c18_1.json"), os.path.join(CALL3, "sweep_bcf0c18_2.json"),
            os.path.join(CALL4, "sweep_bcf0c18_3.json")]
    tables = []
    for path in runs:
        table = collections.defaultdict(dict)
        for b in json.load(open(path))["benchmarks"]:
            impl, case = b["name"].split("/")[:2]
            if impl.startswith("ch08_wgrad:"):
                table[case][impl[len("ch08_wgrad:"):]] = b["TFLOPS"]
        tables.append(table)
    for case in sorted(tables[0]):
        for name in sorted(tables[0][case]):
            if name == DEFAULT_F32:
                continue
            cells = [f"{t[case][name] / t[case][DEFAULT_F32]:.3f}" if name in t.get(case, {}) else "-" for t in tables]
            lines.append(f"| {case} | `{name}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def wgrad_peers_call4():
    m = medians(CALL4, "peers_ch08_wgrad_*.json")
    lines = ["| case | implementation | DeepGEMM's time / its time |", "|---|---|---:|"]
    for (impl, case) in sorted(m):
        if impl.startswith("fp8gemm_weight_grad"):
            lines.append(f"| {case} | `{impl}` | {m[('deepgemm_kgrouped_wgrad', case)] / m[(impl, case)]:.3f} |")
    return "\n".join(lines)


def medians(folder, pattern="peers_ch08_*.json"):
    (path,) = glob.glob(os.path.join(folder, pattern))
    return session17.medians(os.path.basename(path), folder)


def peers():
    now = medians(FINAL)
    before = medians(os.path.join(HERE, "..", "session24", "call3_6e6f2fc"))
    cases = sorted({c for (_, c) in now}, key=lambda c: (KINDS.index(c.split("_")[0]), c))
    lines = ["| case | / DeepGEMM | / DeepGEMM with its padding step | / torch grouped | early-wave twins / DeepGEMM |",
             "|---|---:|---:|---:|---|"]
    for c in cases:
        kind = c.split("_")[0]
        ours_name, dg_name = OURS.get(kind, "fp8gemm_grouped_contiguous"), DG.get(kind, "deepgemm_contiguous")

        def ratio(m, peer, ours=ours_name):
            return m[(peer, c)] / m[(ours, c)] if (peer, c) in m and (ours, c) in m else None

        f = lambda x: f"{x:.3f}" if x else "-"  # noqa: E731
        twins = [(impl.split(":", 1)[1], ratio(now, dg_name, impl)) for (impl, case) in now
                 if case == c and impl.startswith(ours_name + ":")]
        tw = ", ".join(f"`{n[-8:]}` ({n.split('_')[0]}) {f(r)}" for n, r in sorted(twins)) or "-"
        lines.append(f"| {c} | {f(ratio(now, dg_name))} ({f(ratio(before, dg_name))}) | "
                     f"{f(ratio(now, 'deepgemm_contiguous_with_pad'))} | {f(ratio(now, 'torch_scaled_grouped_mm'))} | {tw} |")
    if all(line.endswith("| - |") for line in lines[2:]):  # no twins timed (call 5): drop the column
        lines = [line.rsplit("|", 2)[0] + "|" for line in lines]
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        readme_block.check(sys.argv[2], "session30-peers", peers(), "session30/summarise.py",
                           os.path.relpath(FINAL, os.path.join(HERE, "..", "..", "..", "..")) + "/peers_ch08_*.json")
    else:
        print(sweep() + "\n\n" + fp32_units() + "\n\n" + wgrad_peers_call4() + "\n\n" + peers())
