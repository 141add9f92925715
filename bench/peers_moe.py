#!/usr/bin/env python3
"""The Python peers of chapter 8 (grouped FP8 GEMM for MoE), timed by the harness's method (bench/peers.py).

Timing, L2 flush, GPU-side delay, CUPTI second view, float64 checking, quantisers, JSON output and the
DeepGEMM JIT pre-warm all come from bench/peers.py (imported, not copied); this file adds the grouped
workloads, their data layouts and the peers' calls.

Workloads (case names are the "shape" part of a benchmark name "<implementation>/<case>"):
  balanced  contiguous, every expert the same rows (multiples of 128, so no padding):
            bal_g4x8192_n4096_k7168, bal_g8x4096_n7168_k2048 (issue 10's targets)
  skewed    contiguous, G = 32 experts, total rows 8192 and 65536, rows per expert from a seeded skewed
            distribution (lognormal weights, --skew-sigma; --empty-experts of them empty; no non-zero count
            a multiple of 128); both GEMMs of a DeepSeek-V3 expert layer: gate+up N = 4096, K = 7168 and
            down N = 7168, K = 2048: skew_g32_t<T>_n<N>_k<K>
  masked    (G, rows) = (1, 1024), (2, 512), (4, 256) with both (N, K): A [G, rows, K], masked_m[g] = rows
            (every row valid: the DeepGEMM README's masked benchmark): masked_g<G>x<rows>_n<N>_k<K>
  wgrad     the skewed groups again, weight gradient dB_g [N, K] = dD_g^T . A_g over each expert's tokens,
            FP32 out: wgrad_g32_t<T>_n<N>_k<K>

Implementations (DeepGEMM 2.6.1, commit 54e2261: csrc/apis/gemm.hpp, csrc/apis/layout.hpp,
deep_gemm/utils/layout.py, tests/test_fp8_fp4.py, tests/generators.py):
  deepgemm_contiguous       deep_gemm.m_grouped_fp8_gemm_nt_contiguous((A_pad, sfa), (B, sfb), D_pad, m_indices):
                            A_pad [M_pad, K] e4m3, each expert's rows padded to
                            get_mk_alignment_for_contiguous_layout() = 128; m_indices int32 [M_pad], the expert
                            of each row, -1 on padding rows; sfa [M_pad, K/128] fp32 MN-major, TMA-aligned
                            (strides (1, M_pad)), made before timing so the call launches the GEMM only;
                            B [G, N, K] e4m3, sfb [G, N/128, K/128] fp32; D_pad [M_pad, N] bf16. GEMM time
                            alone; the padded layout is built (outside the timing) by deepgemm_pad_step's code.
  deepgemm_contiguous_psum  the same call with use_psum_layout=True and grouped_layout = int32 [G] ends of each
                            expert's rows in the padded layout (start of expert g = align(end of g-1, 128)); the
                            same padded A and D, no per-row index (SM90 path: GemmType::MGroupedContiguousWithPsumLayout).
  deepgemm_pad_step         the padding step alone, torch ops on the GPU from the unpadded tokens (A [T, K] e4m3,
                            sfa [T, K/128] fp32) and the device offsets (int32 cumulative ends): per-token
                            destination row (searchsorted on the ends, cumsum of aligned counts), index_copy_ of A's
                            rows and of the scales into the MN-major padded scales, m_indices = -1 then the expert of
                            each real row. Buffers are allocated once (sizes from the host-known counts; padding
                            rows stay zero), so nothing reads the offsets on the host. No TFLOPS (GB/s only).
  deepgemm_contiguous_with_pad  the padding step and the GEMM in one timed call.
  torch_scaled_grouped_mm   torch._scaled_grouped_mm(A, B.transpose(-2, -1), scale_a, scale_b, offs=ends,
                            out_dtype=bf16, use_fast_accum=False): A [T, K] e4m3 with ROWWISE scales [T], B
                            [G, N, K] e4m3 (passed as [G, K, N] column-major) with rowwise scales [G, N], offs int32
                            [G] cumulative ends (empty experts = repeated ends). Rowwise is the only FP8 recipe it
                            takes (besides MXFP8 with e8m0 scales), so its operands are the same bf16 data quantised
                            rowwise; its check uses the rowwise-dequantised operands.
                            (aten/src/ATen/native/cuda/GroupedBlas.cpp _scaled_grouped_mm_cuda,
                            _check_scales_fp8_rowwise; test/test_matmul_cuda.py test_scaled_grouped_gemm_2d_3d.)
  torch_scaled_grouped_mm_fastaccum  the same with use_fast_accum=True.
  deepgemm_masked           deep_gemm.m_grouped_fp8_gemm_nt_masked((A, sfa), (B, sfb), D, masked_m, expected_m):
                            A [G, rows, K], sfa [G, rows, K/128] fp32 MN-major TMA-aligned (strides
                            (align(rows,4) K/128, 1, align(rows,4))), D [G, rows, N] bf16, masked_m int32 [G] on the
                            device; expected_m = int(--masked-expected-factor x mean(masked_m)), as 2.6.1's
                            tests/test_fp8_fp4.py (int(expected_m_per_group * 1.2)).
  deepgemm_masked_exact     the same with expected_m = mean(masked_m) (= rows: the 1.x test's perf call).
  deepgemm_kgrouped_wgrad   deep_gemm.k_grouped_fp8_gemm_nt_contiguous((a, sfa), (b, sfb), d, ks, ks_tensor, c=d,
                            recipe=(1, 1, 128)) — the SM90 k-grouped FP8 GEMM (k_grouped_fp8_gemm_tn_contiguous is
                            SM100 only): tokens of each expert padded with zero tokens to a multiple of 128 (its
                            host assert ks[i] % 128 == 0); a = concat over experts of dD_g^T [N, Tpad_g] (K-major),
                            b = concat of A_g^T [K, Tpad_g]; 1 x 128 scales along the tokens, per expert:
                            sfa = [sum Tpad/128, N].T, sfb = [sum Tpad/128, K].T (fp32); d = c = [G, N, K] fp32 —
                            it always accumulates (DG_HOST_ASSERT(c.has_value())), so d is zeroed before the
                            checked call and keeps accumulating while timed; an empty expert leaves d[g] untouched.
  torch_scaled_mm_loop_wgrad  a loop over non-empty experts of torch._scaled_mm (cuBLASLt) with 1 x 128 scales on
                            both operands (BlockWise1x128 x BlockWise1x128): mat1 = dD_g^T [N, Tpad_g] row-major,
                            mat2 = A_g [Tpad_g, K] column-major (views of the same buffers as DeepGEMM's),
                            scale_a [N, Tpad_g/128] strides (1, N), scale_b [Tpad_g/128, K] contiguous; FP32 out
                            written in place (out=) into [G, N, K] when torch accepts it (the label says what ran).
  fp8gemm_grouped_contiguous  this repository's library (chapter 8's kernels) through its PyTorch op (package
                            fp8gemm, chapters/10_production/python): fp8gemm.ops.gemm_grouped_contiguous(A, sfa, B,
                            sfb, offsets) on the UNPADDED tokens (no padding step: any rows per expert, 0 included):
                            A [T, K] e4m3 (the pad step's input), sfa [T, K/128] fp32 MN-major (strides (1, align(T,
                            4)): read in place; the K-major one would be copied inside every call), B and sfb
                            DeepGEMM's tensors, offsets int32 [G + 1] (0, then the cumulative ends) on the device;
                            D [T, N] bf16, allocated by the op (it has no out=).
  fp8gemm_grouped_masked    fp8gemm.ops.gemm_grouped_masked(A, sfa, B, sfb, masked_m): A [G, rows, K] and B, sfb,
                            masked_m DeepGEMM's tensors, sfa [G * rows, K/128] fp32 MN-major over all G * rows
                            rows (strides (1, align(G * rows, 4)); DeepGEMM's [G, rows, K/128] is MN-major per
                            group, which a 2-D scale_a cannot express); D [G, rows, N] bf16 (allocated by the op,
                            rows past masked_m unwritten and not compared).
  fp8gemm_weight_grad       fp8gemm.ops.gemm_weight_grad(dd_t, sfa, a_t, sfb, offsets, out=d, accumulate=False): the
                            same codes as DeepGEMM's in the op's layout, dd_t = dD^T [N, sum Tpad] and a_t = A^T
                            [K, sum Tpad] row-major (expert g's tokens from column sum over j < g of Tpad_j: what
                            quantize_tokens_transposed_1x128 writes, with T_cap = sum Tpad), made outside the timing;
                            the scales DeepGEMM's tensors themselves (MN-major: read in place); offsets int32 [G + 1]
                            the REAL token offsets (the op derives the padded columns); d [G, N, K] fp32 written,
                            not accumulated (empty experts zeroed).

Every result is checked before it is timed against a float64 reference of the dequantised operands, per expert
(float64 on the GPU; the expert's rows only, so padding rows and rows past masked_m are not compared), with the
harness's tolerance (2^-8 + 2.5e-7 x reduction length, on the relative Frobenius error over all experts and on the
worst 128 x 128 tile of any expert); a wrong result is an error entry, without a time. TFLOPS count real rows
only: 2 x sum(rows) x N x K. GB/s count the real data once (A rows, the weights of non-empty experts, D rows, scales).

    python3 bench/peers_moe.py --dry-run --groups-out /tmp/groups.json   # plan and group sizes; no torch
    python3 bench/peers_moe.py --ch08-case-args   # the skewed cases as ch08_grouped_moe's --case arguments
    python3 bench/peers_moe.py --out gpu_results/json/peers_ch08.json --groups-out gpu_results/json/moe_groups.json
    python3 bench/peers_moe.py --only deepgemm_masked,masked --out /tmp/m.json   # filters: implementations,
                                                                                   # kinds, case names (globs)
    python3 bench/peers_moe.py --interleave --out /tmp/i.json   # each case's implementations timed together
                                                                  # (rounds of one call each, order rotating)
"""

from __future__ import annotations

import argparse
import fnmatch
import gc
import json
import math
import os
import random
import re
import sys
import time
import zlib
from typing import Callable, NamedTuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers as P  # noqa: E402  (bench/peers.py: timing, flush, delay, checks, JSON, JIT pre-warm)

ALIGN = 128  # DeepGEMM's get_mk_alignment_for_contiguous_layout() on SM90 (kLegacyMKAlignmentForContiguousLayout)
DSV3_NK = [(4096, 7168), (7168, 2048)]  # DeepSeek-V3 expert layer: gate+up, down
BALANCED = [(4, 8192, 4096, 7168), (8, 4096, 7168, 2048)]  # (G, rows per expert, N, K)
MASKED = [(1, 1024), (2, 512), (4, 256)]  # (G, rows)

DG_CONTIG = "deepgemm_contiguous"
DG_PSUM = "deepgemm_contiguous_psum"
DG_PAD = "deepgemm_pad_step"
DG_CONTIG_PAD = "deepgemm_contiguous_with_pad"
TORCH_GMM = "torch_scaled_grouped_mm"
TORCH_GMM_FA = "torch_scaled_grouped_mm_fastaccum"
DG_MASKED = "deepgemm_masked"
DG_MASKED_EXACT = "deepgemm_masked_exact"
DG_WGRAD = "deepgemm_kgrouped_wgrad"
TORCH_LOOP_WGRAD = "torch_scaled_mm_loop_wgrad"
# This repository's library through its PyTorch ops (fp8gemm.ops): named after the op each calls
FP8_CONTIG = "fp8gemm_grouped_contiguous"
FP8_MASKED = "fp8gemm_grouped_masked"
FP8_WGRAD = "fp8gemm_weight_grad"

IMPLS_BY_KIND = {
    "balanced": [DG_CONTIG, DG_PSUM, TORCH_GMM, TORCH_GMM_FA, FP8_CONTIG],
    "skewed": [DG_CONTIG, DG_PSUM, DG_PAD, DG_CONTIG_PAD, TORCH_GMM, TORCH_GMM_FA, FP8_CONTIG],
    "masked": [DG_MASKED, DG_MASKED_EXACT, FP8_MASKED],
    "wgrad": [DG_WGRAD, TORCH_LOOP_WGRAD, FP8_WGRAD],
}
ALL_IMPLS = [DG_CONTIG, DG_PSUM, DG_PAD, DG_CONTIG_PAD, TORCH_GMM, TORCH_GMM_FA, DG_MASKED, DG_MASKED_EXACT,
             DG_WGRAD, TORCH_LOOP_WGRAD, FP8_CONTIG, FP8_MASKED, FP8_WGRAD]
DG_IMPLS = {DG_CONTIG, DG_PSUM, DG_PAD, DG_CONTIG_PAD, DG_MASKED, DG_MASKED_EXACT, DG_WGRAD}
FP8_IMPLS = {FP8_CONTIG, FP8_MASKED, FP8_WGRAD}
HOST_HEAVY = {DG_PAD, DG_CONTIG_PAD, TORCH_LOOP_WGRAD}  # many launches per call: --long-delay-us

MOE_METHOD = (
    " MoE (bench/peers_moe.py): TFLOPS = 2 x (real rows, summed over experts) x N x K / median (wgrad: 2 x N x K x "
    "real tokens); padding rows, rows past masked_m and empty experts do no counted work. Implementations with "
    "many launches per call ({host_heavy}) use a {long_delay:g} us delay instead, so that Python's launches are "
    "enqueued before the GPU reaches them (delay_covers_host says whether they were). Checks: float64 reference per "
    "expert of the dequantised operands, on the GPU. fp8gemm_* are this repository's library through its PyTorch ops "
    "(fp8gemm.ops), one op call each, on DeepGEMM's quantised data (the forward on the unpadded rows), against the "
    "same references, the output NaN-poisoned before the checked call (output_poisoned)."
)


MOE_INTERLEAVE = (
    " --interleave groups by case: a case's checked implementations are timed in one group, each with its own "
    "delay; a wrong result stays out of the group."
)


def moe_method(args) -> str:
    """The MoE part of the method text (after peers.py's method_text, which describes --interleave)."""
    return MOE_METHOD.format(host_heavy=", ".join(sorted(HOST_HEAVY)), long_delay=args.long_delay_us) + \
        (MOE_INTERLEAVE if args.interleave else "")


def align(x: int, a: int = ALIGN) -> int:
    return (x + a - 1) // a * a


def cumsum(xs: list[int]) -> list[int]:
    out, s = [], 0
    for x in xs:
        s += x
        out.append(s)
    return out


# ------------------------------------------------------------------------------------------------
# The plan (pure Python: the same in --dry-run, in the GPU run and in the JIT warm-up workers)


def skewed_counts(total: int, G: int, seed: int, sigma: float, n_empty: int) -> list[int]:
    """Rows per expert: lognormal(0, sigma) weights, n_empty experts (chosen at random) get none, counts are
    the weights' shares of `total` (largest remainders), then any non-zero multiple of 128 gives one row to
    the largest expert (repeated until none is left)."""
    if not 0 <= n_empty < G:
        raise ValueError(f"need 0 <= empty experts < G, got {n_empty}, G = {G}")
    rng = random.Random(seed)
    w = [rng.lognormvariate(0.0, sigma) for _ in range(G)]
    for e in rng.sample(range(G), n_empty):
        w[e] = 0.0
    s = sum(w)
    raw = [total * x / s for x in w]
    c = [int(math.floor(r)) for r in raw]
    for i in sorted(range(G), key=lambda i: raw[i] - c[i], reverse=True)[:total - sum(c)]:
        c[i] += 1
    for _ in range(4 * G):
        bad = [i for i in range(G) if c[i] > 0 and c[i] % ALIGN == 0]
        if not bad:
            break
        i = bad[0]
        j = max((k for k in range(G) if k != i and c[k] > 0), key=lambda k: c[k])
        c[i] -= 1
        c[j] += 1
    assert sum(c) == total and sum(1 for x in c if x == 0) >= n_empty
    return c


class Case:
    def __init__(self, kind: str, cid: str, G: int, N: int, K: int, counts: list[int], workload: str,
                 rows_max: int = 0):
        self.kind, self.cid, self.G, self.N, self.K = kind, cid, G, N, K
        self.counts = list(counts)
        self.workload = workload
        self.rows_max = rows_max  # masked: A is [G, rows_max, K]
        self.total = sum(self.counts)
        self.ends = cumsum(self.counts)
        self.starts = [e - c for e, c in zip(self.ends, self.counts)]
        self.padded = [align(c) for c in self.counts]
        self.pad_ends = cumsum(self.padded)
        self.pad_starts = [e - c for e, c in zip(self.pad_ends, self.padded)]
        self.m_pad = sum(self.padded)
        self.impls = list(IMPLS_BY_KIND[kind])

    @property
    def flops(self) -> float:
        return 2.0 * self.total * self.N * self.K

    @property
    def red_len(self) -> int:
        """Reduction length for the tolerance: K, or the longest expert's tokens (wgrad)."""
        return max(self.counts) if self.kind == "wgrad" else self.K

    def shape_counters(self) -> dict:
        return {"G": float(self.G), "N": float(self.N), "K": float(self.K), "rows": float(self.total),
                "padded_rows": float(self.m_pad if self.kind != "masked" else self.G * self.rows_max),
                "empty_experts": float(sum(1 for c in self.counts if c == 0))}


def workload_seed(seed: int, G: int, total: int) -> int:
    return seed * 1_000_003 + G * 10_007 + total


def ch08_case_args(groups: dict) -> list[str]:
    """The skewed cases as ch08_grouped_moe's --case arguments (skew_g<G>_t<T>_n<N>_k<K>, the
    names this script gives them), one per GEMM of each workload."""
    return [f"--case={w['name']}_n{n}_k{k}:{','.join(map(str, w['counts']))}:{n}:{k}"
            for w in groups["skewed"] for n, k in w["gemms_nk"]]


def build_plan(args) -> tuple[list[Case], dict]:
    cases: list[Case] = []
    groups = {"alignment": ALIGN, "seed": args.groups_seed,
              "generator": (f"bench/peers_moe.py skewed_counts: random.Random(seed * 1000003 + G * 10007 + total); "
                            f"lognormal(0, {args.skew_sigma:g}) weights, {args.empty_experts} experts set empty "
                            f"(random.sample), largest-remainder shares of total, then any non-zero multiple of "
                            f"{ALIGN} gives one row to the largest expert"),
              "balanced": [], "skewed": [], "masked": []}
    for (G, m, N, K) in BALANCED:
        c = Case("balanced", f"bal_g{G}x{m}_n{N}_k{K}", G, N, K, [m] * G, f"bal_g{G}x{m}")
        cases.append(c)
        groups["balanced"].append({"name": c.cid, "G": G, "rows_per_expert": m, "N": N, "K": K,
                                   "offsets": c.ends})
    skew = []
    for T in args.totals:
        G = args.experts
        s = workload_seed(args.groups_seed, G, T)
        counts = skewed_counts(T, G, s, args.skew_sigma, args.empty_experts)
        wl = f"skew_g{G}_t{T}"
        skew.append((wl, G, counts))
        groups["skewed"].append({"name": wl, "G": G, "total_rows": T, "seed": s, "counts": counts,
                                 "offsets": cumsum(counts), "padded_counts": [align(x) for x in counts],
                                 "padded_rows": sum(align(x) for x in counts),
                                 "gemms_nk": [list(nk) for nk in DSV3_NK]})
    for wl, G, counts in skew:
        for (N, K) in DSV3_NK:
            cases.append(Case("skewed", f"{wl}_n{N}_k{K}", G, N, K, counts, wl))
    for (G, m) in MASKED:
        for (N, K) in DSV3_NK:
            c = Case("masked", f"masked_g{G}x{m}_n{N}_k{K}", G, N, K, [m] * G, f"masked_g{G}x{m}", rows_max=m)
            cases.append(c)
            groups["masked"].append({"name": c.cid, "G": G, "rows_max": m, "masked_m": c.counts, "N": N, "K": K})
    for wl, G, counts in skew:
        for (N, K) in DSV3_NK:
            cases.append(Case("wgrad", f"wgrad_{wl[5:]}_n{N}_k{K}", G, N, K, counts, wl))
    return cases, groups


def masked_expected_m(case: Case, impl: str, factor: float) -> int:
    mean = sum(case.counts) / case.G
    return max(1, int(mean * factor)) if impl == DG_MASKED else max(1, int(mean))


def select(cases: list[Case], only: str | None) -> list[tuple[Case, list[str]]]:
    """--only: comma-separated implementation names, kinds (balanced, skewed, masked, wgrad) or case names,
    globs allowed; implementations and cases are filtered separately (none given of a sort: all of it)."""
    impl_pats, case_pats = [], []
    if only:
        kinds = list(IMPLS_BY_KIND)
        for tok in (t.strip() for t in only.split(",")):
            if not tok:
                continue
            hit_i = any(fnmatch.fnmatchcase(i, tok) for i in ALL_IMPLS)
            hit_c = any(fnmatch.fnmatchcase(k, tok) for k in kinds) or \
                any(fnmatch.fnmatchcase(c.cid, tok) or fnmatch.fnmatchcase(c.workload, tok) for c in cases)
            if not hit_i and not hit_c:
                raise ValueError(f"--only {tok!r} matches no implementation ({', '.join(ALL_IMPLS)}), kind "
                                 f"({', '.join(kinds)}) or case name")
            if hit_i:
                impl_pats.append(tok)
            if hit_c:
                case_pats.append(tok)
    out = []
    for c in cases:
        if case_pats and not any(fnmatch.fnmatchcase(c.kind, p) or fnmatch.fnmatchcase(c.cid, p) or
                                 fnmatch.fnmatchcase(c.workload, p) for p in case_pats):
            continue
        impls = [i for i in c.impls if not impl_pats or any(fnmatch.fnmatchcase(i, p) for p in impl_pats)]
        if impls:
            out.append((c, impls))
    return out


def describe_counts(c: Case) -> str:
    nz = [x for x in c.counts if x > 0]
    return (f"rows {c.total} (min non-empty {min(nz)}, max {max(nz)}, empty {c.G - len(nz)}, "
            f"multiples of 128 {sum(1 for x in nz if x % ALIGN == 0)}), padded {c.m_pad} "
            f"(+{100.0 * (c.m_pad - c.total) / max(1, c.total):.1f} %)")


# ------------------------------------------------------------------------------------------------
# The GPU part


def load_fops():
    """This repository's PyTorch ops: (fp8gemm.ops, what was loaded) when the package imports and its
    compiled ops (_C.so) are loaded, else (None, why not). The package imports without _C.so (its
    available() is then False), so importing is not enough."""
    try:
        import fp8gemm
        import fp8gemm.ops as fops
    except Exception as e:  # noqa: BLE001 - any import failure means: skip it, say why
        return None, (f"fp8gemm not importable ({type(e).__name__}: {e}); build the CMake target fp8gemm_torch, "
                      "stage it with chapters/10_production/python/stage.sh BUILD DEST and put DEST on PYTHONPATH")
    where = os.path.dirname(getattr(fp8gemm, "__file__", "") or "") or "?"
    if not fp8gemm.available():
        return None, f"fp8gemm (from {where}) has no compiled ops: {fp8gemm.unavailable_reason()}"
    try:
        lib = fops.library_version()
    except Exception as e:  # noqa: BLE001 - informational
        lib = f"unknown ({type(e).__name__}: {e})"
    # The commit the staged package was built from (stage.sh writes it): the run's git_commit says which
    # checkout ran this script, which on a machine that only received a copy of the tree can differ.
    try:
        with open(os.path.join(where, "commit.txt"), encoding="utf-8") as f:
            pkg_commit = f.read().strip() or "unknown"
    except OSError:
        pkg_commit = "unknown"
    return fops, (f"fp8gemm {getattr(fp8gemm, '__version__', '?')} (library {lib}, commit {pkg_commit}) "
                  f"from {where}")


class PadStep:
    """DeepGEMM's contiguous layout from unpadded tokens, on the GPU: the step deepgemm_pad_step times.
    Inputs: A [T, K] e4m3, sfa [T, L] fp32, ends int32 [G] (device). Outputs (persistent buffers):
    A_pad [M_pad, K], sfa_pad [M_pad, L] MN-major (strides (1, M_pad)), m_indices int32 [M_pad]."""

    def __init__(self, torch, case: Case, L: int, align_rows: int):
        dev = "cuda"
        self.torch = torch
        self.al = align_rows
        self.m_pad = sum((c + align_rows - 1) // align_rows * align_rows for c in case.counts)
        self.ends = torch.tensor(case.ends, dtype=torch.int32, device=dev)
        self.ar = torch.arange(case.total, dtype=torch.int64, device=dev)
        self.zero = torch.zeros(1, dtype=torch.int64, device=dev)
        self.a_pad = torch.zeros((self.m_pad, case.K), dtype=torch.uint8, device=dev)
        self.sfa_pad = torch.empty_strided((self.m_pad, L), (1, self.m_pad), dtype=torch.float32, device=dev)
        self.sfa_pad.fill_(1.0)
        self.m_idx = torch.empty(self.m_pad, dtype=torch.int32, device=dev)

    def dst_rows(self):
        torch = self.torch
        ends = self.ends.long()
        counts = torch.diff(ends, prepend=self.zero)
        aligned = (counts + (self.al - 1)) // self.al * self.al
        pstarts = torch.cumsum(aligned, 0) - aligned
        g = torch.searchsorted(ends, self.ar, right=True)
        return self.ar - (ends - counts)[g] + pstarts[g], g

    def __call__(self, a_q, sfa):
        torch = self.torch
        dst, g = self.dst_rows()
        self.a_pad.index_copy_(0, dst, a_q.view(torch.uint8))
        self.sfa_pad.index_copy_(0, dst, sfa)
        self.m_idx.fill_(-1)
        self.m_idx.index_copy_(0, dst, g.to(torch.int32))
        return self.a_pad.view(torch.float8_e4m3fn), self.sfa_pad, self.m_idx

    def bytes_moved(self, case: Case, L: int) -> float:
        return 2.0 * case.total * (case.K + 4 * L) + 4.0 * self.m_pad + 16.0 * case.total


def mn_major_aligned(torch, sf):
    """DeepGEMM's get_mn_major_tma_aligned_tensor layout, made with torch: [.., MN, L] fp32 with MN contiguous,
    the MN stride rounded up to 4 floats (16 bytes); 3-D: batch stride align(MN, 4) x L."""
    if sf.dim() == 2:
        mn, L = sf.shape
        ma = (mn + 3) // 4 * 4
        out = torch.empty_strided((mn, L), (1, ma), dtype=torch.float32, device=sf.device)
    else:
        b, mn, L = sf.shape
        ma = (mn + 3) // 4 * 4
        out = torch.empty_strided((b, mn, L), (ma * L, 1, ma), dtype=torch.float32, device=sf.device)
    out.copy_(sf)
    return out


def quant_rowwise(torch, x):
    """One scale per row (amax / 448 over the last dimension), clamped before the cast (torch's cast does
    not saturate). x [..., K] -> (q e4m3, scale fp32 [...])."""
    xf = x.float()
    sf = xf.abs().amax(dim=-1).clamp(min=1e-4) / 448.0
    q = (xf / sf.unsqueeze(-1)).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    return q, sf.contiguous()


def quant_tokens_1x128(torch, xp):
    """1 x 128 scales along the tokens (dim 0) of a padded [Tpad, C] tensor whose 128-token blocks never
    span two experts: sf [Tpad/128, C]."""
    tp, c = xp.shape
    v = xp.float().view(tp // 128, 128, c)
    sf = v.abs().amax(dim=1).clamp(min=1e-4) / 448.0
    q = (v / sf.unsqueeze(1)).clamp(-448.0, 448.0).to(torch.float8_e4m3fn).view(tp, c)
    return q, sf.contiguous()


def moe_counters(case: Case, t: dict, bytes_: float, flops: bool = True) -> dict:
    # peers.counters with (M, N, K) = (rows, N, K): TFLOPS = 2 x rows x N x K / median; GB/s replaced.
    e = P.counters((max(case.total, 1), case.N, case.K), t, 0.0, 1)  # wgrad: 2 x N x K x tokens, the same
    e["GB/s"] = bytes_ / (t["median_ms"] * 1e-3) / 1e9
    if not flops:
        del e["TFLOPS"]
    e.update(case.shape_counters())
    return e


class Runner:
    def __init__(self, torch, dg, gpu, args, out, notes):
        self.torch, self.dg, self.gpu, self.args, self.out, self.notes = torch, dg, gpu, args, out, notes
        self.failures = 0
        self.align = ALIGN
        # fp8gemm.ops (load_fops) or None, and why not: run_gpu sets both when an fp8gemm_* is selected
        self.fops, self.fops_why = None, "fp8gemm.ops not loaded"

    # -- data ------------------------------------------------------------------------------------

    def gen(self, case: Case):
        torch = self.torch
        g = torch.Generator(device="cuda")
        g.manual_seed(self.args.seed * 1_000_003 + zlib.crc32(case.cid.encode()))
        return g

    def refs_block(self, case, a_q, sfa, b_q, sfb, row_of):
        """Per-expert float64 references of the block-scaled forward: list (None for empty experts)."""
        gpu = self.gpu
        refs = []
        for e in range(case.G):
            n = case.counts[e]
            if n == 0:
                refs.append(None)
                continue
            s = row_of(e)
            a = gpu.dequant_1x128(a_q[s:s + n], sfa[s:s + n])
            b = gpu.dequant_128x128(b_q[e], sfb[e])
            refs.append(a @ b.t())
            del a, b
        return refs

    def check_rows(self, case, d, refs, row_of) -> dict:
        parts = []
        for e in range(case.G):
            if refs[e] is None:
                continue
            s = row_of(e)
            parts.append(self.gpu.error_parts(d[s:s + case.counts[e]], refs[e]))
        return self.gpu.combine_errors(parts, case.red_len)

    # -- one (case, implementation) ----------------------------------------------------------------

    def record(self, impl, case, fn, chk, label, bytes_, flops=True, delay_us=None, fields=None):
        """A checked call: an error entry if the check failed (no time), else timed now (time_call) or,
        with --interleave, kept for the case's group (time_pending, at the end of run_case)."""
        if not chk["ok"]:
            f = {k: P.finite_or_none(chk[k]) for k in ("rel_error", "max_rel_error", "worst_tile_error")}
            f.update(fields or {})
            raise CheckError(f"WRONG result: rel_error {chk['rel_error']:.3g}, worst tile "
                             f"{chk['worst_tile_error']:.3g}, max_rel {chk['max_rel_error']:.3g} "
                             f"(tolerance {chk['tolerance']:.3g})", f, label)
        p = Pending(impl, fn, chk, label, bytes_, flops, delay_us, fields or {})
        if self.args.interleave:
            self.pending.append(p)
        else:
            self.finish(case, p, self.gpu.time_call(fn, delay_us=delay_us))

    def finish(self, case, p, t) -> None:
        """The entry of one timed call (t: one of Gpu.time_group's results), its CUPTI view and its line."""
        args, gpu = self.args, self.gpu
        entry = moe_counters(case, t, p.bytes_, p.flops)
        entry.update({"rel_error": p.chk["rel_error"], "max_rel_error": p.chk["max_rel_error"],
                      "worst_tile_error": p.chk["worst_tile_error"], "interleaved": t["interleaved"]})
        if p.delay_us is not None and not args.no_delay:
            entry["delay_us"] = float(p.delay_us)
        entry.update(p.fields)
        suffix, cupti_us = gpu.cupti_view(p.fn, args.cupti_launches, case.flops if p.flops else None, entry)
        entry["label"] = p.label + suffix
        self.out.add(p.impl, case.cid, entry)
        tf = entry.get("TFLOPS")
        print(f"{p.impl:34s} {case.cid:30s} {(f'{tf:8.1f}' if tf is not None else '       -')} "
              f"{entry['median_us']:10.2f} {(f'{cupti_us:9.2f}' if cupti_us else '        -')} "
              f"{t['host_call_us']:8.1f} {p.chk['rel_error']:9.2e}  "
              f"{'' if t['delay_covers_host'] or args.no_delay else 'host work NOT covered by the delay'}",
              flush=True)

    def time_pending(self, case) -> None:
        """--interleave: the case's checked calls timed together, one Gpu.time_group (each with its own
        delay: --long-delay-us for the many-launch ones, as alone), then written as record() writes one.
        Every member's state is safe to rotate: deepgemm_pad_step and deepgemm_contiguous_with_pad rewrite
        the padded buffers that deepgemm_contiguous(_psum) read, but with the same values every call;
        every other call writes only its own output (deepgemm_kgrouped_wgrad accumulates into its own d,
        which nothing else reads and which is not checked again, as when timed alone; fp8gemm_weight_grad
        overwrites its own d; the fp8gemm forward ops allocate theirs on every call)."""
        pending, self.pending = self.pending, []
        if not pending:
            return
        try:
            times = self.gpu.time_group([p.fn for p in pending], [p.delay_us for p in pending])
        except Exception as e:  # noqa: BLE001 - the group's error is every member's (as peers.py)
            msg = f"{type(e).__name__}: {str(e)[:2000]}"
            for p in pending:
                self.failures += 1
                self.out.add_error(p.impl, case.cid, msg, dict(p.fields, label=p.label))
            print(f"{'(interleaved group)':34s} {case.cid:30s} ERROR {msg[:400]}", flush=True)
            try:
                self.torch.cuda.synchronize()
            except Exception as e2:  # noqa: BLE001 - a sticky CUDA error: the rest cannot run
                raise ContextLost(str(e2)) from e2
            return
        for p, t in zip(pending, times):
            self.finish(case, p, t)

    def drop_pending(self, case, why: str) -> None:
        """Checked calls that will not be timed (the CUDA context is gone): error entries, not silence."""
        for p in self.pending:
            self.failures += 1
            self.out.add_error(p.impl, case.cid, f"checked, not timed: {why}", dict(p.fields, label=p.label))
        self.pending = []

    def run_case(self, case: Case, impls: list[str]) -> bool:
        """Returns False when the CUDA context is unusable."""
        torch = self.torch
        fn_map = {"balanced": self.case_contiguous, "skewed": self.case_contiguous,
                  "masked": self.case_masked, "wgrad": self.case_wgrad}
        self.done = set()
        self.pending = []  # --interleave: this case's checked calls (record), timed together below
        try:
            fn_map[case.kind](case, impls)
        except ContextLost as e:
            self.drop_pending(case, f"CUDA context unusable: {e}")
            self.notes.append(f"CUDA context unusable after {case.cid}: {e}")
            return False
        except Exception as e:  # noqa: BLE001 - data set-up failed: the implementations not yet recorded
            msg = f"case set-up failed: {type(e).__name__}: {str(e)[:2000]}"
            for impl in impls:
                if impl not in self.done:
                    self.out.add_error(impl, case.cid, msg)
                    self.failures += 1
            print(f"{'(rest)':34s} {case.cid:30s} ERROR {msg[:400]}", flush=True)
        try:
            # those checked before a set-up failure are still timed (their data lives in their calls)
            self.time_pending(case)
        except ContextLost as e:
            self.notes.append(f"CUDA context unusable after {case.cid}: {e}")
            return False
        try:
            torch.cuda.synchronize()
        except Exception as e2:  # noqa: BLE001
            self.notes.append(f"CUDA context unusable after {case.cid}: {e2}")
            return False
        gc.collect()
        torch.cuda.empty_cache()
        self.out.write()
        return True

    def guarded(self, impl, case, body) -> None:
        """Run body() for one implementation; its errors become error entries."""
        self.done.add(impl)
        try:
            body()
        except CheckError as e:
            self.failures += 1
            self.out.add_error(impl, case.cid, str(e), dict(e.fields, label=e.label) if e.label else e.fields)
            print(f"{impl:34s} {case.cid:30s} ERROR {str(e)[:400]}", flush=True)
        except Exception as e:  # noqa: BLE001 - one failure must not stop the others
            self.failures += 1
            msg = f"{type(e).__name__}: {str(e)[:2000]}"
            self.out.add_error(impl, case.cid, msg)
            print(f"{impl:34s} {case.cid:30s} ERROR {msg[:400]}", flush=True)
            try:
                self.torch.cuda.synchronize()
            except Exception as e2:  # noqa: BLE001 - a sticky CUDA error: the rest cannot run
                raise ContextLost(str(e2)) from e2
        self.out.write()

    # -- this repository's library (fp8gemm.ops) ---------------------------------------------------

    def fp8gemm(self, impl, case, call, check, label, bytes_, alloc_shape=None, alloc_dtype=None) -> None:
        """One fp8gemm_* implementation, in guarded(): call(fops) makes one call of our op and returns its
        output, check(output) compares it with the case's references; then record() (timed now, or with
        --interleave kept for the case's group), the timed call being the checked one. An error entry
        saying why when fp8gemm.ops is not loaded. The first call builds the op's plan (first_call_s).
        alloc_shape: the op allocates its bf16 output of this shape (the grouped forward has no out=):
        a NaN tensor of that shape is allocated and freed just before the checked call, which leaves the
        caching allocator as before, so the op's output gets that block and a row it fails to write
        stays NaN; output_poisoned = 1 where the output has that address (0: another block, the check
        cannot tell stale data). None: call writes into an output the caller filled with NaN. alloc_dtype:
        that output's dtype (default bf16)."""
        torch = self.torch

        def body():
            fops = self.fops
            if fops is None:
                raise RuntimeError(f"fp8gemm skipped: {self.fops_why}")

            def fn():
                return call(fops)
            nan_ptr = None
            if alloc_shape is not None:
                nan = torch.full(alloc_shape, float("nan"), dtype=alloc_dtype or torch.bfloat16, device="cuda")
                nan_ptr = nan.data_ptr()
                del nan
            t0 = time.time()
            d = fn()
            torch.cuda.synchronize()
            first_s = time.time() - t0
            poisoned = alloc_shape is None or d.data_ptr() == nan_ptr
            chk = check(d)
            del d
            note = ("output NaN-poisoned" if poisoned else
                    "output NOT poisoned (the op's D got another block than the freed NaN one)")
            self.record(impl, case, fn, chk, f"{label}; {note}; first call (plan) {first_s:.3f} s", bytes_,
                        fields={"first_call_s": first_s, "output_poisoned": 1.0 if poisoned else 0.0})
        self.guarded(impl, case, body)

    def fp8gemm_contiguous(self, case, a_q, sfa, b_q, sfb, refs, bytes_, kernel="") -> None:
        """fp8gemm_grouped_contiguous on the unpadded tokens: a_q [T, K] e4m3 row-major (the pad step's
        input), sfa [T, L] fp32 as quant_1x128 returns it (K-major, contiguous), b_q [G, N, K] e4m3 and
        sfb [G, N/128, L] contiguous (DeepGEMM's tensors); refs: per expert, rows case.starts[e] on."""
        torch = self.torch
        # The op reads scale_a in place only MN-major: strides (1, ld), ld >= T, ld % 4 == 0, 16-byte
        # aligned (csrc/ops.cpp group_scales); a K-major one it copies, inside every timed call.
        # DeepGEMM's sfa_pad covers the padded rows, so ours is its own: [T, L] strides (1, align(T, 4)).
        sfa_mn = mn_major_aligned(torch, sfa)
        offsets = torch.tensor([0] + case.ends, dtype=torch.int32, device="cuda")  # [G + 1] real rows

        def call(fops, a=a_q, sa=sfa_mn, b=b_q, sb=sfb, off=offsets):
            if kernel:  # --grouped-kernels: the package's benchmark op, the kernel by name
                return torch.ops.fp8gemm._gemm_grouped_kernel(a, sa, b, sb, off, False, kernel)
            return fops.gemm_grouped_contiguous(a, sa, b, sb, off)  # D [T, N] bf16, new each call
        label = (f"fp8gemm.ops.gemm_grouped_contiguous (the library; chapter 8's kernels) on the unpadded rows, "
                 + (f"kernel {kernel} by name (torch.ops.fp8gemm._gemm_grouped_kernel), " if kernel else "") +
                 f"no padding step: A {tuple(a_q.shape)} e4m3, sfa {tuple(sfa_mn.shape)} strides {sfa_mn.stride()} "
                 f"(MN-major, read in place; DeepGEMM's covers the padded rows), B {tuple(b_q.shape)} and sfb "
                 f"{tuple(sfb.shape)} strides {sfb.stride()} (DeepGEMM's), offsets int32 [{case.G + 1}] (real rows), "
                 f"D [{case.total}, {case.N}] bf16 allocated by the op")
        self.fp8gemm(f"{FP8_CONTIG}:{kernel}" if kernel else FP8_CONTIG, case, call,
                     lambda d: self.check_rows(case, d, refs, lambda e: case.starts[e]),
                     label, bytes_, alloc_shape=(case.total, case.N))

    def fp8gemm_masked(self, case, a_q, sfa2, b_q, sfb, masked_m, refs, bytes_, kernel="") -> None:
        """fp8gemm_grouped_masked: a_q [G, M, K] e4m3, sfa2 [G * M, L] fp32 K-major (quant_1x128 of
        A.view(G * M, K)), b_q, sfb, masked_m int32 [G] (DeepGEMM's); refs: expert e's rows e * M on."""
        G, M, N = case.G, case.rows_max, case.N
        # MN-major over all G * M rows, strides (1, align(G * M, 4)): the op's in-place layout
        # (group_scales). DeepGEMM's [G, M, L] is MN-major per group, not expressible as this 2-D tensor.
        sfa_mn = mn_major_aligned(self.torch, sfa2)

        def call(fops, a=a_q, sa=sfa_mn, b=b_q, sb=sfb, mm=masked_m):
            if kernel:  # --grouped-kernels: the package's benchmark op, the kernel by name
                return self.torch.ops.fp8gemm._gemm_grouped_kernel(a, sa, b, sb, mm, True, kernel)
            return fops.gemm_grouped_masked(a, sa, b, sb, mm)  # D [G, M, N] bf16, new each call
        label = (f"fp8gemm.ops.gemm_grouped_masked (the library; chapter 8's kernels), "
                 + (f"kernel {kernel} by name (torch.ops.fp8gemm._gemm_grouped_kernel), " if kernel else "") +
                 f"A {tuple(a_q.shape)} e4m3, "
                 f"sfa {tuple(sfa_mn.shape)} strides {sfa_mn.stride()} (MN-major over G x rows, read in place), "
                 f"B {tuple(b_q.shape)} and sfb {tuple(sfb.shape)} strides {sfb.stride()} (DeepGEMM's), masked_m "
                 f"{case.counts} (device int32), D [{G}, {M}, {N}] bf16 allocated by the op")
        self.fp8gemm(f"{FP8_MASKED}:{kernel}" if kernel else FP8_MASKED, case, call,
                     lambda d: self.check_rows(case, d.view(G * M, N), refs, lambda e: e * M),
                     label, bytes_, alloc_shape=(G, M, N))

    def fp8gemm_wgrad(self, case, dd_t, sfa_t, a_t, sfb_t, d, check, bytes_) -> None:
        """fp8gemm_weight_grad: dd_t [N, tpad] and a_t [K, tpad] e4m3 row-major, expert g's tokens from
        column sum over j < g of align(count_j, 128), zeros to the next expert's (quantize_tokens_
        transposed_1x128's layout, T_cap = tpad); sfa_t [N, tpad/128] strides (1, N) and sfb_t
        [K, tpad/128] strides (1, K): DeepGEMM's scale tensors, MN-major with ld = N, K (multiples of
        4), read in place; d [G, N, K] fp32, overwritten (check: the case's, empty experts zero)."""
        torch = self.torch
        # the REAL token offsets: the op derives each expert's padded first column from them
        offsets = torch.tensor([0] + case.ends, dtype=torch.int32, device="cuda")
        d.fill_(float("nan"))  # accumulate=False writes every expert (zeros for an empty one)

        def call(fops, dd=dd_t, sd=sfa_t, a=a_t, sa=sfb_t, off=offsets, out=d):
            return fops.gemm_weight_grad(dd, sd, a, sa, off, out=out, accumulate=False)
        label = (f"fp8gemm.ops.gemm_weight_grad (the library; chapter 8's kernels), dd_t {tuple(dd_t.shape)} and "
                 f"a_t {tuple(a_t.shape)} e4m3 row-major (DeepGEMM's codes, transposed as one matrix each, not "
                 f"timed), scale_dd_t {tuple(sfa_t.shape)} strides {sfa_t.stride()} and scale_a_t "
                 f"{tuple(sfb_t.shape)} strides {sfb_t.stride()} (DeepGEMM's), offsets int32 [{case.G + 1}] real "
                 f"tokens, out d {tuple(d.shape)} fp32, accumulate=False (overwritten)")
        self.fp8gemm(FP8_WGRAD, case, call, check, label, bytes_)

    # -- contiguous forward (balanced, skewed) -----------------------------------------------------

    def case_contiguous(self, case: Case, impls: list[str]):
        torch, gpu, dg, args = self.torch, self.gpu, self.dg, self.args
        G, N, K, T = case.G, case.N, case.K, case.total
        L = P.ceil_div(K, 128)
        gen = self.gen(case)
        a16 = torch.randn((T, K), generator=gen, device="cuda", dtype=torch.float32).to(torch.bfloat16)
        b16 = torch.randn((G * N, K), generator=gen, device="cuda", dtype=torch.float32).to(torch.bfloat16)
        nonempty = sum(1 for c in case.counts if c > 0)
        block_impls = [i for i in impls if i not in (TORCH_GMM, TORCH_GMM_FA)]
        if block_impls:
            a_q, sfa = gpu.quant_1x128(a16)
            b_q2, sfb2 = gpu.quant_128x128(b16)  # N % 128 == 0: blocks never span two experts
            b_q, sfb = b_q2.view(G, N, K), sfb2.view(G, N // 128, L)
            refs = self.refs_block(case, a_q, sfa, b_q, sfb, lambda e: case.starts[e])
            data_bytes = T * K + nonempty * N * K + 2.0 * T * N + 4.0 * (T * L + nonempty * (N // 128) * L)
            pad = PadStep(torch, case, L, self.align)
            a_pad, sfa_pad, m_idx = pad(a_q, sfa)  # the layout DeepGEMM needs (built once, outside timing)
            torch.cuda.synchronize()
            pad_starts = cumsum_excl([align(c, self.align) for c in case.counts])
            prow = lambda e: pad_starts[e]  # noqa: E731  (expert e's first row in the padded layout)
            psum = torch.tensor([pad_starts[e] + case.counts[e] for e in range(G)], dtype=torch.int32, device="cuda")
            layout = (f"A_pad [{pad.m_pad}, {K}] e4m3 ({pad.m_pad - T} padding rows), sfa {tuple(sfa_pad.shape)} "
                      f"strides {sfa_pad.stride()}, B {tuple(b_q.shape)}, sfb {tuple(sfb.shape)} strides {sfb.stride()}, "
                      f"alignment {self.align}")
            for impl in block_impls:
                if impl in (DG_CONTIG, DG_PSUM, DG_CONTIG_PAD):
                    d_pad = torch.full((pad.m_pad, N), float("nan"), dtype=torch.bfloat16, device="cuda")

                    def body(impl=impl, d_pad=d_pad):
                        if dg is None:
                            raise RuntimeError("deep_gemm not importable (see the context's notes)")
                        if impl == DG_PSUM:
                            def fn():
                                dg.m_grouped_fp8_gemm_nt_contiguous((a_pad, sfa_pad), (b_q, sfb), d_pad, psum,
                                                                    use_psum_layout=True)
                                return d_pad
                            label = (f"deep_gemm.m_grouped_fp8_gemm_nt_contiguous(use_psum_layout=True), grouped_layout "
                                     f"int32 [{G}] ends in the padded layout; {layout}")
                        elif impl == DG_CONTIG:
                            def fn():
                                dg.m_grouped_fp8_gemm_nt_contiguous((a_pad, sfa_pad), (b_q, sfb), d_pad, m_idx)
                                return d_pad
                            label = (f"deep_gemm.m_grouped_fp8_gemm_nt_contiguous, m_indices int32 [{pad.m_pad}] "
                                     f"(-1 on padding rows); GEMM alone; {layout}")
                        else:
                            def fn():
                                ap, sp, mi = pad(a_q, sfa)
                                dg.m_grouped_fp8_gemm_nt_contiguous((ap, sp), (b_q, sfb), d_pad, mi)
                                return d_pad
                            label = ("padding step (torch ops, see deepgemm_pad_step) + deep_gemm."
                                     f"m_grouped_fp8_gemm_nt_contiguous in one timed call; {layout}")
                        t0 = time.time()
                        fn()
                        torch.cuda.synchronize()
                        jit_s = time.time() - t0
                        chk = self.check_rows(case, d_pad, refs, prow)
                        self.record(impl, case, fn, chk, label + f"; first call {jit_s:.1f} s", data_bytes,
                                    delay_us=args.long_delay_us if impl in HOST_HEAVY else None,
                                    fields={"first_call_s": jit_s})
                    self.guarded(impl, case, body)
                    del d_pad
                elif impl == DG_PAD:
                    def body():
                        pad.a_pad.zero_()
                        pad.sfa_pad.fill_(1.0)
                        pad.m_idx.fill_(7)
                        ap, sp, mi = pad(a_q, sfa)
                        # exact check: every real row and scale in place, m_indices right, padding rows zero
                        ok = True
                        mi_ref = torch.full((pad.m_pad,), -1, dtype=torch.int32, device="cuda")
                        for e in range(G):
                            n, s, ps = case.counts[e], case.starts[e], pad_starts[e]
                            if n == 0:
                                continue
                            ok &= bool(torch.equal(ap[ps:ps + n].view(torch.uint8), a_q[s:s + n].view(torch.uint8)))
                            ok &= bool(torch.equal(sp[ps:ps + n], sfa[s:s + n]))
                            mi_ref[ps:ps + n] = e
                        ok &= bool(torch.equal(mi, mi_ref))
                        ok &= bool((ap.view(torch.uint8)[mi_ref < 0] == 0).all().item())
                        chk = {"ok": ok, "rel_error": 0.0 if ok else float("inf"), "max_rel_error": 0.0 if ok else
                               float("inf"), "worst_tile_error": 0.0 if ok else float("inf"), "tolerance": 0.0}
                        label = ("padding step, torch ops on the GPU from the unpadded tokens and the device ends: "
                                 "searchsorted + cumsum -> destination rows, index_copy_ of A rows (as uint8) and of "
                                 "the scales into MN-major sfa_pad, m_indices fill(-1) + index_copy_; persistent "
                                 f"buffers, no host read of the offsets; checked exactly; {layout}")
                        self.record(impl, case, lambda: pad(a_q, sfa), chk, label, pad.bytes_moved(case, L),
                                    flops=False, delay_us=args.long_delay_us)
                    self.guarded(impl, case, body)
                    pad(a_q, sfa)  # restore (DG_CONTIG_PAD may follow)
                elif impl == FP8_CONTIG:
                    self.fp8gemm_contiguous(case, a_q, sfa, b_q, sfb, refs, data_bytes)
                    # --grouped-kernels: more of the library's compiled grouped kernels, by name, in
                    # the same group (the default's choice made from the same comparison).
                    for name in args.grouped_kernels:
                        self.fp8gemm_contiguous(case, a_q, sfa, b_q, sfb, refs, data_bytes, kernel=name)
            del refs
            if not args.interleave:  # with it the calls kept for the case's group still read these
                # (closures see these names, not copies), so they live until run_case has timed them
                a_q = sfa = b_q = sfb = b_q2 = sfb2 = pad = a_pad = sfa_pad = m_idx = None  # noqa: F841
                gc.collect()
        torch_impls = [i for i in impls if i in (TORCH_GMM, TORCH_GMM_FA)]
        if torch_impls:
            ar_q, sar = quant_rowwise(torch, a16)
            br_q, sbr = quant_rowwise(torch, b16.view(G, N, K))  # [G, N, K], scales [G, N]
            refs = []
            for e in range(G):
                n, s = case.counts[e], case.starts[e]
                if n == 0:
                    refs.append(None)
                    continue
                a = ar_q[s:s + n].double() * sar[s:s + n].double().unsqueeze(1)
                b = br_q[e].double() * sbr[e].double().unsqueeze(1)
                refs.append(a @ b.t())
            offs = torch.tensor(case.ends, dtype=torch.int32, device="cuda")
            data_bytes = T * K + nonempty * N * K + 2.0 * T * N + 4.0 * (T + nonempty * N)
            f = getattr(torch, "_scaled_grouped_mm", None)
            for impl in torch_impls:
                def body(impl=impl):
                    if f is None:
                        raise RuntimeError("torch._scaled_grouped_mm not in this torch ("
                                           f"{torch.__version__}); grouped names: "
                                           f"{[n for n in dir(torch) if 'grouped' in n]}")
                    fa = impl == TORCH_GMM_FA

                    def fn():
                        return f(ar_q, br_q.transpose(-2, -1), sar, sbr, offs=offs, out_dtype=torch.bfloat16,
                                 use_fast_accum=fa)
                    d = fn()
                    torch.cuda.synchronize()
                    chk = self.check_rows(case, d, refs, lambda e: case.starts[e])
                    del d
                    label = (f"torch._scaled_grouped_mm(A [{T}, {K}] e4m3, B.transpose(-2, -1) [{G}, {K}, {N}] "
                             f"(column-major), scale_a [{T}] rowwise, scale_b [{G}, {N}] rowwise, offs int32 [{G}] "
                             f"cumulative ends, out_dtype=bf16, use_fast_accum={fa}); rowwise-quantised operands")
                    self.record(impl, case, fn, chk, label, data_bytes)
                self.guarded(impl, case, body)
            del refs

    # -- masked ------------------------------------------------------------------------------------

    def case_masked(self, case: Case, impls: list[str]):
        torch, gpu, dg, args = self.torch, self.gpu, self.dg, self.args
        G, N, K, M = case.G, case.N, case.K, case.rows_max
        L = P.ceil_div(K, 128)
        gen = self.gen(case)
        a16 = torch.randn((G * M, K), generator=gen, device="cuda", dtype=torch.float32).to(torch.bfloat16)
        b16 = torch.randn((G * N, K), generator=gen, device="cuda", dtype=torch.float32).to(torch.bfloat16)
        a_q2, sfa2 = gpu.quant_1x128(a16)
        b_q2, sfb2 = gpu.quant_128x128(b16)
        a_q, b_q, sfb = a_q2.view(G, M, K), b_q2.view(G, N, K), sfb2.view(G, N // 128, L)
        sfa_dg = mn_major_aligned(torch, sfa2.view(G, M, L))
        row_of = lambda e: e * M  # noqa: E731  (rows of the flattened [G*M, ...] views)
        refs = self.refs_block(case, a_q2, sfa2, b_q, sfb, row_of)
        masked_m = torch.tensor(case.counts, dtype=torch.int32, device="cuda")
        data_bytes = case.total * K + G * N * K + 2.0 * case.total * N + 4.0 * (case.total * L + G * (N // 128) * L)
        for impl in impls:
            if impl == FP8_MASKED:
                self.fp8gemm_masked(case, a_q, sfa2, b_q, sfb, masked_m, refs, data_bytes)
                for name in args.grouped_kernels:
                    self.fp8gemm_masked(case, a_q, sfa2, b_q, sfb, masked_m, refs, data_bytes, kernel=name)
                continue
            d = torch.full((G, M, N), float("nan"), dtype=torch.bfloat16, device="cuda")
            em = masked_expected_m(case, impl, args.masked_expected_factor)
            em_rule = (f"int({args.masked_expected_factor:g} x mean masked_m), as tests/test_fp8_fp4.py"
                       if impl == DG_MASKED else "mean masked_m")

            def body(d=d, em=em, em_rule=em_rule):
                if dg is None:
                    raise RuntimeError("deep_gemm not importable (see the context's notes)")

                def fn():
                    dg.m_grouped_fp8_gemm_nt_masked((a_q, sfa_dg), (b_q, sfb), d, masked_m, em)
                    return d
                t0 = time.time()
                fn()
                torch.cuda.synchronize()
                jit_s = time.time() - t0
                chk = self.check_rows(case, d.view(G * M, N), refs, row_of)
                label = (f"deep_gemm.m_grouped_fp8_gemm_nt_masked, A {tuple(a_q.shape)} e4m3, sfa {tuple(sfa_dg.shape)} "
                         f"strides {sfa_dg.stride()}, B {tuple(b_q.shape)}, sfb {tuple(sfb.shape)}, D {tuple(d.shape)} "
                         f"bf16, masked_m {case.counts} (device int32), expected_m {em} "
                         f"({em_rule}); "
                         f"first call {jit_s:.1f} s")
                self.record(impl, case, fn, chk, label, data_bytes,
                            fields={"first_call_s": jit_s, "expected_m": float(em)})
            self.guarded(impl, case, body)
            del d

    # -- k-grouped weight gradient -------------------------------------------------------------------

    def case_wgrad(self, case: Case, impls: list[str]):
        torch, gpu, dg, args = self.torch, self.gpu, self.dg, self.args
        G, N, K, T = case.G, case.N, case.K, case.total
        gen = self.gen(case)
        x16 = torch.randn((T, K), generator=gen, device="cuda", dtype=torch.float32).to(torch.bfloat16)   # A
        dy16 = torch.randn((T, N), generator=gen, device="cuda", dtype=torch.float32).to(torch.bfloat16)  # dD
        padded = [align(c, 128) for c in case.counts]  # DeepGEMM SM90 k-grouped: every ks[i] % 128 == 0
        pstarts = cumsum_excl(padded)
        tpad = sum(padded)
        dst = torch.cat([torch.arange(pstarts[e], pstarts[e] + case.counts[e], device="cuda")
                         for e in range(G)]).long()
        xp = torch.zeros((tpad, K), dtype=torch.bfloat16, device="cuda")
        dyp = torch.zeros((tpad, N), dtype=torch.bfloat16, device="cuda")
        xp.index_copy_(0, dst, x16)
        dyp.index_copy_(0, dst, dy16)
        del x16, dy16
        xq, sfx = quant_tokens_1x128(torch, xp)    # [tpad, K], [tpad/128, K]
        dyq, sfdy = quant_tokens_1x128(torch, dyp)  # [tpad, N], [tpad/128, N]
        del xp, dyp
        # DeepGEMM's K-major layout: per expert dD_g^T [N, Tpad_g] then A_g^T [K, Tpad_g], concatenated.
        a_flat = torch.cat([dyq[pstarts[e]:pstarts[e] + padded[e]].t().contiguous().flatten()
                            for e in range(G)]) if tpad else torch.empty(0, dtype=torch.float8_e4m3fn, device="cuda")
        b_flat = torch.cat([xq[pstarts[e]:pstarts[e] + padded[e]].t().contiguous().flatten()
                            for e in range(G)]) if tpad else torch.empty(0, dtype=torch.float8_e4m3fn, device="cuda")
        sfa_t, sfb_t = sfdy.t(), sfx.t()  # [N, tpad/128] strides (1, N); [K, tpad/128] strides (1, K)
        refs = []
        for e in range(G):
            s, n = pstarts[e], padded[e]
            if case.counts[e] == 0:
                refs.append(None)
                continue
            sb = slice(s // 128, (s + n) // 128)
            dyd = dyq[s:s + n].double() * sfdy[sb].double().repeat_interleave(128, dim=0)
            xd = xq[s:s + n].double() * sfx[sb].double().repeat_interleave(128, dim=0)
            refs.append(dyd.t() @ xd)
            del dyd, xd
        # fp8gemm_weight_grad's operands: the same codes as one row-major matrix each, dD^T [N, tpad] and
        # A^T [K, tpad] (DeepGEMM's a/b are per-expert blocks [N, Tpad_g] one after the other: the same only
        # for G = 1); expert g's tokens at columns pstarts[g] on, its padding zero, as our op expects
        ours_t = (dyq.t().contiguous(), xq.t().contiguous()) if FP8_WGRAD in impls else None
        del dyq, xq
        nonempty = sum(1 for c in case.counts if c > 0)
        data_bytes = T * (N + K) + 4.0 * (tpad // 128) * (N + K) + 4.0 * nonempty * N * K

        def check(d):
            parts = []
            for e in range(G):
                if refs[e] is None:  # an empty expert: dB_g must stay 0 (d was zeroed)
                    parts.append(gpu.error_parts(d[e], torch.zeros((N, K), dtype=torch.float64, device="cuda")))
                else:
                    parts.append(gpu.error_parts(d[e], refs[e]))
            return gpu.combine_errors(parts, case.red_len)

        layout = (f"tokens of each expert padded with zero tokens to a multiple of 128 (sum {tpad} for {T} real); "
                  f"a = concat dD_g^T [{N}, Tpad_g] e4m3, b = concat A_g^T [{K}, Tpad_g] e4m3, scales 1 x 128 along "
                  f"the tokens: sfa {tuple(sfa_t.shape)} strides {sfa_t.stride()}, sfb {tuple(sfb_t.shape)} strides "
                  f"{sfb_t.stride()}; padding/transposition not timed")
        for impl in impls:
            d = torch.zeros((G, N, K), dtype=torch.float32, device="cuda")
            if impl == DG_WGRAD:
                def body(d=d):
                    if dg is None:
                        raise RuntimeError("deep_gemm not importable (see the context's notes)")
                    fname = "k_grouped_fp8_gemm_nt_contiguous"
                    kf = getattr(dg, fname, None)
                    if kf is None:
                        raise RuntimeError(f"deep_gemm has no {fname} (k-grouped names: "
                                           f"{[n for n in dir(dg) if 'k_grouped' in n]})")
                    ks_t = torch.tensor(padded, dtype=torch.int32, device="cuda")

                    def fn():
                        kf((a_flat, sfa_t), (b_flat, sfb_t), d, padded, ks_t, c=d, recipe=(1, 1, 128))
                        return d
                    t0 = time.time()
                    fn()
                    torch.cuda.synchronize()
                    jit_s = time.time() - t0
                    chk = check(d)
                    label = (f"deep_gemm.{fname}((a, sfa), (b, sfb), d [{G}, {N}, {K}] fp32, ks_cpu = padded counts, "
                             f"grouped_layout = int32 ks, c=d (accumulates: d zeroed before the checked call, "
                             f"accumulating while timed; empty experts untouched), recipe (1, 1, 128)); {layout}; "
                             f"first call {jit_s:.1f} s")
                    self.record(DG_WGRAD, case, fn, chk, label, data_bytes, fields={"first_call_s": jit_s})
                self.guarded(impl, case, body)
            elif impl == FP8_WGRAD:
                self.fp8gemm_wgrad(case, ours_t[0], sfa_t, ours_t[1], sfb_t, d, check, data_bytes)
            else:
                def body(d=d):
                    sm = getattr(torch, "_scaled_mm", None)
                    if sm is None:
                        raise RuntimeError("torch._scaled_mm not in this torch")
                    groups = []
                    for e in range(G):
                        if case.counts[e] == 0:
                            continue
                        n, off = padded[e], pstarts[e]
                        a_g = a_flat[off * N:(off + n) * N].view(N, n)           # dD_g^T, row-major
                        b_g = b_flat[off * K:(off + n) * K].view(K, n).t()       # A_g [n, K], column-major
                        sa = sfdy[off // 128:(off + n) // 128].t()                # [N, n/128] strides (1, N)
                        sb = sfx[off // 128:(off + n) // 128]                     # [n/128, K] contiguous
                        groups.append((e, a_g, b_g, sa, sb))
                    cands = [("fp32 out= in place", torch.float32, True), ("fp32, copied into d", torch.float32, False),
                             ("bf16, copied into d (fp32 out not accepted)", torch.bfloat16, False)]
                    errs, chosen = [], None
                    for name, odt, inplace in cands:
                        def fn(odt=odt, inplace=inplace):
                            if inplace:
                                for e, a_g, b_g, sa, sb in groups:
                                    sm(a_g, b_g, scale_a=sa, scale_b=sb, out_dtype=odt, out=d[e])
                            else:
                                for e, a_g, b_g, sa, sb in groups:
                                    d[e].copy_(sm(a_g, b_g, scale_a=sa, scale_b=sb, out_dtype=odt))
                            return d
                        try:
                            d.zero_()
                            fn()
                            torch.cuda.synchronize()
                        except Exception as ex:  # noqa: BLE001 - try the next way
                            errs.append(f"{name}: {type(ex).__name__}: {str(ex).splitlines()[0][:300]}")
                            continue
                        c = check(d)
                        if c["ok"]:
                            chosen = (name, fn, c)
                            break
                        errs.append(f"{name}: WRONG result, rel_error {c['rel_error']:.3g}, worst tile "
                                    f"{c['worst_tile_error']:.3g}")
                    if chosen is None:
                        raise RuntimeError("no torch._scaled_mm loop gave a correct result: " + " | ".join(errs))
                    name, fn, chk = chosen
                    label = (f"loop of {len(groups)} torch._scaled_mm calls (cuBLASLt; BlockWise1x128 x BlockWise1x128 "
                             f"inferred from the scale shapes/strides), {name}; {layout}"
                             + (f" [other ways: {' | '.join(errs)}]" if errs else ""))
                    self.record(TORCH_LOOP_WGRAD, case, fn, chk, label, data_bytes, delay_us=args.long_delay_us,
                                fields={"launches_per_call": float(len(groups))})
                self.guarded(impl, case, body)
            del d
        # --wgrad-kernels: more of the library's compiled weight-gradient kernels, by name, in the
        # same group (the default's choice made from the same comparison).
        if FP8_WGRAD in impls:
            for name in args.wgrad_kernels:
                self.fp8gemm_wgrad_named(case, name, ours_t[0], sfa_t, ours_t[1], sfb_t, check, data_bytes)

    def fp8gemm_wgrad_named(self, case, name, dd_t, sfa_t, a_t, sfb_t, check, bytes_) -> None:
        """fp8gemm_weight_grad:<name>: as fp8gemm_wgrad, with the compiled kernel `name` (the PyTorch
        package's benchmark op _gemm_weight_grad_kernel, which allocates dB [G, N, K] fp32 itself: poisoned
        through the caching allocator as the forward ops' D)."""
        torch = self.torch
        offsets = torch.tensor([0] + case.ends, dtype=torch.int32, device="cuda")

        def call(fops, dd=dd_t, sd=sfa_t, a=a_t, sa=sfb_t, off=offsets):
            return torch.ops.fp8gemm._gemm_weight_grad_kernel(dd, sd, a, sa, off, name)
        label = (f"fp8gemm weight-gradient kernel {name} (torch.ops.fp8gemm._gemm_weight_grad_kernel; chapter 8's "
                 f"kernel by name, otherwise as {FP8_WGRAD}), dB [{case.G}, {case.N}, {case.K}] fp32 allocated by "
                 f"the op")
        self.fp8gemm(f"{FP8_WGRAD}:{name}", case, call, check, label, bytes_,
                     alloc_shape=(case.G, case.N, case.K), alloc_dtype=torch.float32)


class Pending(NamedTuple):
    """One checked call and what its entry needs (Runner.record's arguments)."""
    impl: str
    fn: Callable
    chk: dict
    label: str
    bytes_: float
    flops: bool
    delay_us: float | None
    fields: dict


class ContextLost(Exception):
    pass


class CheckError(Exception):
    def __init__(self, msg, fields, label):
        super().__init__(msg)
        self.fields, self.label = fields, label


def cumsum_excl(xs: list[int]) -> list[int]:
    out, s = [], 0
    for x in xs:
        out.append(s)
        s += x
    return out


# ------------------------------------------------------------------------------------------------
# DeepGEMM JIT pre-warm (bench/peers.py run_warm_processes): identical shapes and arguments, zero data


def warm_key(case: Case, impl: str):
    fam = {DG_CONTIG: "contig", DG_CONTIG_PAD: "contig", DG_PAD: None, DG_PSUM: "psum", DG_MASKED: "masked",
           DG_MASKED_EXACT: "masked", DG_WGRAD: "wgrad"}.get(impl)
    return None if fam is None else (fam, case.N, case.K)


def plan_args(args) -> list[str]:
    return ["--seed", str(args.seed), "--groups-seed", str(args.groups_seed), "--experts", str(args.experts),
            "--totals", ",".join(str(t) for t in args.totals), "--skew-sigma", repr(args.skew_sigma),
            "--empty-experts", str(args.empty_experts), "--masked-expected-factor", repr(args.masked_expected_factor)]


def dg_warm_parallel_moe(selected, args) -> str:
    items: dict[tuple, list[str]] = {}
    for case, impls in selected:
        for impl in impls:
            k = warm_key(case, impl)
            item = f"{case.cid}:{DG_CONTIG if impl == DG_CONTIG_PAD else impl}"
            if k is not None and item not in items.get(k, []):
                items.setdefault(k, []).append(item)
    if not items:
        return "nothing to compile"
    buckets: list[list[str]] = [[] for _ in range(max(1, min(args.dg_jobs, len(items))))]
    for its in sorted(items.values(), key=len, reverse=True):
        min(buckets, key=len).extend(its)
    cmds = [[sys.executable, os.path.abspath(__file__), "--dg-warm-only", "--warm-items", ",".join(b)] + plan_args(args)
            for b in buckets if b]
    return P.run_warm_processes(cmds, args.dg_warm_timeout)


def dg_warm_worker(args) -> int:
    import torch
    import deep_gemm as dg
    cases = {c.cid: c for c in build_plan(args)[0]}
    al = int(dg.get_mk_alignment_for_contiguous_layout())
    for item in args.warm_items.split(","):
        cid, impl = item.split(":")
        c = cases[cid]
        t0 = time.time()
        G, N, K = c.G, c.N, c.K
        L = P.ceil_div(K, 128)
        z8 = lambda *s: torch.zeros(s, dtype=torch.uint8, device="cuda").view(torch.float8_e4m3fn)  # noqa: E731
        if impl in (DG_CONTIG, DG_CONTIG_PAD, DG_PSUM):
            padded = [(x + al - 1) // al * al for x in c.counts]
            m = sum(padded)
            sfa = mn_major_aligned(torch, torch.ones((m, L), dtype=torch.float32, device="cuda"))
            b, sfb = z8(G, N, K), torch.ones((G, N // 128, L), dtype=torch.float32, device="cuda")
            d = torch.empty((m, N), dtype=torch.bfloat16, device="cuda")
            if impl == DG_PSUM:
                ps = cumsum_excl(padded)
                lay = torch.tensor([ps[e] + c.counts[e] for e in range(G)], dtype=torch.int32, device="cuda")
                dg.m_grouped_fp8_gemm_nt_contiguous((z8(m, K), sfa), (b, sfb), d, lay, use_psum_layout=True)
            else:
                dg.m_grouped_fp8_gemm_nt_contiguous((z8(m, K), sfa), (b, sfb), d,
                                                    torch.zeros(m, dtype=torch.int32, device="cuda"))
        elif impl in (DG_MASKED, DG_MASKED_EXACT):
            M = c.rows_max
            sfa = mn_major_aligned(torch, torch.ones((G, M, L), dtype=torch.float32, device="cuda"))
            d = torch.empty((G, M, N), dtype=torch.bfloat16, device="cuda")
            dg.m_grouped_fp8_gemm_nt_masked((z8(G, M, K), sfa), (z8(G, N, K), torch.ones((G, N // 128, L),
                                            dtype=torch.float32, device="cuda")), d,
                                            torch.tensor(c.counts, dtype=torch.int32, device="cuda"),
                                            masked_expected_m(c, impl, args.masked_expected_factor))
        elif impl == DG_WGRAD:
            padded = [align(x, 128) for x in c.counts]
            tp = sum(padded)
            d = torch.zeros((G, N, K), dtype=torch.float32, device="cuda")
            dg.k_grouped_fp8_gemm_nt_contiguous(
                (z8(tp * N), torch.ones((tp // 128, N), dtype=torch.float32, device="cuda").t()),
                (z8(tp * K), torch.ones((tp // 128, K), dtype=torch.float32, device="cuda").t()),
                d, padded, torch.tensor(padded, dtype=torch.int32, device="cuda"), c=d, recipe=(1, 1, 128))
        torch.cuda.synchronize()
        print(f"dg-warm {cid} {impl} {time.time() - t0:.1f} s", flush=True)
    return 0


# ------------------------------------------------------------------------------------------------


def run_gpu(args, cases, groups, selected) -> int:
    ctx = P.base_context(args)
    ctx["executable"] = "bench/peers_moe.py"
    ctx["error_metrics"] = ("per expert, then combined: rel_error = sqrt(sum ||D_g - ref_g||_F^2 / sum ||ref_g||_F^2); "
                            "max_rel_error = max|D - ref| / max|ref|; worst_tile_error = max over experts' 128 x 128 "
                            "tiles of the tile's relative Frobenius error; ref_g = float64 GEMM of the dequantised "
                            "operands of expert g (GPU; real rows only); tolerance from K (forward) or the longest "
                            "expert's tokens (wgrad)")
    ctx["reference_precision"] = "float64 for every case (GPU)"
    ctx["moe_groups"] = groups
    out = P.Output(args.out, ctx)
    notes: list[str] = []
    ctx["notes"] = notes
    try:
        import torch
    except ImportError as e:
        torch = None
        terr = f"torch not importable: {e}"
    if torch is None or not torch.cuda.is_available():
        msg = terr if torch is None else "no CUDA device visible to torch"
        ctx["gpu"] = "none"
        notes.append(msg)
        for c, impls in selected:
            for i in impls:
                out.add_error(i, c.cid, msg)
        out.write()
        print(f"peers_moe.py: {msg}", file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False
    ctx.update(P.gpu_context(torch, args))
    try:
        ctx["torch_scaled_grouped_mm_schema"] = " | ".join(
            str(s) for s in torch._C._jit_get_schemas_for_operator("aten::_scaled_grouped_mm"))
    except Exception as e:  # noqa: BLE001 - informational
        ctx["torch_scaled_grouped_mm_schema"] = f"unknown ({type(e).__name__}: {e})"

    dg = None
    need_dg = any(i in DG_IMPLS for _, impls in selected for i in impls)
    align_rows = ALIGN
    if need_dg:
        try:
            import deep_gemm as dg  # noqa: F401
            ctx["deep_gemm_version"] = str(getattr(dg, "__version__", "?"))
            ctx["deep_gemm_path"] = os.path.dirname(getattr(dg, "__file__", "") or "")
            align_rows = int(dg.get_mk_alignment_for_contiguous_layout())
            ctx["deep_gemm_mk_alignment"] = str(align_rows)
            ctx["deep_gemm_functions"] = ", ".join(n for n in ("m_grouped_fp8_gemm_nt_contiguous", "m_grouped_fp8_gemm_nt_masked",
                                                                "k_grouped_fp8_gemm_nt_contiguous", "k_grouped_fp8_gemm_tn_contiguous")
                                                   if hasattr(dg, n))
            if align_rows != ALIGN:
                notes.append(f"DeepGEMM's contiguous alignment is {align_rows}, not {ALIGN}: padded sizes differ from "
                             "the groups file's padded_counts")
        except Exception as e:  # noqa: BLE001
            dg = None
            msg = (f"deepgemm skipped: deep_gemm not importable ({type(e).__name__}: {e}); build it with bash "
                   ".peer/build_deepgemm.sh and export the PYTHONPATH it prints")
            ctx["deep_gemm_version"] = "not importable"
            notes.append(msg)
            print(f"peers_moe.py: {msg}", file=sys.stderr)
    if dg is not None and args.dg_jobs > 1:
        print(f"peers_moe.py: compiling DeepGEMM's kernels in parallel (--dg-jobs {args.dg_jobs}) ...", flush=True)
        try:
            ctx["deep_gemm_jit_prewarm"] = dg_warm_parallel_moe(selected, args)
        except Exception as e:  # noqa: BLE001 - only a speed-up
            ctx["deep_gemm_jit_prewarm"] = f"failed: {type(e).__name__}: {e}"
        print(f"peers_moe.py: DeepGEMM JIT pre-warm: {ctx['deep_gemm_jit_prewarm']}", flush=True)

    fops, fops_why = None, "not selected"
    if any(i in FP8_IMPLS for _, impls in selected for i in impls):
        fops, fops_why = load_fops()
        ctx["fp8gemm"] = fops_why if fops is not None else "fp8gemm not loaded (see the notes)"
        if fops is None:  # as DeepGEMM when missing: its entries are errors that say why
            notes.append(f"fp8gemm skipped: {fops_why}")
            print(f"peers_moe.py: fp8gemm skipped: {fops_why}", file=sys.stderr)

    gpu = P.Gpu(torch, args)
    ctx["flush_bytes"] = str(gpu.flush_bytes)
    ctx["flush_us"] = f"{gpu.flush_us:.1f}"
    ctx["sleep_cycles_per_us"] = f"{gpu.cycles_per_us:.1f}"
    ctx["delay_cycles"] = str(gpu.delay_cycles)
    flush_desc = (f"torch.Tensor.zero_ on a {gpu.flush_bytes}-byte uint8 buffer = 2 x L2 "
                  "(the harness: cudaMemsetAsync on 2 x L2)") if not args.flush_bytes else \
        f"torch.Tensor.zero_ on a {gpu.flush_bytes}-byte uint8 buffer"
    ctx["method"] = P.method_text(args, flush_desc) + moe_method(args)
    if args.interleave:  # the C++ harness's context key for the same way of timing
        ctx["timing"] = "interleaved"
    ctx["implementations"] = ", ".join(sorted({i for _, impls in selected for i in impls}))
    out.write()
    print(f"peers_moe.py: {ctx.get('gpu')} | torch {torch.__version__} | deep_gemm {ctx.get('deep_gemm_version', '-')} "
          f"| {ctx.get('fp8gemm', 'fp8gemm -')} | flush {gpu.flush_bytes >> 20} MiB ({gpu.flush_us:.0f} us) | delay "
          f"{'none' if args.no_delay else f'{args.delay_us:g} us ({args.long_delay_us:g} us for many-launch calls)'}",
          flush=True)
    print(f"{'implementation':34s} {'case':30s} {'TFLOPS':>8s} {'median_us':>10s} {'cupti_us':>9s} "
          f"{'host_us':>8s} {'rel_err':>9s}", flush=True)
    runner = Runner(torch, dg, gpu, args, out, notes)
    runner.align = align_rows
    runner.fops, runner.fops_why = fops, fops_why
    t_start = time.time()
    for ci, (case, impls) in enumerate(selected):
        if args.time_limit and time.time() - t_start > args.time_limit:
            msg = f"not run: --time-limit {args.time_limit:g} s reached"
            notes.append(f"{case.cid} and later cases {msg}")
            for c, ims in selected[ci:]:
                for i in ims:
                    out.add_error(i, c.cid, msg)
            break
        if not runner.run_case(case, impls):
            out.write()
            print("peers_moe.py: CUDA context unusable; stopping", file=sys.stderr)
            return 3
        cl = P.cublaslt_version_loaded()
        if cl:
            ctx["cublaslt_version"] = cl
    out.write()
    if args.out:
        print(f"peers_moe.py: wrote {args.out} ({len(out.doc['benchmarks'])} benchmarks, {runner.failures} errors)")
    return 1 if runner.failures else 0


def write_groups(path: str, groups: dict) -> None:
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    text = json.dumps(groups, indent=1)
    # lists of numbers on one line each (counts, offsets)
    text = re.sub(r"\[\s*(-?\d+(?:,\s*-?\d+)*)\s*\]", lambda m: "[" + re.sub(r"\s+", " ", m.group(1)) + "]", text)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(text + "\n")
    os.replace(path + ".tmp", path)


def parse_totals(text: str) -> list[int]:
    try:
        v = [int(x) for x in text.replace(";", ",").split(",") if x.strip()]
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"bad --totals {text!r}: {e}") from e
    if not v or any(x <= 0 for x in v):
        raise argparse.ArgumentTypeError("--totals: positive integers")
    return v


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=None, help="JSON file to write (Google Benchmark format)")
    ap.add_argument("--groups-out", default=None,
                    help="also write the group sizes (seed, counts, offsets) to this small JSON file (also with --dry-run)")
    ap.add_argument("--only", default=None,
                    help="comma-separated implementations, kinds (balanced, skewed, masked, wgrad) or case names; globs")
    ap.add_argument("--experts", type=int, default=32, help="experts of the skewed workload (default 32)")
    ap.add_argument("--totals", type=parse_totals, default=[8192, 65536], help="total rows (default 8192,65536)")
    ap.add_argument("--skew-sigma", type=float, default=1.0, help="lognormal sigma of the expert weights (default 1)")
    ap.add_argument("--empty-experts", type=int, default=2, help="experts with no rows (default 2)")
    ap.add_argument("--groups-seed", type=int, default=0, help="seed of the group sizes (default 0)")
    ap.add_argument("--masked-expected-factor", type=float, default=1.2,
                    help="deepgemm_masked: expected_m = int(factor x mean masked_m) (default 1.2, as DeepGEMM's tests)")
    ap.add_argument("--delay-us", type=float, default=50.0,
                    help="GPU-side delay before the start event, microseconds (default %(default)s)")
    ap.add_argument("--long-delay-us", type=float, default=1000.0,
                    help=f"the delay for calls of many launches ({', '.join(sorted(HOST_HEAVY))}) (default %(default)s)")
    ap.add_argument("--no-delay", action="store_true", help="no GPU-side delay (to show its effect)")
    ap.add_argument("--interleave", action="store_true",
                    help="time a case's implementations together, one call each per round, the order rotating "
                         "(bench/peers.py --interleave, the C++ harness's interleaved timing); without it one "
                         "after the other")
    ap.add_argument("--warmup", type=int, default=3, help="warm-up calls after the checked call (default 3)")
    ap.add_argument("--budget-ms", type=float, default=250.0,
                    help="GPU time to fill per entry (with --interleave: per member of a case's group; default 250)")
    ap.add_argument("--min-reps", type=int, default=10, help="(default 10, as the harness)")
    ap.add_argument("--max-reps", type=int, default=300, help="(default 300, as the harness)")
    ap.add_argument("--flush-bytes", type=int, default=0, help="L2 flush buffer (default 2 x L2, as the harness)")
    ap.add_argument("--cupti-launches", type=int, default=20,
                    help="launches for the CUPTI kernel-time view (0: skip it; default 20)")
    ap.add_argument("--seed", type=int, default=0, help="data seed (default 0)")
    ap.add_argument("--wgrad-kernels", type=lambda v: [k for k in v.split(",") if k], default=[],
                    help="comma-separated names of the library's compiled weight-gradient kernels to time "
                         "beside fp8gemm_weight_grad (its default), as fp8gemm_weight_grad:<name>")
    ap.add_argument("--grouped-kernels", type=lambda v: [k for k in v.split(",") if k], default=[],
                    help="comma-separated names of the library's compiled grouped forward kernels to time beside "
                         "fp8gemm_grouped_contiguous and fp8gemm_grouped_masked (their defaults), as "
                         "<implementation>:<name>")
    ap.add_argument("--commit", default=None, help="git commit to record (default: build/bin/commit.txt)")
    ap.add_argument("--time-limit", type=float, default=0.0,
                    help="seconds after which no new case is started (0: none); the JSON keeps what ran")
    ap.add_argument("--dg-jobs", type=int, default=min(8, os.cpu_count() or 1),
                    help="processes that compile DeepGEMM's kernels before timing (0 or 1: at first use; "
                         "default %(default)s)")
    ap.add_argument("--dg-warm-timeout", type=float, default=420.0, help="seconds for that (default 420)")
    ap.add_argument("--dg-warm-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--warm-items", default="", help=argparse.SUPPRESS)
    ap.add_argument("--dry-run", action="store_true", help="print the plan and method; no torch, no GPU")
    ap.add_argument("--ch08-case-args", action="store_true",
                    help="print the skewed cases as chapter 8's executable takes them, one "
                         "--case=NAME:COUNTS:N:K per line, and exit (no torch, no GPU)")
    args = ap.parse_args(argv)
    if args.delay_us < 0 or args.long_delay_us < 0 or args.min_reps < 1 or args.max_reps < args.min_reps \
            or args.warmup < 0:
        ap.error("need --delay-us, --long-delay-us >= 0, 1 <= --min-reps <= --max-reps, --warmup >= 0")
    if args.experts < 1 or not 0 <= args.empty_experts < args.experts:
        ap.error("need --experts >= 1 and 0 <= --empty-experts < --experts")
    if args.dg_warm_only:
        return dg_warm_worker(args)
    cases, groups = build_plan(args)
    try:
        selected = select(cases, args.only)
    except ValueError as e:
        ap.error(str(e))
    if args.groups_out:
        write_groups(args.groups_out, groups)
    if args.ch08_case_args:
        for line in ch08_case_args(groups):
            print(line)
        return 0

    if args.dry_run:
        n = sum(len(i) for _, i in selected)
        print(f"cases ({len(selected)} of {len(cases)}), {n} timed entries"
              f"{', interleaved (one group per case)' if args.interleave else ', one after the other'}:")
        for c, impls in selected:
            L = P.ceil_div(c.K, 128)
            extra = ""
            if c.kind == "masked":
                extra = (f" masked_m {c.counts}, expected_m {masked_expected_m(c, DG_MASKED, args.masked_expected_factor)}"
                         f" / {masked_expected_m(c, DG_MASKED_EXACT, args.masked_expected_factor)}")
            print(f"  {c.cid:30s} {c.kind:8s} G {c.G:3d} N {c.N:5d} K {c.K:5d} L {L:3d} "
                  f"{c.flops / 1e12:7.3f} TFLOP, tolerance {P.tolerance(c.red_len):.2e}{extra}")
            if c.kind in ("skewed", "wgrad"):
                print(f"      {describe_counts(c)}")
            print(f"      {', '.join(impls)}")
        for w in groups["skewed"]:
            print(f"groups {w['name']} (seed {w['seed']}): {w['counts']}")
        print(f"groups generator: {groups['generator']}")
        print("method: " + P.method_text(args) + moe_method(args))
        print(f"output: {args.out or '(none)'}; groups: {args.groups_out or '(none)'}; commit: {P.git_commit(args.commit)}")
        return 0
    return run_gpu(args, cases, groups, selected)


if __name__ == "__main__":
    sys.exit(main())
