#!/usr/bin/env python3
"""Prints the tables of chapter 7's NOTEBOOK.md, "Session 10: the weight-streaming decode shapes",
from the JSON in this folder (the H200 runs of session 10; each file's context names its commit).

    python3 plots/data/h200/ch07/decode_session10/summarise.py
"""
import collections
import json
import pathlib

HERE = pathlib.Path(__file__).resolve().parent


def load(name):
    d = json.loads((HERE / name).read_text())
    rows = collections.defaultdict(dict)
    for b in d["benchmarks"]:
        impl, shape = b["name"].split("/")[0:2]
        rows[shape][impl] = b
    return rows, d["context"]


def us(r, shape, impl):
    b = r[shape].get(impl)
    return f"{b['median_us']:.1f}" if b else "—"


def short(impl):
    return impl.replace("_c1x1_promoted_f32_splitk", "").replace("_c1x1_promoted_tma_b1", "") \
        .replace("ch07_splitk_", "split-K ").replace("ch07:", "")


def wide():
    print("### Wide split-K tiles (call 2, in-kernel sum, 937d446), median us\n")
    for f in ["call2_wide128_insum_937d446.json", "call2_wide64_insum_937d446.json"]:
        r, ctx = load(f)
        for shape in r:
            cp = r[shape]["device_copy"]["GB/s"]
            items = sorted((b["median_us"], k) for k, b in r[shape].items() if k != "device_copy")
            print(f"- {shape} (copy {cp:.0f} GB/s): " + ", ".join(f"{short(k)} {t:.1f}" for t, k in items))
    print()


def splitk_versions():
    print("### Split-K S = 2, default split-K kernel: reduce kernel against in-kernel sum, median us\n")
    old, _ = load("call2_s2_reduce_1fe8098.json")
    new, _ = load("call2_s2_insum_937d446.json")
    new2, _ = load("call3_s2_insum2_fd67d7e.json")
    print("| shape | table kernel (call 2) | S = 2, reduce kernel (1fe8098, call 2) | S = 2, in-kernel sum v1 (937d446, call 2) | table kernel (call 3) | S = 2, in-kernel sum v2 (fd67d7e, call 3) |")
    print("|---|---:|---:|---:|---:|---:|")
    for s in old:
        print(f"| {s} | {us(old, s, 'ch07_block_scaled')} | {us(old, s, 'ch07_splitk_s2')} | {us(new, s, 'ch07_splitk_s2')} | {us(new2, s, 'ch07_block_scaled')} | {us(new2, s, 'ch07_splitk_s2')} |")
    print()


def batched():
    print("### Batched producer loads (call 3, fd67d7e), median us, two runs (kernel order reversed)\n")
    a, _ = load("call3_batched_fd67d7e_1.json")
    b, _ = load("call3_batched_fd67d7e_2.json")
    tiles = ["64x64_s12_c1x1_promoted_tma_b1", "128x64_s8_c1x1_promoted_tma_b1"]
    print("| shape | " + " | ".join(f"{t.split('_c1')[0]}{sfx}" for t in tiles for sfx in ["", " lb2", " lb4"]) + " |")
    print("|---|" + "---:|" * 6)
    for s in a:
        cells = []
        for t in tiles:
            for sfx in ["", "_lb2", "_lb4"]:
                k = "ch07:" + t + sfx
                cells.append(f"{a[s][k]['median_us']:.1f} / {b[s][k]['median_us']:.1f}")
        print(f"| {s} | " + " | ".join(cells) + " |")
    print()


def flush():
    print("### The flush's dirty lines (call 5, cf9c822): --l2_flush=1 (default), clean, 1 again; median us\n")
    r1, c1 = load("call5_flush_default_1_cf9c822.json")
    rc, cc = load("call5_flush_clean_cf9c822.json")
    r2, c2 = load("call5_flush_default_2_cf9c822.json")
    assert (c1["l2_flush"], cc["l2_flush"], c2["l2_flush"]) == ("1", "clean", "1")
    print("| shape | chapter 7 (1 / clean / 1) | cuBLASLt block-scaled (1 / clean / 1) | device copy (1 / clean / 1) | chapter 7 GB/s as % of the copy's (1 / clean / 1) |")
    print("|---|---:|---:|---:|---:|")
    for s in r1:
        def trio(impl):
            return " / ".join(us(r, s, impl) for r in (r1, rc, r2))
        pct = " / ".join(f"{100 * r[s]['ch07_block_scaled']['GB/s'] / r[s]['device_copy']['GB/s']:.0f}%" for r in (r1, rc, r2))
        print(f"| {s} | {trio('ch07_block_scaled')} | {trio('cublaslt_block_scaled')} | {trio('device_copy')} | {pct} |")
    print()


def multicast():
    print("### A multicast in 1 x 2 clusters (call 7, 789be89), median us: default flush / clean flush\n")
    r1, c1 = load("call7_multicast_flush_default_789be89.json")
    rc, cc = load("call7_multicast_flush_clean_789be89.json")
    assert (c1["l2_flush"], cc["l2_flush"]) == ("1", "clean")
    for s in r1:
        items = sorted(r1[s], key=lambda k: r1[s][k]["median_us"])
        print(f"- {s}: " + ", ".join(f"{short(k)} {us(r1, s, k)} / {us(rc, s, k)}" for k in items))
    print()


if __name__ == "__main__":
    wide()
    splitk_versions()
    batched()
    flush()
    multicast()
