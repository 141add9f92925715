#!/usr/bin/env python3
"""Session 28's tables from the committed call archives (no extraction needed).

  python3 plots/data/h200/session28/summarise.py

For each call: the 1 x 128 quantisers' GB/s beside the device copy of the same bytes (run 1 / run 2,
the same process), and the ncu source view summed by opcode: SASS instructions executed per warp
(one CTA per 128 x 128 tile, 8 warps) and the share of the warps' stall samples.
"""
import collections
import csv
import io
import json
import re
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def bench_table(t, names):
    runs = []
    for n in names:
        j = json.load(t.extractfile(n))
        ops, copies = {}, {}
        for b in j["benchmarks"]:
            name = b["name"].split("/iterations")[0]
            gbs = b.get("GB/s")
            if gbs is None:
                continue
            if name.startswith("copy_d2d_as_"):
                copies[name[len("copy_d2d_as_"):]] = gbs
            else:
                ops[name] = gbs
        runs.append((ops, copies, j["context"].get("git_commit", "?")))
    keys = [k for k in runs[0][0] if "tokens" not in k]
    print(f"| quantiser / shape | " + " | ".join(f"run {i + 1}: GB/s, copy, %" for i in range(len(runs))) + " |")
    print("|---|" + "---:|" * len(runs))
    for k in keys:
        cells = []
        for ops, copies, _ in runs:
            g, c = ops.get(k), copies.get(k)
            cells.append(f"{g:.0f}, {c:.0f}, {100 * g / c:.1f}%" if g and c else "-")
        print(f"| `{k}` | " + " | ".join(cells) + " |")
    print(f"(commit {runs[0][2][:10]})")


def source_view(t, name, ctas):
    rows = list(csv.reader(io.TextIOWrapper(t.extractfile(name))))
    hdr = rows[1]
    iS, iE = hdr.index("Source"), hdr.index("Instructions Executed")
    iW = hdr.index("Warp Stall Sampling (All Samples)")
    ex, st = collections.Counter(), collections.Counter()
    for r in rows[2:]:
        if len(r) < len(hdr):
            continue
        try:
            e, w = int(r[iE]), int(r[iW])
        except ValueError:
            continue
        op = re.sub(r"^@!?U?P[0-9T] ", "", r[iS].strip()).split()[0].split(".")[0]
        ex[op] += e
        st[op] += w
    warps = 8 * ctas
    total, stalls = sum(ex.values()), sum(st.values())
    print(f"{name}: {total / warps:.1f} instructions per warp and tile, {stalls} stall samples")
    print("| opcode | per warp | stall samples |")
    print("|---|---:|---:|")
    for op, e in ex.most_common(14):
        print(f"| {op} | {e / warps:.1f} | {100 * st[op] / stalls:.1f}% |")


def main():
    for call in sorted(HERE.glob("call*_*")):
        arch = call / "q.txz"
        if not arch.exists():
            continue
        print(f"## {call.name}")
        with tarfile.open(arch) as t:
            names = t.getnames()
            bench = sorted(n for n in names if re.search(r"quantize_bench_.*_\d\.json$", n))
            if bench:
                bench_table(t, bench)
            for n in sorted(x for x in names if x.endswith("_source.csv")):
                # the 1 x 128 dual at 8192 x 7168: 3584 tiles; the 128 x 128 dual at 7168 x 16384: 7168
                source_view(t, n, 3584 if "1x128" in n else 7168)
        print()


if __name__ == "__main__":
    sys.exit(main())
