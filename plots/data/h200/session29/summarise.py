#!/usr/bin/env python3
"""Session 29's tables, printed from the committed call data (nothing typed by hand):

  python3 plots/data/h200/session29/summarise.py

- the weight-gradient sweeps (ch08_grouped_moe, sweep_<commit>_<n>.json): each comparison kernel
  against the first-loop kernel of the same tile and output (ratio of TFLOPS, same run), and the
  geomean of each ratio over the cases;
- the same from bench_torch's sweep of every compiled weight-gradient kernel on each Fp8Linear
  step's own dW (torch/bench_torch.json inside each call's c.txz), and the layer's step ratios;
- ncu's source view (w/ncu_*_source.csv inside c.txz), by opcode: instructions executed per warp
  and K block, and stall samples by reason.
"""
import csv
import collections
import glob
import io
import json
import math
import os
import re
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
TWINS = ("_stag", "_pin_loop1", "_pin_loop4", "_loop0")
# What the plain names of the defaults' tiles ran at each call's commit (their _loop0 twins are
# the first loop): the staggered loop at 951cd2a (call 1), the lean loop from d875aa1 (calls 3-5).
DEFAULT_LOOP = {"951cd2a": "staggered", "d875aa1": "lean", "61a96f7": "lean"}


def base_of(name):
    for t in TWINS:
        if name.endswith(t):
            return name[: -len(t)], t
    return None, None


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def ratio_table(rows, title, commit="?"):
    """rows: {case: {kernel: TFLOPS}} -> prints kernel-vs-base ratios per case and geomean."""
    plain = DEFAULT_LOOP.get(commit[:7], "?")
    print(f"\n## {title}\n")
    per = collections.defaultdict(list)
    for case in sorted(rows):
        row = rows[case]
        for k, v in sorted(row.items()):
            base, tag = base_of(k)
            if tag == "_loop0":  # the staggered default of b308a5d/951cd2a: its twin is the base
                base, k, v = k, base, row.get(base)
                if v is None:
                    continue
                v, bv = v, row[base]
                per[(k, f"{plain} (default) / _loop0")].append(v / bv)
                print(f"{case:30s} {k:44s} {v:7.1f} / {bv:7.1f} = {v / bv:.3f}  ({plain} / _loop0)")
                continue
            if base is None or base not in row:
                continue
            per[(base, tag)].append(v / row[base])
            print(f"{case:30s} {k:44s} {v:7.1f} / {row[base]:7.1f} = {v / row[base]:.3f}")
    print("\ngeomean over the cases:")
    for (base, tag), xs in sorted(per.items()):
        print(f"  {base:44s} {tag:30s} {geomean(xs):.3f}  (min {min(xs):.3f}, max {max(xs):.3f}, {len(xs)} cases)")


def sweep_json(path):
    d = json.load(open(path))
    rows = collections.defaultdict(dict)
    for b in d["benchmarks"]:
        impl, case = b["name"].split("/")[:2]
        if impl.startswith("ch08_wgrad:"):
            rows[case][impl[len("ch08_wgrad:"):]] = b["TFLOPS"]
    return rows, d["context"].get("git_commit", "?")[:7]


def members(call_dir):
    tx = os.path.join(call_dir, "c.txz")
    if not os.path.exists(tx):
        return {}
    with tarfile.open(tx) as t:
        return {m.name: t.extractfile(m).read() for m in t.getmembers() if m.isfile()}


def source_view(raw, per_warp_blocks):
    rows = list(csv.reader(io.StringIO(raw.decode())))
    hdr = rows[1]
    ix = {h: i for i, h in enumerate(hdr)}
    stall_cols = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
    inst, stalls, samples = collections.Counter(), collections.Counter(), 0
    for r in rows[2:]:
        m = re.match(r"(@!?U?P\w+\s+)?([A-Z0-9_]+)", r[ix["Source"]].strip())
        op = m.group(2) if m else "?"
        inst[op] += int(r[ix["Instructions Executed"]] or 0)
        samples += int(r[ix["Warp Stall Sampling (All Samples)"]] or 0)
        for c in stall_cols:
            stalls[c[6:]] += int(r[ix[c]] or 0)
    kernel = rows[0][1] if len(rows[0]) > 1 else rows[0][0]
    return kernel, inst, stalls, samples


def main():
    for call in sorted(glob.glob(os.path.join(HERE, "call*_*"))):
        name = os.path.basename(call)
        for js in sorted(glob.glob(os.path.join(call, "sweep_*.json"))):
            rows, commit = sweep_json(js)
            ratio_table(rows, f"{name}: {os.path.basename(js)} (ch08_grouped_moe, binaries {commit})", commit)
        m = members(call)
        bt = m.get("torch/bench_torch.json")
        if bt:
            d = json.loads(bt)
            rows, steps = {}, []
            for r in d.get("linear", d.get("rows", [])) if isinstance(d, dict) else d:
                if not isinstance(r, dict) or "wgrad_kernel_sweep" not in r:
                    continue
                shape = f"{r.get('N', '?')}x{r.get('K', '?')}"
                rows[shape] = {k: v["TFLOPS"] for k, v in r["wgrad_kernel_sweep"].items() if "TFLOPS" in v}
                p = r["fp8_parts_ms"]
                steps.append((shape, r["times"]["bf16_fwd_bwd"]["median_ms"], r["times"]["fp8_fwd_bwd"]["median_ms"],
                              r["speedup_fwd_bwd"], p["gemm wgrad (bf16 dW)"]))
            if rows:
                commit = d.get("context", {}).get("git_commit", "?")
                ratio_table(rows, f"{name}: bench_torch's sweep of the weight-gradient kernels on each step's dW "
                                  f"(package {commit[:7]})", commit)
                print("\nFp8Linear (M = 4096): N x K, bf16 step ms, FP8 step ms, speed-up, the layer's wgrad ms")
                for s in steps:
                    print(f"  {s[0]:12s} {s[1]:.3f} {s[2]:.3f} {s[3]:.4f} {s[4]:.3f}")
        for key in sorted(k for k in m if k.endswith("_source.csv")):
            # warp-blocks: (N/BM) (K/BN) tiles x T/128 K blocks x 8 consumer warps, N 4096, K 7168, T 4096
            kernel, inst, stalls, samples = source_view(m[key], None)
            tile = re.search(r"KernelConfig<\(int\)(\d+), \(int\)(\d+)", kernel)
            nvjet = re.search(r"nvjet_\w+?_(\d+)x(\d+)_", kernel)
            bm, bn = (int(tile.group(1)), int(tile.group(2))) if tile else (
                (int(nvjet.group(1)), int(nvjet.group(2))) if nvjet else (128, 128))
            wb = (4096 // bm) * (7168 // bn) * (4096 // 128) * 8
            loop = re.search(r"KGroupedMath<.*\(int\)(\d+)>>", kernel)
            print(f"\n## {name}: {key} ({bm} x {bn}{', loop ' + loop.group(1) if loop else ''}): "
                  f"{sum(inst.values()) / 1e6:.1f} M instructions, {sum(inst.values()) / wb:.0f} per warp "
                  f"and K block ({wb} warp-blocks of {bn // 2 if bm == 128 else bn} accumulators per thread)")
            print("  per warp and K block: " + ", ".join(f"{k} {v / wb:.1f}" for k, v in inst.most_common(12)))
            print("  stall samples: " + ", ".join(f"{k} {100 * v / samples:.1f}%" for k, v in stalls.most_common(8)))


if __name__ == "__main__":
    sys.exit(main())
