#!/usr/bin/env python3
"""Session 40's calls, from their committed folders:
  1. call 1 (a334058's test binaries; chapter 7's executable at f81c188 with _cycj twins): the GPU
     tests of main (gpu_tests_a334058.txt), and the two-deep loop against the ring-cycle loop
     (_cyc) and the cycle loop entered by a jump (_cycj) on the five tiles chapter 7's table
     picks at M <= 128, twelve shapes, one run (the second was cut off by the call's time);
  2. call 2 (0182cd3): deeper rings and A multicast against the table's 64-row tiles, six shapes,
     two runs in opposite orders, and ncu (one launch each) at 64x2112x7168;
(Calls 3 and 4, the GPU tests and measurements of branch long-cycle, could not run: no GPU was
lent after call 2. Their scripts are on that branch.)
Usage: python3 summarise.py [--check README] (--check: the README's lines that quote these
tables must match; CTest chapter_07_session40)."""
import importlib.util
import json
import os
import re
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "ch08"))
import readme_block  # noqa: E402


def _load(name, rel):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, "..", rel))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


summarise38 = _load("summarise38", "session38/summarise.py")
summarise37 = summarise38.summarise37 if hasattr(summarise38, "summarise37") else _load(
    "summarise37", "session37/summarise.py")
geomean = summarise38.geomean
C1 = os.path.join(HERE, "call1_a334058")
C2 = os.path.join(HERE, "call2_0182cd3")
SUFFIX = "_c1x1_promoted_tma_b1"


def archive_times(archive, member):
    """{(kernel, shape): real_time us} of a chapter-7 --kernels run inside an archive."""
    with tarfile.open(archive) as tar:
        doc = json.load(tar.extractfile(member))
    out = {}
    for b in doc["benchmarks"]:
        m = re.match(r"ch07:(\S+)/(\S+)$", b["name"].split("/iterations")[0])
        if m and "real_time" in b:
            out[(m.group(1), m.group(2))] = b["real_time"]
    return out


def shapes_of(times):
    return sorted({s for _, s in times}, key=lambda s: (int(s.split("x")[0]), s))


def gpu_tests(path):
    return ["| " + line.strip() + " |" for line in open(path)
            if line.startswith(("PASS", "FAIL", "SKIP")) or "passed," in line]


def twins_call1():
    t = archive_times(os.path.join(C1, "ab.txz"), "ab/ch07_twins_1.json")
    tiles = ["64x16_s16", "64x32_s14", "64x64_s12", "64x128_s8", "128x64_s8"]
    lines = ["| shape | " + " | ".join(f"`{x}` _cyc, _cycj" for x in tiles) + " |",
             "|---|" + "---:|" * len(tiles)]
    for s in shapes_of(t):
        cells = []
        for x in tiles:
            base = t[(x + SUFFIX, s)]
            cells.append(f"{t[(x + SUFFIX + '_cyc', s)] / base:.3f}, "
                         f"{t[(x + SUFFIX + '_cycj', s)] / base:.3f}")
        lines.append(f"| {s} | " + " | ".join(cells) + " |")
    return lines


def candidates_call2():
    runs = [archive_times(os.path.join(C2, "ab.txz"), f"ab/ch07_cand_{r}.json") for r in (1, 2)]
    pairs = [("64x16_s20_c1x1", "64x16_s16_c1x1"), ("64x32_s18_c1x1", "64x32_s14_c1x1"),
             ("64x64_s13_c1x1", "64x64_s12_c1x1"), ("64x16_s16_c1x2", "64x16_s16_c1x1"),
             ("64x32_s14_c1x2", "64x32_s14_c1x1"),
             ("64x16_s16_c1x1|_cyc", "64x16_s16_c1x1"), ("64x32_s14_c1x1|_cyc", "64x32_s14_c1x1")]

    def name(k):
        stem, _, twin = k.partition("|")
        return stem + "_promoted_tma_b1" + twin

    lines = ["| shape | " + " | ".join(
        f"`{a.replace('|', '')}` / `{b}`" for a, b in pairs) + " |", "|---|" + "---:|" * len(pairs)]
    for s in shapes_of(runs[0]):
        cells = [", ".join(f"{r[(name(a), s)] / r[(name(b), s)]:.3f}" for r in runs)
                 for a, b in pairs]
        lines.append(f"| {s} | " + " | ".join(cells) + " |")
    return lines


def ncu_call2():
    keys = {"Duration": "us", "DRAM Throughput": "%", "L2 Cache Throughput": "%", "L2 Hit Rate": "%",
            "SM Frequency": "GHz"}
    lines = ["| 64x2112x7168, one launch | " + " | ".join(f"{k} ({u})" for k, u in keys.items())
             + " |", "|---|" + "---:|" * len(keys)]
    with tarfile.open(os.path.join(C2, "ab.txz")) as tar:
        for k in ("64x16_s16_c1x1", "64x16_s20_c1x1", "64x16_s16_c1x2"):
            text = tar.extractfile(f"ncu/ncu_{k}_promoted_tma_b1_details.txt").read().decode()
            vals = []
            for key in keys:
                m = re.search(rf"^\s+{re.escape(key)}\s+\S*\s+([\d.,]+)\s*$", text, re.M)
                vals.append(m.group(1) if m else "-")
            lines.append(f"| `{k}` | " + " | ".join(vals) + " |")
    return lines


def cycle_by_k():
    """The ring-cycle loop / two-deep over every committed run of the pair (session 39 calls 3-4,
    session 40 calls 1-2), per tile and K: the points, their range, and how many are below 1."""
    s39 = _load("summarise39", "session39/summarise.py")
    pts = []
    for path, default in (((os.path.join(s39.C3, "ab.txz"), "ab/ch07_twins_1.json"),
                           lambda tile: tile.startswith("64x")),
                          ((os.path.join(s39.C4, "ab.txz"), "ab/ch07_twins_2.json"),
                           lambda tile: False)):
        pts += [(t, s, v) for (t, s), v in s39.twins(path, default).items()]
    runs = [archive_times(os.path.join(C1, "ab.txz"), "ab/ch07_twins_1.json")]
    runs += [archive_times(os.path.join(C2, "ab.txz"), f"ab/ch07_cand_{r}.json") for r in (1, 2)]
    for t in runs:
        for (k, s), v in t.items():
            if k.endswith(SUFFIX + "_cyc"):
                tile = k[:-len(SUFFIX + "_cyc")]
                pts.append((tile, s, v / t[(tile + SUFFIX, s)]))
    tiles = ["64x16_s16", "64x32_s14", "64x64_s12", "64x128_s8", "128x32_s10", "128x64_s8"]
    ks = sorted({int(s.split("x")[2]) for _, s, _ in pts})
    lines = ["| K | " + " | ".join(f"`{t}`" for t in tiles) + " |", "|---:|" + "---|" * len(tiles)]
    for k in ks:
        cells = []
        for tile in tiles:
            v = [x for t, s, x in pts if t == tile and int(s.split("x")[2]) == k]
            cells.append(f"{min(v):.3f}-{max(v):.3f} ({sum(x < 1 for x in v)} of {len(v)})"
                         if v else "-")
        lines.append(f"| {k} | " + " | ".join(cells) + " |")
    return lines


def main(argv):
    sections = [("call 1: GPU tests of a334058's binaries", gpu_tests(
                    os.path.join(C1, "gpu_tests_a334058.txt")), "07_block_scaling"),
                ("call 1: ring cycle (_cyc) and ring cycle entered by a jump (_cycj) / two-deep,"
                 " time", twins_call1(), "07_block_scaling"),
                ("call 2: deeper rings, A multicast, the cycle loop / the table's tile, time "
                 "(runs 1, 2)", candidates_call2(), "07_block_scaling"),
                ("call 2: ncu", ncu_call2(), "07_block_scaling"),
                ("the ring-cycle loop / two-deep by K, every run (sessions 39-40): range (points "
                 "below 1 of all)", cycle_by_k(), "07_block_scaling")]
    return readme_block.sections_main(argv, sections)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
