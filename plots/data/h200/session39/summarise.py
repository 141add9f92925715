#!/usr/bin/env python3
"""Session 39's calls, from their committed archives: the producer warp (session 38's branch
producer-warp, 572f0ad's engine code) back on main as 4d9085f, GPU-tested and measured.
  1. call 1: every GPU test binary but test_chapter_07_splitk (its step ran out of time), and the
     PyTorch package's tests (gpu_tests_4d9085f.txt, call.log);
  2. call 2: test_chapter_07_splitk; old (main's session-37 engine, e93c92e's executables) / new
     (4d9085f) runs old, new, new, old, session 38's shapes and cases: new / old per shape for
     chapter 7 and per chapter the geomean, least and most, with the peer's drift; chapter 8 per
     case; ncu (one launch each) old and new at two M <= 128 shapes, and the consumers' loop from
     the new kernel's source view against DeepGEMM's (session 37);
  3. call 3 (2f4dd2c: the two-deep loop unrolled over the ring cycle, then the default of the
     64-row tiles): its GPU tests (gpu_tests_2f4dd2c.txt), ncu and the consumers' loop at
     64x2112x7168, and the ring-cycle loop against the two-deep one on the six M <= 128 two-deep
     tiles, twelve shapes (run 1);
  4. call 4 (efd5bf7, two-deep the default again, the cycle loop a twin; against 4d9085f):
     chapters 6 and 7 new / old, and the twins on six shapes, the order reversed (run 2).
Usage: python3 summarise.py [--check README] (--check: the README's lines that quote these
tables must match, used by CTests chapter_07_session39 and chapter_08_session39)."""
import importlib.util
import json
import math
import os
import re
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "ch08"))
import readme_block  # noqa: E402
# Session 38's tables, given a call's folder (loaded under its own name: it imports session 37's
# summarise.py as "summarise").
_spec = importlib.util.spec_from_file_location(
    "summarise38", os.path.join(HERE, "..", "session38", "summarise.py"))
summarise38 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(summarise38)
C2 = os.path.join(HERE, "call2_4d9085f")
C3 = os.path.join(HERE, "call3_2f4dd2c")
C4 = os.path.join(HERE, "call4_efd5bf7")
geomean = summarise38.geomean


def twins(path, cycle_default):
    """{(tile, shape): cycle / two-deep time} from a run of the twins (ch07 --kernels JSON in
    an archive): in call 3's binary the 64-row tiles ran the cycle loop by default (twin
    _2deep), the 128-row ones two-deep (twin _cyc); in call 4's every tile runs two-deep by
    default (twin _cyc)."""
    archive, member = path
    with tarfile.open(archive) as tar:
        doc = json.load(tar.extractfile(member))
    t = {}
    for b in doc["benchmarks"]:
        name = b["name"].split("/iterations")[0]
        g = re.match(r"ch07:(\d+x\d+_s\d+)_c1x1_promoted_tma_b1(_2deep|_cyc)?/(\S+)$", name)
        if not g or "real_time" not in b:
            continue
        tile, suffix, shape = g.groups()
        cyc = suffix == "_cyc" or (suffix is None and cycle_default(tile))
        t.setdefault((tile, shape), {})["cyc" if cyc else "2deep"] = b["real_time"]
    return {k: v["cyc"] / v["2deep"] for k, v in t.items() if len(v) == 2}


def twins_table():
    r1 = twins((os.path.join(C3, "ab.txz"), "ab/ch07_twins_1.json"),
               lambda tile: tile.startswith("64x"))
    r2 = twins((os.path.join(C4, "ab.txz"), "ab/ch07_twins_2.json"), lambda tile: False)
    tiles = ["64x16_s16", "64x32_s14", "64x64_s12", "64x128_s8", "128x32_s10", "128x64_s8"]
    shapes = sorted({s for _, s in r1}, key=lambda s: (int(s.split("x")[0]), s))
    lines = ["| shape | " + " | ".join(f"`{t}`" for t in tiles) + " |",
             "|---|" + "---:|" * len(tiles)]
    for shape in shapes:
        cells = []
        for tile in tiles:
            c = f"{r1[(tile, shape)]:.3f}"
            if (tile, shape) in r2:
                c += f", {r2[(tile, shape)]:.3f}"
            cells.append(c)
        lines.append(f"| {shape} | " + " | ".join(cells) + " |")
    lines.append("| geomean, run 1 | " + " | ".join(
        f"{geomean(v for (t, _), v in r1.items() if t == tile):.3f}" for tile in tiles) + " |")
    return lines


def ncu_call3():
    rows = {}
    for call, label in ((C2, "two-deep (4d9085f, call 2)"), (C3, "two-deep over the ring cycle "
                                                                   "(2f4dd2c, call 3)")):
        v = summarise38.summarise37.ncu_details(os.path.join(call, "ncu.txz"), "new")
        rows[label] = v[("64x2112x7168", "new")]
    lines = ["| 64x2112x7168, chapter 7's table kernel (64 x 16), one launch | duration us | "
             "elapsed cycles | instructions |", "|---|---:|---:|---:|"]
    for label, v in rows.items():
        lines.append(f"| {label} | {v['us']:.2f} | {v['cycles']:,.0f} | {v['inst']:,.0f} |")
    return lines


def ch08_table():
    res = summarise38.ab_ratios(C2)[("ch08", "ch08_grouped")]
    lines = ["| chapter 8 case | new / old (2 + 2 runs) | chapter 7's loop's drift |",
             "|---|---:|---:|"]
    for case, (r, p) in sorted(res.items()):
        lines.append(f"| {case} | {r:.3f} | {'-' if math.isnan(p) else f'{p:.3f}'} |")
    return lines


def main(argv):
    per_shape, summary = summarise38.ab_tables(C2)
    per_shape4, summary4 = summarise38.ab_tables(C4)
    # (title, lines, the chapter folder whose README quotes them, or None)
    sections = [("new / old per chapter (call 2)", summary, "07_block_scaling"),
                ("chapter 7, new / old per shape (call 2)", per_shape, None),
                ("chapter 8, new / old per case (call 2)", ch08_table(), "08_grouped_moe"),
                ("ncu, one launch each (call 2)", summarise38.ncu_table(C2), None),
                ("the consumers' loop against DeepGEMM's (call 2; session 37 call 5)",
                 summarise38.consumer_loops(C2, "chapter 7, producer warp (4d9085f)"), None),
                ("ncu (calls 2 and 3)", ncu_call3(), "07_block_scaling"),
                ("the consumers' loop over the ring cycle against DeepGEMM's (call 3)",
                 summarise38.consumer_loops(C3, "chapter 7, two-deep over the ring cycle "
                                                "(2f4dd2c)"), "07_block_scaling"),
                ("ring cycle / two-deep, time (call 3 run 1, call 4 run 2)", twins_table(),
                 "07_block_scaling"),
                ("new / old per chapter (call 4: efd5bf7 against 4d9085f)", summary4,
                 "07_block_scaling"),
                ("chapter 7, new / old per shape (call 4)", per_shape4, None)]
    return readme_block.sections_main(argv, sections)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
