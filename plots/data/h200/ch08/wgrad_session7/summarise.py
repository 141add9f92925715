#!/usr/bin/env python3
"""Chapter 8's weight-gradient measurements of session 7 (H200), as Markdown tables.

Sweeps (ch08_grouped_moe --kernels=..., the wgrad cases of bench/peers_moe.py's groups and the six
Fp8Linear shapes as one group of 4096 tokens, skew_lin_*; L2 flush and 50 us GPU-side delay before
each timed launch; each set run twice in one GPU session, the kernel order reversed the second
time): TFLOPS per case, the mean of the two runs, and the geomean over the ten cases of each
kernel's TFLOPS over the registers-epilogue 128 x 192 kernel (the default before session 7) in the
same run. Then the interleaved in-process comparison with DeepGEMM (bench/peers_moe.py
--interleave --only wgrad --wgrad-kernels ...).
Usage: python3 summarise.py"""
import json
import math
import os
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = "128x192_s5_c1x1_promoted_f32"
SETS = [
    ("two-deep loops (25aca38)", ["sweep_loops_25aca38_1.json", "sweep_loops_25aca38_2.json"]),
    ("TMA epilogue (096690a)", ["sweep_epilogue_096690a_1.json", "sweep_epilogue_096690a_2.json"]),
    ("tiles (7546397)", ["sweep_tiles_7546397_1.json", "sweep_tiles_7546397_2.json"]),
    ("column scales read before the wait (f582f59)", ["sweep_prefetch_f582f59_1.json",
                                                      "sweep_prefetch_f582f59_2.json"]),
]
SHORT = {"wgrad_g32_t8192_n4096_k7168": "8192 tok, 4096x7168", "wgrad_g32_t8192_n7168_k2048": "8192 tok, 7168x2048",
         "wgrad_g32_t65536_n4096_k7168": "65536 tok, 4096x7168", "wgrad_g32_t65536_n7168_k2048": "65536 tok, 7168x2048"}


def sweep(files):
    t = defaultdict(list)
    for f in files:
        for b in json.load(open(os.path.join(HERE, f)))["benchmarks"]:
            impl, case = b["name"].split("/")[:2]
            if impl.startswith("ch08_wgrad:") and "TFLOPS" in b:
                t[(impl.split(":", 1)[1], case)].append(b["TFLOPS"])
    return {k: sum(v) / len(v) for k, v in t.items()}


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


for title, files in SETS:
    t = sweep(files)
    cases = sorted({c for _, c in t}, key=lambda c: (not c.startswith("wgrad_g32"), c))
    kernels = sorted({k for k, _ in t})
    print(f"\n{title}: {', '.join(files)}\n")
    print("| kernel | " + " | ".join(SHORT.get(c, c.replace("wgrad_lin_", "lin ")) for c in cases) +
          f" | geomean vs `{BASE}` |")
    print("|---|" + "---:|" * (len(cases) + 1))
    for k in kernels:
        row = [t.get((k, c)) for c in cases]
        ratios = [t[(k, c)] / t[(BASE, c)] for c in cases if (k, c) in t and (BASE, c) in t]
        full = len(ratios) == len(cases)
        g = f"{geomean(ratios):.3f}x ({min(ratios):.3f}-{max(ratios):.3f})" if full else \
            f"{len(ratios)} of {len(cases)} cases (not validated on the others)"
        print(f"| `{k}` | " + " | ".join(f"{v:.1f}" if v else "-" for v in row) + f" | {g} |")

for f in ["peers_wgrad_interleaved_f991838.json", "peers_wgrad_interleaved_f582f59.json"]:
    d = json.load(open(os.path.join(HERE, f)))
    t = {}
    for b in d["benchmarks"]:
        if "TFLOPS" in b:
            impl, case = b["name"].split("/")[:2]
            t[(impl, case)] = b["TFLOPS"]
    cases = sorted({c for _, c in t})
    impls = sorted({i for i, _ in t if i.startswith("fp8gemm_weight_grad")}, key=lambda i: (":" in i, i))
    print(f"\nIn one process, interleaved, against DeepGEMM ({f}; fp8gemm_weight_grad = the library's "
          f"default, 128x192_s5_c1x1_promoted_f32_tma_b1):\n")
    print("| implementation | " + " | ".join(SHORT.get(c, c) for c in cases) + " |")
    print("|---|" + "---:|" * len(cases))
    for i in ["deepgemm_kgrouped_wgrad", "torch_scaled_mm_loop_wgrad"] + impls:
        cells = []
        for c in cases:
            v, dg = t.get((i, c)), t.get(("deepgemm_kgrouped_wgrad", c))
            cells.append("-" if v is None else f"{v:.1f}" if i.startswith("deepgemm") else f"{v:.1f} ({v / dg:.3f}x)")
        print(f"| `{i}` | " + " | ".join(cells) + " |")
print("\n(x): over DeepGEMM's k-grouped kernel in the same group. The cuBLASLt loop (one torch._scaled_mm per "
      "expert) has a 1000 us delay, which does not cover its host work in every case (the logs say where).")
