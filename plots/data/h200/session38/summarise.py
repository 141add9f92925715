#!/usr/bin/env python3
"""Session 38's calls, from their committed archives: the producer warp (the engine's producer loop
run by the producer warpgroup's first warp, its TMA loads issued by an elected lane from
warp-uniform addresses; merged as c0dd6e7 .. 39224cc).
  1. call 1 (c0dd6e7 "new" against main e93c92e's executables "old", runs old, new, new, old):
     new / old per shape for chapter 7 (every shape), and per chapter the geomean, least and most
     over its shapes for chapters 6 and 8, each with its peer's drift (the same ratio of the peer
     timed in the same runs: cuBLASLt, or chapter 7's loop for chapter 8), and chapter 8 per case;
  2. call 1: ncu (one launch each, clocks as the driver set them) of chapter 7's table kernel,
     old and new, at two M <= 128 shapes, and the new kernel's producer loop from ncu's source
     view (warp instructions executed per ring stage; session 37's producer.py counts the old
     one: 65.0, DeepGEMM's 30.0);
  3. call 1: chapter 7 (the PyTorch package, c0dd6e7) against DeepGEMM 2.6.1, one process,
     interleaved, 50 us delay;
  3b. call 1's source view against session 37's of DeepGEMM: the consumers' main loop per K block;
  4. call 4 (39224cc against e93c92e): chapter 8's masked cases again, six runs alternating;
  5. call 3 (39224cc, whose chapter 7 SASS is c0dd6e7's byte for byte): the nine M <= 128 tiles on
     the twelve M <= 128 shapes, two runs (the order reversed): the table's pick against the
     fastest.
Usage: python3 summarise.py [--check README] (--check: the README's lines that quote these
tables must match, used by CTests chapter_07_session38 and chapter_08_session38)."""
import csv
import io
import math
import os
import re
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "ch08"))
sys.path.insert(0, os.path.join(HERE, "..", "session37"))
import readme_block  # noqa: E402
import producer as producer37  # noqa: E402
import summarise as summarise37  # noqa: E402  (the JSON, archive and ncu readers)
C1 = os.path.join(HERE, "call1_c0dd6e7")
C3 = os.path.join(HERE, "call3_39224cc")
C4 = os.path.join(HERE, "call4_39224cc")
STAGES = 132 * 56  # CTAs x K blocks at 64x2112x7168 (one tile per CTA)


times, archive_json, geomean = summarise37.times, summarise37.archive_json, summarise37.geomean


def mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs)


def ab_ratios(call=C1):
    """{(chapter, impl): {shape: (new / old, peer new / old)}} over a call's old / new runs."""
    runs = archive_json(os.path.join(call, "ab.txz"), r"(ch0[678])_(\d)_(old|new)\.json$")
    pairs = {"ch06": [("ch06_fast", "cublaslt_per_tensor"),
                      ("ch06_promoted", "cublaslt_per_tensor_promoted")],
             "ch07": [("ch07_block_scaled", "cublaslt_block_scaled")],
             "ch08": [("ch08_grouped", "ch07_loop")]}
    out = {}
    for ch, impls in pairs.items():
        side = {v: [r for (c, _, s), r in runs.items() if c == ch and s == v] for v in ("old", "new")}
        if not side["old"]:
            continue
        for impl, peer in impls:
            res = {}
            for name in side["old"][0]:
                if not name.startswith(impl + "/"):
                    continue
                shape = name.split("/", 1)[1]
                r = mean(x[name] for x in side["new"]) / mean(x[name] for x in side["old"])
                p = f"{peer}/{shape}"
                pr = (mean(x[p] for x in side["new"]) / mean(x[p] for x in side["old"])
                      if all(p in x for x in side["old"] + side["new"]) else float("nan"))
                res[shape] = (r, pr)
            out[(ch, impl)] = res
    return out


def small(shape):
    return int(shape.split("x")[0]) <= 128 if shape[0].isdigit() else False


def ab_tables(call=C1):
    ab = ab_ratios(call)
    lines = ["| chapter 7 shape | new / old (time) | cuBLASLt's drift |", "|---|---:|---:|"]
    for shape, (r, p) in sorted(ab[("ch07", "ch07_block_scaled")].items(),
                                key=lambda kv: (not small(kv[0]), kv[0])):
        lines.append(f"| {shape} | {r:.3f} | {p:.3f} |")
    summary = ["| chapter, shapes | geomean new / old | least | most | peer's drift, least - most |",
               "|---|---:|---:|---:|---|"]
    for (ch, impl), res in ab.items():
        groups = ([("M <= 128", True), ("M >= 1024", False)] if ch != "ch08"
                  else [("masked and skewed cases", None)])
        for label, want in groups:
            sel = [v for s, v in res.items() if want is None or small(s) == want]
            if not sel:
                continue
            rs = [r for r, _ in sel]
            ps = [p for _, p in sel if not math.isnan(p)]
            drift = f"{min(ps):.3f} - {max(ps):.3f}" if ps else "-"
            summary.append(f"| {impl}, {label} ({len(sel)}) | {geomean(rs):.3f} | {min(rs):.3f} | "
                           f"{max(rs):.3f} | {drift} |")
    return lines, summary


def ch08_table():
    res = ab_ratios()[("ch08", "ch08_grouped")]
    res4 = ab_ratios(C4)[("ch08", "ch08_grouped")]
    lines = ["| chapter 8 case | new / old, call 1 (2 + 2 runs) | chapter 7's loop's drift | "
             "new / old, call 4 (3 + 3 runs) |", "|---|---:|---:|---:|"]
    for case, (r, p) in sorted(res.items()):
        drift = "-" if math.isnan(p) else f"{p:.3f}"
        r4 = f"{res4[case][0]:.3f}" if case in res4 else "-"
        lines.append(f"| {case} | {r:.3f} | {drift} | {r4} |")
    return lines


def ncu_table(call=C1):
    rows = summarise37.ncu_details(os.path.join(call, "ncu.txz"), "old|new")
    with tarfile.open(os.path.join(call, "ncu.txz")) as tar:
        text = tar.extractfile("ncu/ours_sass.csv").read().decode()
    table = list(csv.reader(io.StringIO(text)))
    hdr, data = table[1], table[2:]
    ie = hdr.index("Instructions Executed")
    loop = producer37.producer_loop(hdr, data)
    per_stage = sum(int(r[ie] or 0) for r in loop) / STAGES
    lines = ["| shape | engine | duration us | elapsed cycles | instructions | "
             "cycles per issued instruction |", "|---|---|---:|---:|---:|---:|"]
    for (shape, side), v in sorted(rows.items(), key=lambda kv: (kv[0][0], kv[0][1] != "old")):
        who = "main (one producer thread)" if side == "old" else "producer warp"
        lines.append(f"| {shape} | {who} | {v['us']:.2f} | {v['cycles']:,.0f} | "
                     f"{v['inst']:,.0f} | {v['cpi']:.2f} |")
    lines.append(f"| 64x2112x7168 | producer warp: warp instructions per ring stage | "
                 f"{per_stage:.1f} | | | |")
    return lines


def consumer_loops(call=C1, label="chapter 7, producer warp"):
    """The consumer's main loop at 64x2112x7168 (of the innermost loops with wgmma and no TMA
    load, the one executed most) from ncu's source view: ours (call 1, the producer warp) and DeepGEMM's (session 37, call 5;
    the same tile, ring and one math warpgroup), per K block."""
    with tarfile.open(os.path.join(call, "ncu.txz")) as tar:
        ours = tar.extractfile("ncu/ours_sass.csv").read().decode()
    with tarfile.open(os.path.join(HERE, "..", "session37", "call5_db77afb", "src.txz")) as tar:
        dg = tar.extractfile("src/dg_sass.csv").read().decode()
    lines = ["| 64x2112x7168, one launch | K blocks per loop iteration | SASS lines per K block | "
             "warp instructions executed per K block (4 warps) | per warp |",
             "|---|---:|---:|---:|---:|"]
    for who, text in ((label, ours), ("DeepGEMM", dg)):
        table = list(csv.reader(io.StringIO(text)))
        hdr, data = table[1], table[2:]
        ie = hdr.index("Instructions Executed")
        addr = [int(r[0], 16) for r in data]
        back = {}  # backward branches: line -> its target's line
        for i, r in enumerate(data):
            g = re.search(r"\bBRA\b.*?(0x[0-9a-f]+)", r[1])
            if g and int(g.group(1), 16) < addr[i] and int(g.group(1), 16) in addr:
                back[i] = addr.index(int(g.group(1), 16))
        best = None
        for i, j in back.items():
            if any(j <= k < i for k in back):  # not innermost
                continue
            body = data[j:i + 1]
            gmma = sum("GMMA" in b[1] for b in body)
            if gmma and not any("UTMALDG" in b[1] for b in body):
                executed = sum(int(b[ie] or 0) for b in body)
                if best is None or executed > best[0]:
                    best = (executed, gmma // 4, len(body))
        executed, blocks, n = best
        per_block = executed / STAGES
        lines.append(f"| {who} | {blocks} | {n / blocks:.1f} | {per_block:.1f} | "
                     f"{per_block / 4:.1f} |")
    return lines


def peers():
    return summarise37.peers_table(os.path.join(C1, "peers_ch07_c0dd6e7.json"), every_shape=True,
                                   label="geomean, 12 shapes M <= 128")


TABLE, SUFFIX = summarise37.TABLE, summarise37.SUFFIX  # chapter 7's M <= 128 picks (unchanged)


def sweep():
    runs = archive_json(os.path.join(C3, "sw.txz"), r"ch07_sweep_(\d)\.json$")
    runs = [runs[k] for k in sorted(runs)]
    lines = ["| shape | the table's kernel, us (runs 1, 2) | fastest of the nine | "
             "fastest / table's |", "|---|---|---|---:|"]
    for shape, tile in TABLE.items():
        t = {}
        for r in runs:
            for name, us in r.items():
                g = re.match(r"ch07:(\S+?)" + SUFFIX + r"/" + shape + "$", name)
                if g:
                    t.setdefault(g.group(1), []).append(us)
        base = t[tile]
        best = min(t, key=lambda k: sum(t[k]))
        lines.append(f"| {shape} | `{tile}`: {base[0]:.2f}, {base[1]:.2f} | `{best}` | "
                     f"{sum(t[best]) / sum(base):.3f} |")
    return lines


def main(argv):
    per_shape, summary = ab_tables()
    # (title, lines, the chapter folder whose README quotes them)
    sections = [("new / old per chapter (call 1)", summary, "07_block_scaling"),
                ("chapter 7, new / old per shape (call 1)", per_shape, "07_block_scaling"),
                ("chapter 8, new / old per case (calls 1 and 4)", ch08_table(), "08_grouped_moe"),
                ("ncu, one launch each (call 1)", ncu_table(), "07_block_scaling"),
                ("the consumers' loop against DeepGEMM's (call 1; session 37 call 5)",
                 consumer_loops(), "07_block_scaling"),
                ("chapter 7 against DeepGEMM (call 1)", peers(), "07_block_scaling"),
                ("the nine M <= 128 tiles (call 3)", sweep(), "07_block_scaling")]
    return readme_block.sections_main(argv, sections)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
