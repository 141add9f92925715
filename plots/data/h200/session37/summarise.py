#!/usr/bin/env python3
"""Session 37's calls, from their committed archives:
  1. call 1 (9cfe5c1): one-CTA-cluster kernels launched without the cluster attribute ("new",
     692e486) against dcb2141's executables ("old"), runs old, new, new (the fourth, old, did not
     fit the call): new / old per shape, with cuBLASLt's same ratio (the drift);
  2. call 1: ncu (one launch each) of chapter 7's table kernel and DeepGEMM's at two M <= 128
     shapes;
  3. call 1: chapter 7 (the PyTorch package, 9cfe5c1) against DeepGEMM, one process, interleaved,
     50 us delay, M <= 128;
  4. call 2 (ecb4d08): the k-split consumers (_ks, reverted in 0f8167c) against the table's
     kernels at the twelve M <= 128 shapes, two runs in one process each.
Usage: python3 summarise.py [--check README] (--check: the README's lines that quote these
tables must match, used by CTest chapter_07_session37)."""
import io
import json
import math
import os
import re
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "ch08"))
import readme_block  # noqa: E402
C1 = os.path.join(HERE, "call1_9cfe5c1")
C2 = os.path.join(HERE, "call2_ecb4d08")


def times(doc):
    return {b["name"].split("/iterations")[0]: b["real_time"] for b in doc["benchmarks"]
            if "real_time" in b}


def archive_json(path, pattern):
    out = {}
    with tarfile.open(path) as tar:
        for m in tar.getmembers():
            g = re.search(pattern, m.name)
            if g and m.isfile():
                try:
                    out[g.groups()] = times(json.load(tar.extractfile(m)))
                except json.JSONDecodeError:
                    pass  # a run cut short by its timeout (chapter 8's runs 1 and 2)
    return out


def geomean(xs):
    xs = list(xs)
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def cluster_ab():
    runs = archive_json(os.path.join(C1, "ab.txz"), r"(ch0[678])_(\d)_(old|new)\.json$")
    lines = ["| chapter | shape | ours new / old | peer new / old |", "|---|---|---:|---:|"]
    peers = {"ch06": "cublaslt_per_tensor", "ch07": "cublaslt_block_scaled"}
    for ch, impl in (("ch07", "ch07_block_scaled"), ("ch06", "ch06_fast")):
        old = runs.get((ch, "1", "old"))
        new = [v for (c, _, side), v in runs.items() if c == ch and side == "new"]
        if not old or not new:
            continue
        for name, t_old in old.items():
            if not name.startswith(impl + "/"):
                continue
            shape = name.split("/")[1]
            t_new = sum(n[name] for n in new) / len(new)
            p = f"{peers[ch]}/{shape}"
            pr = sum(n[p] for n in new) / len(new) / old[p] if p in old else float("nan")
            lines.append(f"| {ch} ({impl}) | {shape} | {t_new / t_old:.3f} | {pr:.3f} |")
    return lines


NCU_METRICS = (("us", r"Duration\s+us\s+([\d.,]+)"),
               ("cycles", r"Elapsed Cycles\s+cycle\s+([\d,]+)"),
               ("active", r"SM Active Cycles\s+cycle\s+([\d.,]+)"),
               ("inst", r"\n\s+Executed Instructions\s+inst\s+([\d,]+)"),
               ("dram", r"DRAM Throughput\s+%\s+([\d.]+)"),
               ("cpi", r"Warp Cycles Per Issued Instruction\s+cycle\s+([\d.]+)"))


def ncu_details(archive, sides):
    """{(shape, side): {metric: value}} from the ncu_<side>_<shape>_details.txt files of an
    archive (ncu_step's output; NaN where a section was not collected). Session 38 reads its
    archive with it too."""
    rows = {}
    with tarfile.open(archive) as tar:
        for m in tar.getmembers():
            g = re.search(rf"ncu_({sides})_(\S+)_details\.txt$", m.name)
            if not g:
                continue
            text = tar.extractfile(m).read().decode()
            v = {}
            for key, rx in NCU_METRICS:
                x = re.search(rx, text)
                v[key] = float(x.group(1).replace(",", "")) if x else float("nan")
            rows[(g.group(2), g.group(1))] = v
    return rows


def ncu_table():
    rows = ncu_details(os.path.join(C1, "ncu.txz"), "ours|dg")
    lines = ["| shape | side | duration us | elapsed cycles | SM active cycles | instructions | "
             "DRAM % | cycles per issued instruction |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    for (shape, side), v in sorted(rows.items(), key=lambda kv: (kv[0][0], kv[0][1] != "ours")):
        who = "chapter 7" if side == "ours" else "DeepGEMM"
        lines.append(f"| {shape} | {who} | {v['us']:.2f} | "
                     f"{v['cycles']:,.0f} | {v['active']:,.0f} | {v['inst']:,.0f} | "
                     f"{v['dram']:.1f} | "
                     f"{v['cpi']:.2f} |")
    return lines


def peers_table(path, every_shape=False, label="geomean, 12 shapes"):
    """Chapter 7 (the package) against DeepGEMM from bench/peers.py's JSON: the M <= 128 shapes
    (every_shape: all of them) and the geomean of the M <= 128 ratios (session 38's too)."""
    d = json.load(open(path))
    t = {}
    for b in d["benchmarks"]:
        impl, shape = b["name"].split("/")[:2]
        t.setdefault(shape, {})[impl] = b["real_time"]
    lines = ["| shape | chapter 7 us | DeepGEMM us | chapter 7 / DeepGEMM (speed) |",
             "|---|---:|---:|---:|"]
    ratios = []
    for shape, v in t.items():
        small = shape.startswith(("64x", "128x"))
        if not small and not every_shape:
            continue
        r = v["deepgemm"] / v["fp8gemm_block_scaled"]
        if small:
            ratios.append(r)
        ours = v["fp8gemm_block_scaled"]
        lines.append(f"| {shape} | {ours:.2f} | {v['deepgemm']:.2f} | {r:.3f} |")
    lines.append(f"| {label} | | | **{geomean(ratios):.3f}** |")
    return lines


def peers():
    return peers_table(os.path.join(C1, "peers_ch07_9cfe5c1.json"))


TABLE = {"64x2112x7168": "64x16_s16", "64x24576x1536": "64x64_s12", "64x32768x512": "64x128_s8",
         "64x7168x16384": "64x64_s12", "64x4096x7168": "64x32_s14", "64x7168x2048": "64x64_s12",
         "128x2112x7168": "64x32_s14", "128x24576x1536": "128x64_s8", "128x32768x512": "128x128_s6",
         "128x7168x16384": "128x64_s8", "128x4096x7168": "64x64_s12", "128x7168x2048": "128x64_s8"}
SUFFIX = "_c1x1_promoted_tma_b1"


def ksplit():
    runs = archive_json(os.path.join(C2, "ks.txz"), r"ch07_ks_(\d)\.json$")
    runs = [runs[k] for k in sorted(runs)]
    lines = ["| shape | the table's kernel us (runs 1, 2) | its k-split twin us | twin / table | "
             "fastest k-split kernel / the table's |", "|---|---|---|---:|---:|"]
    for shape, tile in TABLE.items():
        def t(k):
            return [r[f"ch07:{k}/{shape}"] for r in runs]
        base = t(tile + SUFFIX)
        ks_name = {"64x128_s8": "64x128_s6", "128x64_s8": None, "128x128_s6": None}.get(tile, tile)
        twin = t(ks_name + SUFFIX + "_ks") if ks_name else None
        best = min(sum(t(k + SUFFIX + "_ks"))
                   for k in ("64x16_s16", "64x32_s14", "64x64_s12", "64x128_s6"))
        lines.append(f"| {shape} | `{tile}`: {base[0]:.2f}, {base[1]:.2f} | "
                     + (f"{twin[0]:.2f}, {twin[1]:.2f} | {sum(twin) / sum(base):.3f}"
                        if twin else "- | -")
                     + f" | {best / sum(base):.3f} |")
    return lines


def main(argv):
    sections = [("cluster attribute, new / old (call 1)", cluster_ab()),
                ("ncu, one launch each (call 1)", ncu_table()),
                ("chapter 7 against DeepGEMM, M <= 128 (call 1)", peers()),
                ("k-split consumers against the table (call 2)", ksplit())]
    if len(argv) > 2 and argv[1] == "--check":
        return readme_block.check_lines(argv[2], [l for _, ls in sections[1:] for l in ls])
    for title, lines in sections:
        print(f"## {title}\n")
        print("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
