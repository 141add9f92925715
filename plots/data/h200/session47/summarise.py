#!/usr/bin/env python3
"""Session 47's device calls, from their committed folders (the call scripts, with their
predictions, are each folder's call.sh):
  call 1 (call1_h100_54d4153, an H100, binaries and package of 54d4153): test_chapter_07, the
  block-scaled dispatch sweep at M <= 128 (the new kernels 64x32_s16 and 64x64_s13 against the
  table's), and the PyTorch op against DeepGEMM 2.6.1 on 112 SMs, runs old1 / new1 / new2 / old2
  (old: the 132-SM table's picks through FP8GEMM_KERNEL_BLOCK_SCALED; new: the rule table_sms).
  call 2 (call2_h100_c1290c2, an H100, binaries of c1290c2): the chapters' rules planning for the
  grid's SMs (engine::decode_tile_width, wave efficiency on the usable SMs); dispatch sweeps of
  shapes outside the tables where the new rule's pick differs from the old one, both measured in
  the same sweep (block medians), on 112 SMs and on all 132.
  calls 3 and 4: an H100 came for a named nvidia-h200; the script's guard ran nothing.
  call 5 (call5_h100_63b2d71, an H100): test_chapter_07 at the session's last code, passed
  (gpu_tests_63b2d71.txt).
Usage: python3 summarise.py"""
import json
import os
from statistics import geometric_mean as geomean

HERE = os.path.dirname(os.path.abspath(__file__))
C1 = os.path.join(HERE, "call1_h100_54d4153")
C2 = os.path.join(HERE, "call2_h100_c1290c2")


def peers(path):
    """{shape: {impl: median_us}} of a bench/peers.py JSON."""
    out = {}
    for b in json.load(open(path))["benchmarks"]:
        impl, shape = b["name"].split("/")[:2]
        out.setdefault(shape, {})[impl] = b["median_us"]
    return out


def small(shape):
    return int(shape.split("x")[0]) <= 128


def call1_peers(folder=C1, commit="54d4153", gpu="H100", call="Call 1"):
    runs = {r: peers(os.path.join(folder, f"peers_sms112_{r}_{commit}.json"))
            for r in ("old1", "new1", "new2", "old2")}
    print(f"{call} ({gpu}), the op against DeepGEMM on 112 SMs: DeepGEMM's time over ours, geomean")
    for r, p in runs.items():
        s = [p[k]["deepgemm"] / p[k]["fp8gemm_block_scaled"] for k in p if small(k)]
        l = [p[k]["deepgemm"] / p[k]["fp8gemm_block_scaled"] for k in p if not small(k)]
        print(f"  {r}: M <= 128 {geomean(s):.3f}x, M = 4096 {geomean(l):.3f}x")
    print("New over old time (the op; mean of new1, new2 over mean of old1, old2), per shape:")
    ratios = {}
    for k in runs["old1"]:
        new = (runs["new1"][k]["fp8gemm_block_scaled"] + runs["new2"][k]["fp8gemm_block_scaled"]) / 2
        old = (runs["old1"][k]["fp8gemm_block_scaled"] + runs["old2"][k]["fp8gemm_block_scaled"]) / 2
        ratios[k] = new / old
        print(f"  {k:18s} {ratios[k]:.3f}x")
    print(f"  geomean M <= 128 {geomean([v for k, v in ratios.items() if small(k)]):.3f}x, "
          f"M = 4096 {geomean([v for k, v in ratios.items() if not small(k)]):.3f}x")


def call1_sweep(folder=C1, commit="54d4153", call="Call 1"):
    doc = json.load(open(os.path.join(folder, f"dispatch_sweep_small_{commit}.json")))
    t = {}
    for r in doc["results"]:
        if r.get("family") == "block_scaled" and r.get("ok") and not r.get("peer"):
            t.setdefault(r["shape"], {})[r["kernel"]] = (r["median_us"], r.get("confirm_median_us"))
    print(f"{call}'s sweep: the new kernels' time over the kernel they were predicted against "
          "(block medians; confirmation medians where both have one)")
    pairs = [("64x4096x7168", "64x32_s16", "64x32_s14"), ("128x2112x7168", "64x32_s16", "64x32_s14"),
             ("128x4096x7168", "64x64_s13", "64x64_s12"), ("64x7168x16384", "64x64_s13", "64x64_s12"),
             ("64x7168x2048", "64x64_s13", "64x128_s8_c1x1_promoted_tma_b2")]
    for shape, new, old in pairs:
        def find(name):
            name = name if name.endswith(("_b1", "_b2", "_b3")) else name + "_c1x1_promoted_tma_b1"
            return t[shape].get(name)
        n, o = find(new), find(old)
        conf = f", confirmed {n[1] / o[1]:.3f}x" if n and o and n[1] and o[1] else ""
        print(f"  {shape:14s} {new} / {old}: "
              + (f"{n[0] / o[0]:.3f}x{conf}" if n and o else "not both timed"))


def call2_rules(folder=C2, commit="c1290c2", gpu="H100", call="Call 2",
                families=("block_scaled", "per_tensor_promoted", "per_tensor_fast")):
    """The old and the new rule's pick per family and shape (the old: the rule before c1290c2,
    which assumed 132 SMs and had no thin-second-wave clause), block medians of one sweep."""
    def load(name):
        t = {}
        for r in json.load(open(os.path.join(folder, name)))["results"]:
            if r.get("ok") and not r.get("peer"):
                t.setdefault((r["family"], r["shape"]), {})[r["kernel"]] = float(r["median_us"])
        return t
    big_old = {"block_scaled": "256x128_s3_c1x2_promoted_tma_b4",
               "per_tensor_promoted": "256x128_s4_c1x2_promoted_tma_b2",
               "per_tensor_fast": "128x256_s4_c2x1_fast_tma_b2"}
    big_new = {"block_scaled": "192x128_s4_c2x1_promoted_tma_b2",
               "per_tensor_promoted": "192x128_s4_c2x1_promoted_tma_b2",
               "per_tensor_fast": "192x128_s4_c2x1_fast_tma_b2"}
    runs = [("112", f"dispatch_sweep_rule_sms112_{commit}.json",
             [("64x2048x7168", "64x16_s16_c1x1_%_tma_b1", "64x32_s14_c1x1_%_tma_b1"),
              ("64x4096x4096", "64x32_s14_c1x1_%_tma_b1", "64x64_s12_c1x1_%_tma_b1"),
              ("128x4096x4096", "128x32_s10_c1x1_%_tma_b1", "128x64_s8_c1x1_%_tma_b1"),
              ("4096x8192x4096", big_old, big_new)]),
            ("132", f"dispatch_sweep_rule_sms132_{commit}.json",
             [("64x2560x7168", "64x16_s16_c1x1_%_tma_b1", "64x32_s14_c1x1_%_tma_b1"),
              ("64x2304x7168", "64x16_s16_c1x1_%_tma_b1", "64x32_s14_c1x1_%_tma_b1"),
              ("128x4608x7168", "128x32_s10_c1x1_%_tma_b1", "128x64_s8_c1x1_%_tma_b1")])]
    print(f"{call} ({gpu}): the chapters' rules on the grid's SMs, new pick's time over the old's")
    print("| SMs | shape | family | old pick | new pick | new / old | new / fastest |")
    print("|---|---|---|---|---|---:|---:|")
    for sms, name, cases in runs:
        t = load(name)
        for shape, old, new in cases:
            for fam in families:
                mode = "fast" if fam == "per_tensor_fast" else "promoted"
                o = old[fam] if isinstance(old, dict) else old.replace("%", mode)
                n = new[fam] if isinstance(new, dict) else new.replace("%", mode)
                k = t[(fam, shape)]
                best = min(k.values())
                print(f"| {sms} | {shape.replace('x', ' x ')} | {fam} | `{o.split('_c')[0]}` "
                      f"{k[o]:.1f} us | `{n.split('_c')[0]}` {k[n]:.1f} us | {k[n] / k[o]:.3f}x | "
                      f"{k[n] / best:.3f}x |")


if __name__ == "__main__":
    call1_sweep()
    call1_peers()
    call2_rules()
