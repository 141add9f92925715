#!/usr/bin/env python3
"""Benchmarks of fp8gemm's PyTorch ops (issue 12's targets), one process, one GPU, one run:

  overhead  the host cost of an op call over the same plan run from C++: a tiny block-scaled GEMM
            (128 x 128 x 128) launched back to back n times (a) through torch.ops
            (gemm_block_scaled_out into a given D; and the allocating gemm_block_scaled; and the
            Python wrapper fp8gemm.ops.gemm_block_scaled), (b) by the C++ loop in _C.so
            (_gemm_block_scaled_loop: one op call, then plan.run() n times). Host time per call
            while the GPU is held busy by a sleep kernel (so every launch only enqueues), the
            median of repeats; and the GPU-bound time per call back to back without the sleep.
            Target: op - C++ <= 10 us.
  linear    Fp8Linear forward + backward (dgrad and wgrad, no bias) against bf16 torch.nn.Linear at
            the DeepSeek-V3 shapes with M = 4096 tokens; the FP8 layer quantises its weight on
            every step (cache_weight=False: a training step, the weight changed by the optimizer)
            and, as a second row, with the weight's quantisation cached (gradient accumulation).
            Forward alone too, and the FP8 step's parts timed one by one (with the ceiling
            the three GEMMs alone allow: bf16's step over their sum), and every compiled
            weight-gradient kernel on the step's dW (the layer uses the default); and both steps
            captured by torch.cuda.make_graphed_callables (on copies of the layers; the FP8
            step's graphed output checked bit for bit against the eager one; --no-graphs skips
            them), with each step's host time. Target: >= 1.4x (eager).
  gemm      gemm_block_scaled (one op call, bf16 D) against torch's block-scaled scaled_mm
            (cuBLASLt; the v2 API torch.nn.functional.scaled_mm with BlockWise1x128 /
            BlockWise128x128) and bf16 torch.matmul, M in {64, 128, 4096} x the six (N, K).
  per_tensor gemm_per_tensor with bf16 and float32 D against torch._scaled_mm (per-tensor scales,
            the same out_dtype, promoted accumulation), the same shapes (not in the default
            --only: --only per_tensor); per_tensor_f32_kernels: each FP32 kernel whose tile suits
            M = --tokens by name (for M = 4096 tiles of 128 rows and 128 columns or more, for
            M <= 128 the decode tiles from registers), both modes, against
            the default and torch's float32 D, at the six (N, K) and --f32-shapes.
Method (linear, gemm): per timed call an L2 flush (zero_ of a 2 x L2 buffer) outside the timed
region, then a GPU-side sleep (torch.cuda._sleep, --delay-us; --step-delay-us, 1500 us, for the
forward+backward steps, whose host work takes up to ~0.9 ms) so that the Python host work of the
call is enqueued before the GPU reaches the start event, CUDA events around the call, the median
over the calls (warm-up first). Every implementation is checked before it is timed (relative
Frobenius error against a reference). Both sides of a ratio are timed alike in the same process.

    PYTHONPATH=<staged dir> python3 bench_torch.py --out bench_torch.json [--quick]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import warnings

import torch

import fp8gemm
from fp8gemm import nn as fnn
from fp8gemm import ops

DEEPSEEK_NK = [(2112, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048)]


# ============================================ context =============================================

def _nvidia_smi() -> dict:
    q = "name,clocks.max.sm,clocks.max.mem,clocks.sm,driver_version,power.limit"
    try:
        r = subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader,nounits"],
                           capture_output=True, text=True, timeout=20)
        vals = [v.strip() for v in r.stdout.strip().splitlines()[0].split(",")]
        return {"gpu_max_sm_clock_mhz": vals[1], "gpu_memory_clock_mhz": vals[2],
                "gpu_sm_clock_mhz_at_start": vals[3], "nvidia_driver": vals[4],
                "gpu_power_limit_w": vals[5]}
    except Exception as e:  # noqa: BLE001 - the context says what is missing
        return {"nvidia_smi": f"unavailable: {e}"}


def _commit(arg: str | None) -> str:
    if arg:
        return arg
    staged = os.path.join(os.path.dirname(fp8gemm.__file__), "commit.txt")
    if os.path.exists(staged):
        return open(staged).read().strip()
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        return subprocess.run(["git", "-C", here, "rev-parse", "HEAD"], capture_output=True,
                              text=True).stdout.strip() or "unknown"
    except Exception:  # noqa: BLE001
        return "unknown"


def context(args) -> dict:
    p = torch.cuda.get_device_properties(0)
    c = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "executable": "chapters/10_production/python/bench_torch.py",
        "command_line": " ".join(sys.argv[1:]),
        "host_name": platform.node(),
        "python_version": platform.python_version(),
        "torch_version": torch.__version__,
        "torch_cuda_version": torch.version.cuda,
        "cuda_runtime_version": str(torch.cuda.runtime_version()) if hasattr(
            torch.cuda, "runtime_version") else "",
        "fp8gemm_version": fp8gemm.__version__,
        "fp8gemm_library_version": ops.library_version(),
        "git_commit": _commit(args.commit),
        "gpu": p.name,
        "gpu_sm_count": p.multi_processor_count,
        "gpu_compute_capability": f"{p.major}.{p.minor}",
        "gpu_l2_bytes": getattr(p, "L2_cache_size", 0),
        "gpu_total_memory_bytes": p.total_memory,
        "delay_us": args.delay_us,
        "step_delay_us": args.step_delay_us,
        "method": __doc__.split("Method (linear, gemm):")[1].split("\n\n")[0].strip(),
    }
    c.update(_nvidia_smi())
    return c


# ============================================ timing ==============================================

class Timer:
    """L2 flush, GPU-side delay, CUDA events around one call; the median of many."""

    def __init__(self, delay_us: float, time_limit_s: float):
        l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 50 << 20) or (50 << 20)
        self.flush_buf = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
        self.time_limit_s = time_limit_s
        # cycles per microsecond of torch.cuda._sleep, measured
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(1000)
        s.record()
        torch.cuda._sleep(2_000_000)
        e.record()
        torch.cuda.synchronize()
        self.cycles_per_us = 2_000_000 / (s.elapsed_time(e) * 1e3)
        self.delay_us = delay_us
        self.delay_cycles = int(delay_us * self.cycles_per_us)

    def time(self, fn, min_reps=10, max_reps=200, warmup=3, before=None, delay_us=None):
        """Median, min and max milliseconds of fn() (before(): untimed setup per call; delay_us:
        this call's GPU-side delay instead of the timer's)."""
        delay_cycles = (self.delay_cycles if delay_us is None
                        else int(delay_us * self.cycles_per_us))
        for _ in range(warmup):
            if before:
                before()
            fn()
        torch.cuda.synchronize()
        times, host = [], []
        t_end = time.time() + self.time_limit_s
        while len(times) < max_reps and (len(times) < min_reps or time.time() < t_end):
            if before:
                before()
            self.flush_buf.zero_()
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            if delay_cycles:
                torch.cuda._sleep(delay_cycles)
            s.record()
            h0 = time.perf_counter()
            fn()
            host.append((time.perf_counter() - h0) * 1e3)
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e))
        # host_ms: the wall time of the call on the host (its enqueue; for a backward pass, until
        # the autograd engine returns). Above delay_us, the GPU may have waited for the host.
        return {"median_ms": statistics.median(times), "min_ms": min(times), "max_ms": max(times),
                "reps": len(times), "host_ms": statistics.median(host),
                "delay_us": self.delay_us if delay_us is None else delay_us}


def rel_error(a, b) -> float:
    a, b = a.detach().double(), b.detach().double()
    return float((a - b).norm() / b.norm())


# =========================================== overhead =============================================

GROUPED_STATIC = "128x256_s4_c1x1_promoted_tma_b1"
GROUPED_COUNTER_PATH = "torch.ops.fp8gemm.gemm_grouped_contiguous (counter schedule, 4 x 32 rows)"
GROUPED_STATIC_PATH = (f"torch.ops.fp8gemm._gemm_grouped_kernel ({GROUPED_STATIC} by name, "
                       "no counter)")


def bench_overhead(args, timer) -> dict:
    M = N = K = 128
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(M, K, generator=g, device="cuda").to(torch.bfloat16)
    w = torch.randn(N, K, generator=g, device="cuda").to(torch.bfloat16)
    qa, sa = ops.quantize_1x128(x)
    qb, sb = ops.quantize_128x128(w)
    out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    f = torch.ops.fp8gemm
    n = args.overhead_calls
    small = torch.zeros(16, device="cuda")

    # Loops, not comprehensions: each result is dropped at once, so the caching allocator hands
    # the same D back and the plan cache hits, as in a steady-state program.
    def op_out():
        for _ in range(n):
            f.gemm_block_scaled_out(qa, sa, qb, sb, out)

    def op_alloc():
        for _ in range(n):
            f.gemm_block_scaled(qa, sa, qb, sb)

    # Every call another D (outputs that stay alive, as a model's saved activations do): the
    # cache hits (keys hold no pointers) and re-points the cached plan at the new D (rebind: D's
    # pointer checked, the D tensor map's address rewritten) before the launch.
    outs = [torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for _ in range(n)]

    def op_out_new_d():
        for o in outs:
            f.gemm_block_scaled_out(qa, sa, qb, sb, o)

    def op_alloc_kept():
        kept = [f.gemm_block_scaled(qa, sa, qb, sb) for _ in range(n)]
        del kept

    def wrapper():
        for _ in range(n):
            ops.gemm_block_scaled(qa, sa, qb, sb)

    def cpp_loop():
        f._gemm_block_scaled_loop(qa, sa, qb, sb, out, n)

    def aten_add():
        for _ in range(n):
            small.add_(1.0)

    # The grouped contiguous op, which takes the counter schedule (session 33: per call a
    # stream-capture query and a locked lookup of the stream's tile counter), against the same
    # tile's static kernel by name (no counter): 4 groups of 32 rows (A above), B the same
    # 128 x 128 weight for each. The by-name op also takes and keys a kernel name, so the
    # difference bounds the counter path's host work rather than isolating it (session 35: -0.5 us;
    # fp8gemm_library_bench's grouped_counter pair times run(stream, tile_counter) in C++).
    groups = 4
    qb_g, sb_g = torch.stack([qb] * groups), torch.stack([sb] * groups)
    offsets = torch.arange(0, M + 1, M // groups, dtype=torch.int32, device="cuda")

    def grouped_counter():
        for _ in range(n):
            f.gemm_grouped_contiguous(qa, sa, qb_g, sb_g, offsets)

    def grouped_static():
        for _ in range(n):
            f._gemm_grouped_kernel(qa, sa, qb_g, sb_g, offsets, False, GROUPED_STATIC)

    paths = {
        "torch.ops.fp8gemm.gemm_block_scaled_out (given D)": op_out,
        "torch.ops.fp8gemm.gemm_block_scaled (allocates D)": op_alloc,
        "torch.ops.fp8gemm.gemm_block_scaled_out, a new D every call (plan re-pointed)": op_out_new_d,
        "torch.ops.fp8gemm.gemm_block_scaled (allocates D, all kept: a new D every call)":
            op_alloc_kept,
        "fp8gemm.ops.gemm_block_scaled (Python wrapper)": wrapper,
        "C++ loop: plan.run() (_gemm_block_scaled_loop)": cpp_loop,
        "reference: torch add_ on 16 floats (an ATen op)": aten_add,
        GROUPED_COUNTER_PATH: grouped_counter,
        GROUPED_STATIC_PATH: grouped_static,
    }
    for fn in paths.values():  # plans built, kernels loaded
        fn()
    torch.cuda.synchronize()
    sleep_cycles = int(args.overhead_sleep_ms * 1e3 * timer.cycles_per_us)
    res = {}
    for name, fn in paths.items():
        host, gpu = [], []
        for _ in range(args.overhead_repeats):
            torch.cuda._sleep(sleep_cycles)  # the GPU is busy: the calls below only enqueue
            t0 = time.perf_counter()
            fn()
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            host.append((t1 - t0) / n * 1e6)
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            e.synchronize()
            gpu.append(s.elapsed_time(e) * 1e3 / n)
        res[name] = {"host_us_per_call": statistics.median(host),
                     "host_us_per_call_min": min(host),
                     "back_to_back_us_per_call": statistics.median(gpu)}
    stats0 = ops.plan_cache_stats()
    # What the plan cache saves: the same calls with a plan built on every call.
    ops.set_plan_cache_capacity(0)
    try:
        host = []
        for _ in range(args.overhead_repeats):
            torch.cuda._sleep(sleep_cycles)
            t0 = time.perf_counter()
            op_out()
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            host.append((t1 - t0) / n * 1e6)
        res["torch.ops.fp8gemm.gemm_block_scaled_out, plan cache off (a plan per call)"] = {
            "host_us_per_call": statistics.median(host), "host_us_per_call_min": min(host)}
    finally:
        ops.set_plan_cache_capacity(1024)
    op = res["torch.ops.fp8gemm.gemm_block_scaled_out (given D)"]["host_us_per_call"]
    cpp = res["C++ loop: plan.run() (_gemm_block_scaled_loop)"]["host_us_per_call"]
    grouped_extra = (res[GROUPED_COUNTER_PATH]["host_us_per_call"] -
                     res[GROUPED_STATIC_PATH]["host_us_per_call"])
    return {"shape": [M, N, K], "calls": n, "repeats": args.overhead_repeats,
            "grouped_counter_extra_us": grouped_extra,
            "plan_cache_stats": stats0,
            "sleep_ms": args.overhead_sleep_ms, "paths": res,
            "op_overhead_us": op - cpp, "target_us": 10.0, "met": op - cpp <= 10.0,
            "method": "host time per call: time.perf_counter around n back-to-back calls issued "
                      "while a torch.cuda._sleep kernel keeps the GPU busy (launches only "
                      "enqueue), median over repeats; back_to_back: CUDA events around the same "
                      "n calls without the sleep (GPU time per call when launches keep up). "
                      "op_overhead_us = host(gemm_block_scaled_out via torch.ops) - host(C++ "
                      "plan.run loop), the same cached plan"}


# ============================================= linear =============================================

def ops_wgrad_kernel_names() -> list:
    """The compiled weight-gradient kernels (the first is the plan's default)."""
    return [n for n in torch.ops.fp8gemm._wgrad_kernel_names().split(",") if n]



def bench_graphed_steps(lin, x, dy, timer: Timer, delay_us: float) -> dict:
    """The bf16 and FP8 forward + backward steps captured by torch.cuda.make_graphed_callables
    (on copies of the layer: it replaces a module's forward), timed like the eager steps: what a
    training loop that captures its layers pays on the host and the GPU. The FP8 copy runs
    without the weight cache (the weight is quantised inside the graph, as after every optimizer
    step); its output and gradients must equal the eager layer's bit for bit."""
    N, K = lin.weight.shape
    try:
        lin_g = torch.nn.Linear(K, N, bias=False, device="cuda", dtype=torch.bfloat16)
        f8_src = torch.nn.Linear(K, N, bias=False, device="cuda", dtype=torch.bfloat16)
        with torch.no_grad():
            lin_g.weight.copy_(lin.weight)
            f8_src.weight.copy_(lin.weight)
        f8_g = fnn.Fp8Linear.from_linear(f8_src, cache_weight=False)
        f8_e = fnn.Fp8Linear.from_linear(f8_src, cache_weight=False)
        xs = x.detach().clone().requires_grad_()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # AccumulateGrad's stream notice while capturing
            lin_g = torch.cuda.make_graphed_callables(lin_g, (xs,))
            f8_g = torch.cuda.make_graphed_callables(f8_g, (xs,))

        def zero():
            xs.grad = None
            lin_g.weight.grad = None
            f8_src.weight.grad = None

        # the graphed FP8 step against the eager one on the same data
        zero()
        y = f8_g(xs)
        y.backward(dy)
        got = (y.detach().clone(), xs.grad.clone(), f8_src.weight.grad.clone())
        zero()
        y = f8_e(xs)
        y.backward(dy)
        want = (y.detach(), xs.grad, f8_src.weight.grad)
        identical = all(torch.equal(a, b) for a, b in zip(got, want))
        times = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            times["bf16_graphed_fwd_bwd"] = timer.time(lambda: lin_g(xs).backward(dy), before=zero,
                                                       delay_us=delay_us)
            times["fp8_graphed_fwd_bwd"] = timer.time(lambda: f8_g(xs).backward(dy), before=zero,
                                                      delay_us=delay_us)
        return {"times": times, "identical": identical}
    except Exception as e:  # report, do not lose the eager rows
        return {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}


def bench_linear(args, timer: Timer) -> list:
    rows = []
    M = args.tokens
    for (N, K) in args.linear_shapes:
        torch.manual_seed(N + K)
        lin = torch.nn.Linear(K, N, bias=False, device="cuda", dtype=torch.bfloat16)
        f8 = fnn.Fp8Linear.from_linear(lin, cache_weight=False)
        f8c = fnn.Fp8Linear.from_linear(lin, cache_weight=True)
        g = torch.Generator(device="cuda").manual_seed(K)
        x = torch.randn(M, K, generator=g, device="cuda").to(torch.bfloat16).requires_grad_()
        dy = torch.randn(M, N, generator=g, device="cuda").to(torch.bfloat16)

        def zero():
            x.grad = None
            lin.weight.grad = None

        def step(m):
            return lambda: m(x).backward(dy)

        # correctness before timing. The process's first backward passes are recorded for
        # warnings, so that a log line says which side raised it (torch's "no current CUDA
        # context" warning comes from the autograd thread's first cuBLAS call: bf16's).
        zero()
        with warnings.catch_warnings(record=True) as w_bf16:
            warnings.simplefilter("always")
            lin(x).backward(dy)
        ref = (x.grad.clone(), lin.weight.grad.clone())
        zero()
        with warnings.catch_warnings(record=True) as w_fp8:
            warnings.simplefilter("always")
            yf = f8(x)
            yf.backward(dy)
        for side, ws in (("bf16 nn.Linear", w_bf16), ("fp8 Fp8Linear", w_fp8)):
            for w_ in ws:
                print(f"warning during the {side} forward+backward ({M}x{N}x{K}): "
                      f"{w_.category.__name__}: {str(w_.message).splitlines()[0]}", flush=True)
        with torch.no_grad():
            yl = lin(x)
        errs = {"y": rel_error(yf, yl), "dx": rel_error(x.grad, ref[0]),
                "dw": rel_error(lin.weight.grad, ref[1])}
        ok = all(v <= 0.06 for v in errs.values())
        row = {"M": M, "N": N, "K": K, "errors_vs_bf16": errs, "ok": ok}
        t = {}
        # A training step's host work (autograd, ~10 op calls for FP8) takes 0.2-0.9 ms on the
        # H200 machine: the steps get their own, longer delay (--step-delay-us) so that it is
        # enqueued before the GPU starts on either side.
        sd = args.step_delay_us
        t["bf16_fwd_bwd"] = timer.time(step(lin), before=zero, delay_us=sd)
        t["fp8_fwd_bwd"] = timer.time(step(f8), before=zero, delay_us=sd)
        t["fp8_cached_weight_fwd_bwd"] = timer.time(step(f8c), before=zero, delay_us=sd)
        graphed = bench_graphed_steps(lin, x, dy, timer, sd) if args.graphs else {}
        t.update(graphed.pop("times", {}))
        with torch.no_grad():
            t["bf16_fwd"] = timer.time(lambda: lin(x))
            t["fp8_fwd"] = timer.time(lambda: f8(x))
            # the FP8 training step's parts, one by one
            xb = x.detach()
            w = lin.weight.detach()
            qw, sw = ops.quantize_128x128(w)
            qx, sx, qxt, sxt = ops.quantize_1x128_dual(xb)
            qdy, sdy, qdyt, sdyt = ops.quantize_1x128_dual(dy)
            qwt, swt = ops.transpose_block_scaled(qw, sw)
            off = ops.dense_offsets(M, "cuda")
            dw32 = ops.gemm_weight_grad(qdyt, sdyt, qxt, sxt, off)
            bf16 = torch.bfloat16
            parts = {
                # The layer's since session 26: W and W^T's operand from one launch; the two
                # calls it replaced (quantize_128x128(W), transpose W blocks) kept as references.
                "quantize_128x128_dual(W)": lambda: ops.quantize_128x128_dual(w),
                "quantize_128x128(W)": lambda: ops.quantize_128x128(w),
                "quantize_1x128_dual(x)": lambda: ops.quantize_1x128_dual(xb),
                "gemm fwd": lambda: ops.gemm_block_scaled(qx, sx, qw, sw),
                "quantize_1x128_dual(dY)": lambda: ops.quantize_1x128_dual(dy),
                "transpose W blocks": lambda: ops.transpose_block_scaled(qw, sw),
                "transpose W codes, torch copy (reference)": lambda: qw.t().contiguous(),
                "gemm dgrad": lambda: ops.gemm_block_scaled(qdy, sdy, qwt, swt),
                # The layer's: bf16 dW from the kernel. Until session 9: float32 dW, then a cast
                # (both kept as references).
                "gemm wgrad (bf16 dW)": lambda: ops.gemm_weight_grad(qdyt, sdyt, qxt, sxt, off,
                                                                     out_dtype=bf16),
                "gemm wgrad (float32 dW, reference)":
                    lambda: ops.gemm_weight_grad(qdyt, sdyt, qxt, sxt, off),
                "dW float32 -> bf16 (reference)": lambda: dw32.to(bf16),
                "bf16 matmul fwd (reference)": lambda: xb @ w.t(),
            }
            row["fp8_parts_ms"] = {k: timer.time(fn, max_reps=50)["median_ms"]
                                   for k, fn in parts.items()}
            # Every compiled weight-gradient kernel on this dense wgrad (the layer uses the
            # plan's bf16 default): data for a per-shape choice. A kernel writes the dW type it
            # was compiled for (bf16 unless _f32 is in its name).
            sweep = {}
            for name in ops_wgrad_kernel_names():
                fn = (lambda n=name: torch.ops.fp8gemm._gemm_weight_grad_kernel(
                    qdyt, sdyt, qxt, sxt, off, n))
                got = fn()
                # the same sums; tile order may differ in rounding
                err = rel_error(got, dw32 if got.dtype == torch.float32 else dw32.to(got.dtype))
                if not err <= 1e-5:
                    sweep[name] = {"error": f"dW off the default kernel's by {err:.2e}: not timed"}
                    continue
                ms = timer.time(fn, max_reps=50)["median_ms"]
                sweep[name] = {"median_ms": ms, "TFLOPS": 2 * M * N * K / (ms * 1e-3) / 1e12}
            row["wgrad_kernel_sweep"] = sweep
        for k, v in t.items():
            v["TFLOPS"] = (6 if "bwd" in k else 2) * M * N * K / (v["median_ms"] * 1e-3) / 1e12
        row["times"] = t
        row["speedup_fwd_bwd"] = t["bf16_fwd_bwd"]["median_ms"] / t["fp8_fwd_bwd"]["median_ms"]
        row["speedup_fwd_bwd_cached_weight"] = (t["bf16_fwd_bwd"]["median_ms"] /
                                                t["fp8_cached_weight_fwd_bwd"]["median_ms"])
        row["speedup_fwd"] = t["bf16_fwd"]["median_ms"] / t["fp8_fwd"]["median_ms"]
        # What the three GEMMs alone allow: bf16's step over the FP8 GEMMs' sum (no quantiser,
        # transpose or cast): no change outside the GEMM kernels can pass this.
        p = row["fp8_parts_ms"]
        gemms = p["gemm fwd"] + p["gemm dgrad"] + p["gemm wgrad (bf16 dW)"]
        row["fp8_gemms_ms"] = gemms
        row["speedup_ceiling_gemms_only"] = t["bf16_fwd_bwd"]["median_ms"] / gemms
        row["fp8_non_gemm_ms"] = t["fp8_fwd_bwd"]["median_ms"] - gemms
        if "fp8_graphed_fwd_bwd" in t:
            row["speedup_fwd_bwd_graphed"] = (t["bf16_graphed_fwd_bwd"]["median_ms"] /
                                              t["fp8_graphed_fwd_bwd"]["median_ms"])
        row["graphed"] = graphed
        row["target"] = 1.4
        row["met"] = ok and row["speedup_fwd_bwd"] >= 1.4
        print(f"linear {M}x{N}x{K}: bf16 {t['bf16_fwd_bwd']['median_ms']:.3f} ms, fp8 "
              f"{t['fp8_fwd_bwd']['median_ms']:.3f} ms ({row['speedup_fwd_bwd']:.2f}x; cached W "
              f"{row['speedup_fwd_bwd_cached_weight']:.2f}x; fwd {row['speedup_fwd']:.2f}x; "
              f"GEMMs alone {gemms:.3f} ms = ceiling {row['speedup_ceiling_gemms_only']:.2f}x), "
              f"errors {', '.join(f'{k} {v:.3f}' for k, v in errs.items())}", flush=True)
        print(f"  parts: {', '.join(f'{k} {v:.3f}' for k, v in p.items())}", flush=True)
        print("  wgrad kernels: " + ", ".join(
            f"{k} {v['TFLOPS']:.0f} TFLOPS" if "TFLOPS" in v else f"{k} {v['error']}"
            for k, v in row["wgrad_kernel_sweep"].items()), flush=True)
        print(f"  host per call (median; GPU-side delay {sd:.0f} us): bf16 step "
              f"{t['bf16_fwd_bwd']['host_ms'] * 1e3:.0f} us, fp8 step "
              f"{t['fp8_fwd_bwd']['host_ms'] * 1e3:.0f} us, fp8 cached W "
              f"{t['fp8_cached_weight_fwd_bwd']['host_ms'] * 1e3:.0f} us" +
              ("" if max(v["host_ms"] * 1e3 - v["delay_us"] for v in t.values()) < 0 else
               " (host work above the delay: the GPU may have waited; raise --step-delay-us or --delay-us)"),
              flush=True)
        if "fp8_graphed_fwd_bwd" in t:
            gb, gf = t["bf16_graphed_fwd_bwd"], t["fp8_graphed_fwd_bwd"]
            print(f"  CUDA graphs (make_graphed_callables, the same steps): bf16 {gb['median_ms']:.3f}"
                  f" ms, fp8 {gf['median_ms']:.3f} ms ({row['speedup_fwd_bwd_graphed']:.2f}x); "
                  f"host per call bf16 {gb['host_ms'] * 1e3:.0f} us, fp8 {gf['host_ms'] * 1e3:.0f} us;"
                  f" fp8 graphed output {'bit-identical to' if graphed['identical'] else 'DIFFERENT from'}"
                  " eager", flush=True)
        elif graphed.get("error"):
            print(f"  CUDA graphs: not timed: {graphed['error']}", flush=True)
        rows.append(row)
    return rows


# ============================================== gemm ==============================================

def _torch_blockwise(qa, sa, qb, sb):
    """torch's block-scaled GEMM as a callable (bench/peers.py's v2 call), or (None, reason)."""
    F = torch.nn.functional
    ST, SW, fn = getattr(F, "ScalingType", None), getattr(F, "SwizzleType", None), getattr(
        F, "scaled_mm", None)
    M, K = qa.shape
    L = (K + 127) // 128
    L4 = (L + 3) // 4 * 4
    scale_a = sa.t().contiguous().t()
    if fn is not None and ST is not None and hasattr(ST, "BlockWise1x128"):
        sbp = torch.zeros(sb.shape[0], L4, dtype=torch.float32, device=sb.device)
        sbp[:, :L] = sb
        sbt, bt = sbp.t(), qb.t()
        kw = {"swizzle_a": SW.NO_SWIZZLE, "swizzle_b": SW.NO_SWIZZLE} if SW is not None else {}
        return (lambda: fn(qa, bt, scale_a, ST.BlockWise1x128, sbt, ST.BlockWise128x128,
                           output_dtype=torch.bfloat16, **kw)), "torch.nn.functional.scaled_mm v2"
    if L % 4:
        return None, "torch._scaled_mm cannot express ceil(K/128) % 4 != 0"
    sbt, bt = sb.contiguous().t(), qb.t()
    return (lambda: torch._scaled_mm(qa, bt, scale_a=scale_a, scale_b=sbt,
                                     out_dtype=torch.bfloat16)), "torch._scaled_mm v1"


def _check_and_time(row: dict, impls: dict, timer: Timer, ref_of, tol_of) -> None:
    """Each of `impls` (name -> callable returning D for row's M x N x K) is run once and checked
    (relative Frobenius error against ref_of(name); tol_of(name) None: reported, not enforced),
    then timed if within tolerance; into row["impls"][name]. A peer that raises gets a note in
    row["notes"] and no time."""
    M, N, K = row["M"], row["N"], row["K"]
    for name, fn in impls.items():
        try:
            d = fn()
        except Exception as e:  # noqa: BLE001 - a peer that refuses gets a note, no time
            row["notes"].append(f"{name}: {type(e).__name__}: {e}")
            continue
        err = rel_error(d, ref_of(name))
        tol = tol_of(name)
        entry = {"rel_error": err}
        if tol is not None and err > tol:
            entry["error"] = f"rel_error {err:.3e} > tolerance {tol:.3e}: not timed"
        else:
            t = timer.time(fn)
            entry.update(t)
            entry["TFLOPS"] = 2 * M * N * K / (t["median_ms"] * 1e-3) / 1e12
        row["impls"][name] = entry


def bench_gemm(args, timer: Timer) -> list:
    rows = []
    for M in args.gemm_m:
        for (N, K) in DEEPSEEK_NK:
            g = torch.Generator(device="cuda").manual_seed(M + N + K)
            x = torch.randn(M, K, generator=g, device="cuda").to(torch.bfloat16)
            w = torch.randn(N, K, generator=g, device="cuda").to(torch.bfloat16)
            qa, sa = ops.quantize_1x128(x)
            qb, sb = ops.quantize_128x128(w)
            ref = ops.dequantize_1x128(qa, sa).double() @ ops.dequantize_128x128(qb, sb).double().t()
            tol = 2 ** -8 + 2.5e-7 * K
            impls = {"fp8gemm.ops.gemm_block_scaled": lambda: ops.gemm_block_scaled(qa, sa, qb, sb)}
            call, api = _torch_blockwise(qa, sa, qb, sb)
            notes = []
            if call is not None:
                impls["torch block-scaled scaled_mm"] = call
            else:
                notes.append(api)
            impls["torch.matmul bf16"] = lambda: x @ w.t()
            row = {"M": M, "N": N, "K": K, "torch_api": api, "notes": notes, "impls": {}}
            bf16_ref = lambda: x.double() @ w.double().t()  # noqa: E731
            _check_and_time(row, impls, timer, lambda name: bf16_ref() if "bf16" in name else ref,
                            lambda name: None if "bf16" in name else tol)
            ours = row["impls"].get("fp8gemm.ops.gemm_block_scaled", {}).get("median_ms")
            th = row["impls"].get("torch block-scaled scaled_mm", {}).get("median_ms")
            if ours and th:
                row["ours_over_torch_speed"] = th / ours
            print(f"gemm {M}x{N}x{K}: " + ", ".join(
                f"{k} {v.get('TFLOPS', float('nan')):.0f} TFLOPS" for k, v in row["impls"].items()),
                flush=True)
            rows.append(row)
            del ref
            torch.cuda.empty_cache()
    return rows


# ========================================== per_tensor ============================================

def bench_per_tensor(args, timer: Timer) -> list:
    """gemm_per_tensor with bf16 and float32 D (the library's FP32 kernels, session 58) against
    torch._scaled_mm with per-tensor scales and the same out_dtype (cuBLASLt), promoted
    accumulation on both sides (torch's use_fast_accum=False); each checked against float64."""
    rows = []
    for M in args.gemm_m:
        for (N, K) in DEEPSEEK_NK:
            g = torch.Generator(device="cuda").manual_seed(M + N + K + 58)
            qa, sa = ops.quantize_per_tensor(torch.randn(M, K, generator=g, device="cuda"))
            qb, sb = ops.quantize_per_tensor(torch.randn(N, K, generator=g, device="cuda"))
            ref = (qa.double() @ qb.double().t()) * (sa.double() * sb.double())
            bt = qb.t()
            impls = {}
            for dt, tag in ((torch.bfloat16, "bf16"), (torch.float32, "f32")):
                impls[f"fp8gemm.ops.gemm_per_tensor {tag}"] = (
                    lambda dt=dt: ops.gemm_per_tensor(qa, qb, sa, sb, out_dtype=dt))
                impls[f"torch._scaled_mm {tag}"] = (
                    lambda dt=dt: torch._scaled_mm(qa, bt, scale_a=sa, scale_b=sb, out_dtype=dt,
                                                   use_fast_accum=False))
            row = {"M": M, "N": N, "K": K, "notes": [], "impls": {}}
            tol = 2 ** -8 + 2.5e-7 * K
            _check_and_time(row, impls, timer, lambda name: ref, lambda name: tol)
            for tag in ("bf16", "f32"):
                ours = row["impls"].get(f"fp8gemm.ops.gemm_per_tensor {tag}", {}).get("median_ms")
                th = row["impls"].get(f"torch._scaled_mm {tag}", {}).get("median_ms")
                if ours and th:
                    row[f"ours_over_torch_speed_{tag}"] = th / ours
            o16 = row["impls"].get("fp8gemm.ops.gemm_per_tensor bf16", {}).get("median_ms")
            o32 = row["impls"].get("fp8gemm.ops.gemm_per_tensor f32", {}).get("median_ms")
            if o16 and o32:
                row["f32_over_bf16_speed"] = o16 / o32
            print(f"per_tensor {M}x{N}x{K}: " + ", ".join(
                f"{k} {v.get('TFLOPS', float('nan')):.0f} TFLOPS (err {v['rel_error']:.1e})"
                for k, v in row["impls"].items()), flush=True)
            rows.append(row)
            del ref
            torch.cuda.empty_cache()
    return rows


def _f32_tile_suits(name: str, M: int) -> bool:
    """Whether an FP32 kernel's tile ("128x64_s8_c1x1_promoted_f32": 128 x 64) is one the rules
    take at M: for M <= 128 the decode tiles (cooperative, from registers, at most 128 columns),
    else the large tiles (128 rows, 128 columns or more)."""
    block_m, block_n = (int(x) for x in name.split("_")[0].split("x"))
    if M <= 128:
        return "_tma" not in name and not name.endswith("_pp") and block_n <= 128
    return block_m == 128 and block_n >= 128


def bench_per_tensor_f32_kernels(args, timer: Timer) -> list:
    """Each of the library's per-tensor FP32 kernels whose tile suits M (_f32_tile_suits: for
    M = 4096 128 rows and 128 columns or more, for M <= 128 the decode tiles; by name through
    _gemm_per_tensor_kernel) at M = --tokens with the six (N, K)
    and --f32-shapes (N x K, e.g. a K sweep), promoted and fast, with
    the default choice and torch._scaled_mm's float32 D beside them, each checked against float64
    (what the FP32 rule at that M should pick)."""
    names = torch.ops.fp8gemm._per_tensor_f32_kernel_names().split(",")
    rows = []
    shapes = list(DEEPSEEK_NK) + [nk for nk in args.f32_shapes if nk not in DEEPSEEK_NK]
    for (N, K) in shapes:
        M = args.tokens
        g = torch.Generator(device="cuda").manual_seed(M + N + K + 59)
        qa, sa = ops.quantize_per_tensor(torch.randn(M, K, generator=g, device="cuda"))
        qb, sb = ops.quantize_per_tensor(torch.randn(N, K, generator=g, device="cuda"))
        ref = (qa.double() @ qb.double().t()) * (sa.double() * sb.double())
        bt = qb.t()
        out = torch.empty(M, N, device="cuda")
        for fast in (False, True):
            mode = "fast" if fast else "promoted"
            impls = {
                "default": lambda fast=fast: ops.gemm_per_tensor(qa, qb, sa, sb, fast_accum=fast,
                                                                 out=out),
                "torch._scaled_mm f32": lambda fast=fast: torch._scaled_mm(
                    qa, bt, scale_a=sa, scale_b=sb, out_dtype=torch.float32, use_fast_accum=fast)}
            for k in names:
                if f"_{mode}_" in k and _f32_tile_suits(k, M):
                    impls[k] = (lambda k=k, fast=fast: (torch.ops.fp8gemm._gemm_per_tensor_kernel(
                        qa, qb, sa, sb, out, False, fast, k), out)[1])
            row = {"M": M, "N": N, "K": K, "mode": mode, "notes": [], "impls": {}}
            tol = 2 ** -8 + 2.5e-7 * K
            _check_and_time(row, impls, timer, lambda name: ref, lambda name: tol)
            t_torch = row["impls"].get("torch._scaled_mm f32", {}).get("median_ms")
            for v in row["impls"].values():
                if t_torch and v.get("median_ms"):
                    v["torch_over_this_speed"] = t_torch / v["median_ms"]
            print(f"per_tensor_f32_kernels {M}x{N}x{K} {mode}: " + ", ".join(
                f"{k} {v.get('torch_over_this_speed', float('nan')):.3f}x torch"
                for k, v in row["impls"].items()), flush=True)
            rows.append(row)
        del ref
        torch.cuda.empty_cache()
    return rows


# ============================================== main ==============================================

def _nk_list(text: str) -> list:
    """--f32-shapes: "7168x1024,2112x2048" -> [(7168, 1024), (2112, 2048)]."""
    out = []
    for item in (t for t in text.split(",") if t):
        parts = item.split("x")
        if len(parts) != 2 or not all(p.isdigit() and int(p) > 0 for p in parts):
            raise argparse.ArgumentTypeError(f"'{item}' is not NxK (two positive integers)")
        out.append((int(parts[0]), int(parts[1])))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="bench_torch.json")
    ap.add_argument("--quick", action="store_true", help="fewer shapes and calls (a smoke run)")
    ap.add_argument("--only", default="overhead,linear,gemm")
    ap.add_argument("--commit", default=None)
    ap.add_argument("--delay-us", type=float, default=300.0,
                    help="GPU-side sleep before each timed call (hides the Python host work)")
    ap.add_argument("--step-delay-us", type=float, default=1500.0,
                    help="the same before each timed forward+backward step (linear), whose host "
                         "work is longer (0.2-0.9 ms measured: the log's 'host per call' lines)")
    ap.add_argument("--no-graphs", dest="graphs", action="store_false",
                    help="skip the CUDA-graph (make_graphed_callables) steps of linear")
    ap.add_argument("--time-limit", type=float, default=1.0, help="seconds of timed calls per case")
    ap.add_argument("--tokens", type=int, default=4096)
    ap.add_argument("--f32-shapes", type=_nk_list, default=[],
                    help="per_tensor_f32_kernels: NxK,NxK... shapes to time after the six "
                         "(M = --tokens)")
    ap.add_argument("--overhead-calls", type=int, default=100)
    ap.add_argument("--overhead-repeats", type=int, default=15)
    ap.add_argument("--overhead-sleep-ms", type=float, default=20.0)
    args = ap.parse_args()
    if not fp8gemm.available():
        print(f"bench_torch: {fp8gemm.unavailable_reason()}", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("bench_torch: no CUDA GPU", file=sys.stderr)
        return 2
    args.linear_shapes = DEEPSEEK_NK if not args.quick else DEEPSEEK_NK[:2]
    args.gemm_m = [64, 128, 4096] if not args.quick else [128, 4096]
    if args.quick:
        args.time_limit = min(args.time_limit, 0.2)
    only = set(args.only.split(","))
    timer = Timer(args.delay_us, args.time_limit)
    result = {"context": context(args)}
    t0 = time.time()
    if "overhead" in only:
        result["overhead"] = bench_overhead(args, timer)
        o = result["overhead"]
        for k, v in o["paths"].items():
            b2b = v.get("back_to_back_us_per_call")
            print(f"overhead {k}: host {v['host_us_per_call']:.2f} us/call" +
                  (f", back to back {b2b:.2f} us/call" if b2b is not None else ""), flush=True)
        print(f"op overhead over C++: {o['op_overhead_us']:.2f} us (target <= 10)", flush=True)
        print(f"grouped op, the counter schedule's host work over the static kernel's: "
              f"{o['grouped_counter_extra_us']:.2f} us", flush=True)
    if "linear" in only:
        result["linear"] = bench_linear(args, timer)
    if "gemm" in only:
        result["gemm"] = bench_gemm(args, timer)
    if "per_tensor" in only:
        result["per_tensor"] = bench_per_tensor(args, timer)
    if "per_tensor_f32_kernels" in only:
        result["per_tensor_f32_kernels"] = bench_per_tensor_f32_kernels(args, timer)
    result["context"]["wall_s"] = round(time.time() - t0, 1)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print(f"wrote {args.out} ({result['context']['wall_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
