#!/usr/bin/env python3
"""Session 31: the weight gradient's dB kernels with two staging units for one group (FP32 and
bf16 dB), and issue 10's peers again, from the committed files of each call:

  call 1 (d00cfce): bench/wgrad_vs_cublaslt.py (FP32 dW of one group of 4096 tokens, each side
      20 launches after an L2 flush, one after the other: its medians as the call log has them);
  call 2 (8776cd2: the two-unit kernels the FP32 default for one group): chapter 8's sweep of the
      four FP32 kernels on one group (the six Fp8Linear shapes at 4096 tokens, two at 16384; two
      runs, the kernel order reversed), the rule's pick before and after; wgrad_vs_cublaslt with
      the new default; DeepGEMM's weight gradient interleaved (--only wgrad);
  call 3 (945a6e2: bf16 dB with two units, the bf16 default): the same sweep of the bf16
      kernels, bench_torch's own sweep of them on the layer's dW, and issue 10's peers in one
      process, interleaved (bench/peers_moe.py --interleave --delay-us 150 --cupti-launches 0),
      beside session 30's call 5: the table between <!-- session31-peers:begin/end --> in
      chapter 8's NOTEBOOK.md (session31-f32 and session31-bf16 hold the sweeps).

    python3 plots/data/h200/session31/summarise.py
    python3 plots/data/h200/session31/summarise.py --check chapters/08_grouped_moe/NOTEBOOK.md
"""
import collections
import glob
import json
import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "engine_wait"))
sys.path.insert(0, os.path.join(HERE, "..", "ch08"))
import peers as session17  # noqa: E402  (the JSON reader)
import readme_block  # noqa: E402  (the README check)

CALL1, CALL2, CALL3 = (os.path.join(HERE, d) for d in ("call1_d00cfce", "call2_8776cd2", "call3_945a6e2"))
S30 = os.path.join(HERE, "..", "session30", "call5_ca5bdb1")
KINDS = ["bal", "skew", "masked", "wgrad"]
OURS = {"masked": "fp8gemm_grouped_masked", "wgrad": "fp8gemm_weight_grad"}
DG = {"masked": "deepgemm_masked", "wgrad": "deepgemm_kgrouped_wgrad"}
# Issue 10's targets: ours over the peer (time ratio peer / ours) at least this.
TARGET = {"bal": 1.05, "skew": 1.2, "masked": 1.05, "wgrad": 1.05}
TORCH_TARGET = 1.5


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs))


def sweep_table(folder, kind):
    """TFLOPS per (case, kernel) of both runs of one call's sweep; kind '_f32' or ''."""
    t = collections.defaultdict(lambda: collections.defaultdict(list))
    for path in sorted(glob.glob(os.path.join(folder, "sweep_*.json"))):
        for b in json.load(open(path))["benchmarks"]:
            impl, case = b["name"].split("/")[:2]
            if impl.startswith("ch08_wgrad:"):
                t[case][impl[len("ch08_wgrad:"):]].append(b["TFLOPS"])
    return t


def sweep(folder, f32):
    tag = "_f32" if f32 else ""
    k = lambda tile, s, b: f"{tile}_{s}_c1x1_promoted{tag}_tma_{b}"  # noqa: E731
    t = sweep_table(folder, tag)
    lines = ["| case (one group) | 128 x 192 s5 b1 | s4 b2 | b2 / b1 (run 1, run 2) | 128 x 256 s4 b1 | s3 b2 | b2 / b1 (run 1, run 2) |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    r192, r256 = [], []
    order = [f"wgrad_lin_t4096_n{nk}" for nk in ("2112_k7168", "24576_k1536", "32768_k512", "7168_k16384",
                                                   "4096_k7168", "7168_k2048")]
    order += ["wgrad_lin_t16384_n4096_k7168", "wgrad_lin_t16384_n7168_k2048"]
    for case in order:
        row = t[case]
        a1, a2 = row[k("128x192", "s5", "b1")], row[k("128x192", "s4", "b2")]
        b1, b2 = row[k("128x256", "s4", "b1")], row[k("128x256", "s3", "b2")]
        ra = [y / x for x, y in zip(a1, a2)]
        rb = [y / x for x, y in zip(b1, b2)]
        r192 += ra
        r256 += rb
        m = lambda xs: sum(xs) / len(xs)  # noqa: E731
        lines.append(f"| {case[len('wgrad_lin_'):]} | {m(a1):.1f} | {m(a2):.1f} | {', '.join(f'{x:.3f}' for x in ra)} | "
                     f"{m(b1):.1f} | {m(b2):.1f} | {', '.join(f'{x:.3f}' for x in rb)} |")
    lines.append(f"| geomean | | | **{geomean(r192):.3f}** | | | **{geomean(r256):.3f}** |")
    return "\n".join(lines)


def pick_gain():
    """Call 2: the FP32 rule's pick at 8776cd2 over its pick before (TFLOPS, mean of two runs)."""
    t = sweep_table(CALL2, "_f32")
    old_new = {  # default_wgrad_kernel before and after (test_chapter_08_wgrad_args checks both rules' picks)
        "t4096_n2112_k7168": ("128x192_s5", "128x192_s4"), "t4096_n24576_k1536": ("128x256_s4", "128x192_s4"),
        "t4096_n32768_k512": ("128x256_s4", "128x256_s3"), "t4096_n7168_k16384": ("128x256_s4", "128x192_s4"),
        "t4096_n4096_k7168": ("128x256_s4", "128x256_s3"), "t4096_n7168_k2048": ("128x192_s5", "128x192_s4"),
        "t16384_n4096_k7168": ("128x256_s4", "128x256_s3"), "t16384_n7168_k2048": ("128x192_s5", "128x192_s4")}
    full = lambda s: f"{s}_c1x1_promoted_f32_tma_" + ("b1" if s.endswith(("s5", "256_s4")) else "b2")  # noqa: E731
    lines = ["| case (one group, FP32 dB) | pick before | pick now | now / before (TFLOPS, mean of two runs) |", "|---|---|---|---:|"]
    gains = []
    for case, (old, new) in old_new.items():
        row = t["wgrad_lin_" + case]
        m = lambda xs: sum(xs) / len(xs)  # noqa: E731
        g = m(row[full(new)]) / m(row[full(old)])
        gains.append(g)
        lines.append(f"| {case} | `{full(old)}` | `{full(new)}` | {g:.3f} |")
    lines.append(f"| geomean | | | **{geomean(gains):.3f}** |")
    return "\n".join(lines)


def cublaslt(folder):
    """wgrad_vs_cublaslt's medians from a call log: {(shape, side): us}."""
    out, shape = {}, None
    for line in open(os.path.join(folder, "call.log")):
        m = re.match(r"rc=0 (\d+):(\d+)$", line.strip())
        if m:
            shape = f"{m.group(1)} x {m.group(2)}"
        m = re.match(r"(ours(?::\S+)?|cublaslt): median ([\d.]+) us", line.strip())
        if m and shape:
            out[(shape, m.group(1))] = float(m.group(2))
    return out


def cublaslt_table():
    # Call 1's log names no shape per block: after its "wgrad_vs_cublaslt" line, the three runs'
    # "rc=" lines come in its loop's order, 4096 x 7168, 7168 x 2048, 2112 x 7168.
    c1, shape, i, started = {}, None, 0, False
    for line in open(os.path.join(CALL1, "call.log")):
        started |= "wgrad_vs_cublaslt" in line
        if started and line.startswith("rc=") and i < 3:
            shape = ["4096 x 7168", "7168 x 2048", "2112 x 7168"][i]
            i += 1
        m = re.match(r"(ours(?::\S+)?|cublaslt): median ([\d.]+) us", line.strip())
        if m and shape:
            c1[(shape, m.group(1))] = float(m.group(2))
    c2 = cublaslt(CALL2)
    lines = ["| N x K (4096 tokens, FP32 dW) | one-unit default before (call 1), us | two-unit default (call 2), us | cuBLASLt (call 2), us | cuBLASLt's time / ours (call 2) |",
             "|---|---:|---:|---:|---:|"]
    for shape in ["2112 x 7168", "24576 x 1536", "32768 x 512", "7168 x 16384", "4096 x 7168", "7168 x 2048"]:
        before = c1.get((shape, "ours"))
        lines.append(f"| {shape} | {before if before else '-'} | {c2[(shape, 'ours')]} | {c2[(shape, 'cublaslt')]} | "
                     f"{c2[(shape, 'cublaslt')] / c2[(shape, 'ours')]:.3f} |")
    return "\n".join(lines)


def medians(folder, wgrad_only=False):
    """The medians of the folder's peers JSON: the full run's, or the --only wgrad run's."""
    (path,) = [p for p in glob.glob(os.path.join(folder, "peers_ch08_*.json"))
               if ("_wgrad_" in os.path.basename(p)) == wgrad_only]
    return session17.medians(os.path.basename(path), folder)


def peers():
    return peers_table(medians(CALL3), medians(S30), "session 30", "call 3",
                       wgrad=medians(CALL2, wgrad_only=True))


def peers_table(now, before, before_label, call_label, wgrad=None):
    """Issue 10's ratios (peer's time / ours) of one peers run `now`, another run's in brackets;
    `wgrad`: a --only wgrad run's, beside the weight-gradient rows (session 32 imports this)."""
    wg = wgrad or {}
    cases = sorted({c for (_, c) in now}, key=lambda c: (KINDS.index(c.split("_")[0]), c))
    lines = [f"| case | / DeepGEMM ({before_label}) | / DeepGEMM with its padding step | / torch grouped ({before_label}) |",
             "|---|---:|---:|---:|"]
    met = total = 0
    for c in cases:
        kind = c.split("_")[0]
        ours, dg = OURS.get(kind, "fp8gemm_grouped_contiguous"), DG.get(kind, "deepgemm_contiguous")

        def ratio(m, peer):
            return m[(peer, c)] / m[(ours, c)] if (peer, c) in m and (ours, c) in m else None

        f = lambda x: f"{x:.3f}" if x else "-"  # noqa: E731
        r, rt = ratio(now, dg), ratio(now, "torch_scaled_grouped_mm")
        total += 1
        met += r >= TARGET[kind]
        if kind == "skew":
            total += 1
            met += rt >= TORCH_TARGET
        extra = f"; --only wgrad, call 2: {f(ratio(wg, dg))}" if kind == "wgrad" and wg else ""
        lines.append(f"| {c} | {f(r)} ({f(ratio(before, dg))}{extra}) | {f(ratio(now, 'deepgemm_contiguous_with_pad'))} | "
                     f"{f(rt)} ({f(ratio(before, 'torch_scaled_grouped_mm'))}) |" if rt else
                     f"| {c} | {f(r)} ({f(ratio(before, dg))}{extra}) | - | - |")
    lines.append(f"\nIssue 10's target ratios met in {call_label}: **{met} of {total}**.")
    return "\n".join(lines)


def blocks():
    return {"session31-f32": sweep(CALL2, True) + "\n\n" + pick_gain() + "\n\n" + cublaslt_table(),
            "session31-bf16": sweep(CALL3, False),
            "session31-peers": peers()}


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        for marker, text in blocks().items():
            readme_block.check(sys.argv[2], marker, text, "session31/summarise.py",
                               "plots/data/h200/session31/call{1,2,3}_*/")
    else:
        for marker, text in blocks().items():
            print(f"<!-- {marker}:begin -->\n{text}\n<!-- {marker}:end -->\n")
