#!/usr/bin/env python3
"""The Python peers of chapter 7 (DeepSeek-V3 block-scaled FP8 GEMM), timed by the harness's method.

Implementations (benchmark names "<implementation>/<M>x<N>x<K>", as the C++ harness writes them):

  torch_scaled_mm_blockwise  PyTorch's scaled GEMM (cuBLASLt underneath) with A e4m3 (M x K, row-major)
                             scaled 1 x 128 and B e4m3 (N x K, passed transposed as K x N column-major)
                             scaled 128 x 128, bf16 out. Two APIs are tried, newest first (--torch-api):
                               v2: torch.nn.functional.scaled_mm(..., ScalingType.BlockWise1x128,
                                   ScalingType.BlockWise128x128, SwizzleType.NO_SWIZZLE)
                                   scale_a (M, L) strides (1, M)        [L = ceil(K / 128)]
                                   scale_b (L4, N/128) strides (1, L4)  [L4 = L rounded up to 4,
                                                                         padding slots zero]
                               v1: torch._scaled_mm(A, B.t(), scale_a, scale_b, out_dtype=bf16)
                                   scale_a (M, L) strides (1, M); scale_b (L, N/128) strides (1, L):
                                   v1 cannot express the L4 padding cuBLASLt needs, so it is wrong
                                   when L % 4 != 0 (FACTS.md); the result check catches that.
                             (aten/src/ATen/native/cuda/ScaledBlas.cpp, is_blockwise_1x128_scaling,
                             is_blockwise_128x128_scaling, _scaled_block1x128_block128x128; the layouts
                             of test/test_scaled_matmul_cuda.py, _pad_128x128_scales.)
  deepgemm                   deep_gemm.fp8_gemm_nt((A, sfa), (B, sfb), D) of DeepGEMM 2.6.1 (commit 54e2261):
                             sfa (M, L) float32, MN-major and TMA-aligned (deep_gemm.
                             get_mn_major_tma_aligned_tensor, done once before timing so that the call
                             launches the GEMM only); sfb (ceil(N/128), L) float32 contiguous; default
                             recipe (1, 128, 128) on SM90. Skipped (a note in the context) when
                             deep_gemm cannot be imported: run .peer/build_deepgemm.sh first.
  torch_bf16                 torch.matmul in bf16 of the same shapes (reference point; --bf16).

The same quantised operands go to every FP8 implementation: N(0, 1) bf16, quantised per the recipe
(scale = amax / 448 per 1 x 128 group of A and per 128 x 128 block of B, clamped to +-448 before
the cast: torch's cast does not saturate). Every result is checked, before timing, against a float64
reference computed on the GPU from the dequantised operands; a result outside the harness's tolerance
(2^-8 + 2.5e-7 K on the relative Frobenius error, globally and in the worst 128 x 128 tile) is
reported as an error, with no time.

Method: see METHOD below (printed by --dry-run and written into the JSON context). Output: Google
Benchmark JSON, as the C++ harness writes it (plots/plot.py reads it).

    python3 bench/peers.py --out gpu_results/json/peers_ch07.json
    python3 bench/peers.py --shapes 8192x8192x8192,128x7168x16384 --bf16 --out /tmp/p.json
    python3 bench/peers.py --no-delay ...       # the same without the GPU-side delay (shows its effect)
    python3 bench/peers.py --dry-run            # shapes and method; no torch, no GPU
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import math
import os
import platform
import socket
import subprocess
import sys
import time

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The chapter-7 set: 8192^3 and the DeepSeek-V3 shapes (docs/design.md; bench/baseline_cublaslt.cu).
DEEPSEEK_NK = [(2112, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048)]
DEFAULT_SHAPES = [(8192, 8192, 8192)] + [(m, n, k) for m in (64, 128, 4096) for (n, k) in DEEPSEEK_NK]

IMPL_TORCH = "torch_scaled_mm_blockwise"
IMPL_DG = "deepgemm"
IMPL_BF16 = "torch_bf16"
IMPL_OURS = "fp8gemm_block_scaled"
ALL_IMPLS = [IMPL_TORCH, IMPL_DG, IMPL_BF16, IMPL_OURS]

METHOD = (
    "per shape and implementation: one checked call (float64 reference; a wrong result gets no time; "
    "for DeepGEMM this call also JIT-compiles the kernel), {warmup} warm-up calls and a synchronise; "
    "one flushed, timed call estimates the time, then clamp({budget_ms:g} ms / estimate, {min_reps}, "
    "{max_reps}) timed calls, each: L2 flush outside the timed region ({flush}), {delay}, CUDA event, "
    "the Python call, CUDA event, event synchronise; the result is the median of the elapsed times "
    "(sorted[n/2], as common/src/bench.cpp); TFLOPS = 2 M N K / median; GB/s = (M K + N K + 2 M N + "
    "scale bytes) / median. Implementations interleaved per shape, in one process. Second view: "
    "cupti_median_us = CUPTI kernel time (torch.profiler, CUDA activity only) of {cupti} launches "
    "with the L2 flushed between them and no delay: GPU kernel time only, short burst."
)


def method_text(args, flush_desc: str = "write 2 x L2 bytes") -> str:
    if args.no_delay:
        delay = "no GPU-side delay (--no-delay: the Python call's host work can land between the events)"
    else:
        delay = (f"then a GPU-side delay torch.cuda._sleep(~{args.delay_us:g} us, calibrated in cycles) "
                 "enqueued before the start event, so the Python call's host work is hidden behind it "
                 "and the GPU does not wait for the CPU")
    cupti = str(args.cupti_launches) if args.cupti_launches > 0 else "0 (disabled)"
    if getattr(args, "interleave", False):  # bench/peers_moe.py's arguments have no --interleave
        delay += ("; --interleave: after each implementation's checked and warm-up calls, the shape's "
                  "implementations are timed together, in rounds of one call each (flush, delay, "
                  "events around the call), the order rotating every round, rounds = clamp(budget "
                  "x n / sum of the estimates, min_reps, max_reps), as the C++ harness's interleaved "
                  "timing (docs/measuring.md)")
    return METHOD.format(warmup=args.warmup, budget_ms=args.budget_ms, min_reps=args.min_reps,
                         max_reps=args.max_reps, flush=flush_desc, delay=delay, cupti=cupti)


def parse_shapes(text: str) -> list[tuple[int, int, int]]:
    shapes = []
    for item in text.replace(";", ",").split(","):
        item = item.strip().lower()
        if not item:
            continue
        parts = item.split("x")
        if len(parts) != 3 or not all(p.strip().isdigit() and int(p) > 0 for p in parts):
            raise argparse.ArgumentTypeError(f"bad shape {item!r}: expected MxNxK with positive integers")
        shapes.append(tuple(int(p) for p in parts))
    if not shapes:
        raise argparse.ArgumentTypeError("no shapes given")
    return shapes


def ceil_div(a: int, b: int) -> int:
    return (a + b - 1) // b


def tolerance(K: int) -> float:
    """common/check.hpp per_tensor_tolerance(K): the bound on the relative Frobenius error."""
    return 2.0 ** -8 + 2.5e-7 * K


def shape_name(s) -> str:
    """"MxNxK" for an (M, N, K) tuple; a string (e.g. a MoE case name, bench/peers_moe.py) as it is."""
    return s if isinstance(s, str) else f"{s[0]}x{s[1]}x{s[2]}"


# ------------------------------------------------------------------------------------------------
# Context (machine, software, commit)


def run_cmd(cmd: list[str]) -> str | None:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
        return out.stdout.strip() if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def git_commit(arg: str | None) -> str:
    if arg:
        return arg
    try:
        with open(os.path.join(REPO_ROOT, "build", "bin", "commit.txt"), encoding="utf-8") as f:
            c = f.read().strip()
            if c:
                return c
    except OSError:
        pass
    head = run_cmd(["git", "-C", REPO_ROOT, "rev-parse", "HEAD"])
    if head:
        dirty = run_cmd(["git", "-C", REPO_ROOT, "status", "--porcelain", "--untracked-files=no"])
        return head + ("-dirty" if dirty else "")
    return "unknown"


def cublaslt_version_loaded() -> str | None:
    """The cuBLASLt library this process loaded (after a cuBLASLt call), via its own version call."""
    try:
        import ctypes
        with open("/proc/self/maps", encoding="utf-8") as f:
            paths = sorted({line.split()[-1] for line in f if "libcublasLt.so" in line})
        for p in paths:
            try:
                return str(ctypes.CDLL(p).cublasLtGetVersion())
            except (OSError, AttributeError):
                continue
    except OSError:
        pass
    return None


def gpu_context(torch, args) -> dict:
    p = torch.cuda.get_device_properties(0)
    ctx = {
        "gpu": p.name,
        "gpu_sm_count": str(p.multi_processor_count),
        "gpu_compute_capability": f"{p.major}.{p.minor}",
        "gpu_l2_bytes": str(getattr(p, "L2_cache_size", "") or ""),
        "gpu_total_memory_bytes": str(p.total_memory),
        "torch_version": torch.__version__,
        "torch_cuda_version": str(torch.version.cuda),
    }
    for key, fn in (("cuda_runtime_version", "_cuda_getCompiledVersion"),
                    ("cuda_driver_version", "_cuda_getDriverVersion")):
        try:
            ctx[key] = str(getattr(torch._C, fn)())
        except Exception:  # noqa: BLE001 - private API, optional
            pass
    q = run_cmd(["nvidia-smi", "-i", "0", "--query-gpu=clocks.max.sm,clocks.max.mem,driver_version,"
                 "clocks.sm,power.limit", "--format=csv,noheader,nounits"])
    if q:
        f = [x.strip() for x in q.split(",")]
        if len(f) >= 5:
            ctx["gpu_max_sm_clock_mhz"], ctx["gpu_memory_clock_mhz"] = f[0], f[1]
            ctx["nvidia_driver"], ctx["gpu_sm_clock_mhz_at_start"], ctx["gpu_power_limit_w"] = f[2], f[3], f[4]
    else:
        try:  # torch >= 2.6 exposes the clock on some builds
            ctx["gpu_max_sm_clock_mhz"] = str(int(p.clock_rate) // 1000)
        except Exception:  # noqa: BLE001
            pass
    return ctx


def base_context(args) -> dict:
    try:
        load = list(os.getloadavg())
    except OSError:
        load = []
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).astimezone().isoformat(timespec="seconds"),
        "host_name": socket.gethostname(),
        "executable": "bench/peers.py",
        "num_cpus": os.cpu_count() or 0,
        "mhz_per_cpu": 0,
        "cpu_scaling_enabled": False,
        "caches": [],
        "load_avg": load,
        "library_build_type": "python",
        "python_version": platform.python_version(),
        "command_line": " ".join(sys.argv[1:]),
        "git_commit": git_commit(args.commit),
        "l2_flush": "1",
        "timing": "per_launch",
        "delay": "none" if args.no_delay else f"torch.cuda._sleep ~{args.delay_us:g} us before the start event",
        "delay_us": "0" if args.no_delay else f"{args.delay_us:g}",
        "tolerance": "rel_error and worst_tile_error <= 2^-8 + 2.5e-7 K (common/check.hpp)",
        "error_metrics": ("rel_error = ||D - ref||_F / ||ref||_F; max_rel_error = max|D - ref| / max|ref|; "
                          "worst_tile_error = max over 128 x 128 tiles of the tile's relative Frobenius "
                          "error; ref = float64 GEMM of the dequantised operands (GPU)"),
    }


# ------------------------------------------------------------------------------------------------
# Output


class Output:
    """Google Benchmark JSON, rewritten after every shape so that a timeout keeps what was done."""

    def __init__(self, path: str | None, context: dict):
        self.path = path
        self.doc = {"context": context, "benchmarks": []}
        self.families: dict[str, int] = {}
        self.instances: dict[str, int] = {}

    def _base(self, impl: str, shape) -> dict:
        name = f"{impl}/{shape_name(shape)}/iterations:1/manual_time"
        fam = self.families.setdefault(impl, len(self.families))
        inst = self.instances.get(impl, 0)
        self.instances[impl] = inst + 1
        return {"name": name, "family_index": fam, "per_family_instance_index": inst, "run_name": name,
                "run_type": "iteration", "repetitions": 1, "repetition_index": 0, "threads": 1,
                "iterations": 1}

    def add(self, impl: str, shape, fields: dict) -> None:
        b = self._base(impl, shape)
        b.update(fields)
        self.doc["benchmarks"].append(b)

    def add_error(self, impl: str, shape, message: str, fields: dict | None = None) -> None:
        b = self._base(impl, shape)
        b.update({"error_occurred": True, "error_message": message, "error": message})
        if fields:
            b.update(fields)
        self.doc["benchmarks"].append(b)

    def write(self) -> None:
        if not self.path:
            return
        d = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(d, exist_ok=True)
        tmp = self.path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(json_safe(self.doc), f, indent=1, allow_nan=False, default=str)
            f.write("\n")
        os.replace(tmp, self.path)


def finite_or_none(x):
    return x if isinstance(x, (int, float)) and math.isfinite(x) else None


def json_safe(x):
    """Non-finite floats become null (strict JSON), recursively."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_safe(v) for v in x]
    return x


# ------------------------------------------------------------------------------------------------
# The GPU part (torch imported only here)


class Gpu:
    def __init__(self, torch, args):
        self.torch = torch
        self.args = args
        props = torch.cuda.get_device_properties(0)
        l2 = int(getattr(props, "L2_cache_size", 0) or 0)
        self.flush_bytes = args.flush_bytes or (2 * l2 if l2 > 0 else 256 << 20)
        self.flush_buf = torch.empty(self.flush_bytes, dtype=torch.uint8, device="cuda")
        self.flush_buf.zero_()
        torch.cuda.synchronize()
        self.cycles_per_us = self._calibrate_sleep()
        self.delay_cycles = 0 if args.no_delay else max(1, int(round(args.delay_us * self.cycles_per_us)))
        self.flush_us = self._time_flush()

    def flush(self):
        self.flush_buf.zero_()

    def _calibrate_sleep(self) -> float:
        torch = self.torch
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        cycles = 2_000_000
        torch.cuda._sleep(cycles)  # first launch: module load
        torch.cuda.synchronize()
        rates = []
        for _ in range(5):
            s.record()
            torch.cuda._sleep(cycles)
            e.record()
            e.synchronize()
            rates.append(cycles / (s.elapsed_time(e) * 1e3))
        rates.sort()
        return rates[len(rates) // 2]

    def _time_flush(self) -> float:
        torch = self.torch
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        ts = []
        for _ in range(5):
            s.record()
            self.flush()
            e.record()
            e.synchronize()
            ts.append(s.elapsed_time(e) * 1e3)
        ts.sort()
        return ts[len(ts) // 2]

    # -- timing -----------------------------------------------------------------------------------

    def time_call(self, fn, delay_us: float | None = None) -> dict:
        """The harness's method (common/src/bench.cpp time_gpu), plus the GPU-side delay: a
        group of one (time_group). delay_us: this call's delay instead of --delay-us (for calls
        with much host work, e.g. a chain of small torch ops; ignored with --no-delay)."""
        return self.time_group([fn], [delay_us])[0]

    def time_group(self, fns: list, delays_us: list | None = None) -> list:
        """The calls of one shape timed together (--interleave; common/src/bench.cpp time_group):
        warm-up each, one flushed estimate each, then rounds of one call each, the order rotating
        by one every round, each call after the flush and its delay (delays_us[i] where given and
        not None, else --delay-us; none with --no-delay) between its own events; the events are
        read once per round. Rounds: clamp(budget x n / sum of the estimates, min_reps, max_reps),
        so a group of one is timed as before. Returns one dict per call: the median and spread of
        its times, its host time (the call alone, and flush-to-enqueued), whether the delay
        covered that host work, and "interleaved" (1 where n > 1)."""
        torch, args = self.torch, self.args
        n = len(fns)
        delays = []
        for i in range(n):
            d = (delays_us or [None] * n)[i]
            delays.append(max(1, int(round(d * self.cycles_per_us))) if d is not None and not args.no_delay
                          else self.delay_cycles)
        for fn in fns:
            for _ in range(args.warmup):
                fn()
        torch.cuda.synchronize()
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        pc = time.perf_counter
        est = 0.0
        for i, fn in enumerate(fns):
            self.flush()
            starts[i].record()
            fn()
            ends[i].record()
            ends[i].synchronize()
            est += max(starts[i].elapsed_time(ends[i]), 1e-3)
        rounds = int(min(max(args.budget_ms * n / est, args.min_reps), args.max_reps))
        ms, call_us, enq_us = ([[] for _ in range(n)] for _ in range(3))
        gc_was = gc.isenabled()
        gc.disable()
        try:
            for r in range(rounds):
                for j in range(n):
                    i = (j + r) % n
                    t0 = pc()
                    self.flush()  # outside the timed region
                    if delays[i]:
                        torch.cuda._sleep(delays[i])
                    starts[i].record()
                    t1 = pc()
                    fns[i]()
                    t2 = pc()
                    ends[i].record()
                    call_us[i].append((t2 - t1) * 1e6)
                    enq_us[i].append((t2 - t0) * 1e6)
                ends[(n - 1 + r) % n].synchronize()  # the round's last event
                for i in range(n):
                    ms[i].append(starts[i].elapsed_time(ends[i]))
        finally:
            if gc_was:
                gc.enable()
        out = []
        for i in range(n):
            s = sorted(ms[i])
            host_enq = sorted(enq_us[i])[len(enq_us[i]) // 2]
            # Did the delay cover the host work? The GPU is busy for flush + delay after the flush
            # is enqueued; the call's kernels are enqueued host_enqueue_us after that.
            cover = self.flush_us + (delays[i] / self.cycles_per_us if delays[i] else 0.0)
            out.append({"median_ms": s[len(s) // 2], "min_ms": s[0], "max_ms": s[-1], "reps": len(s),
                        "host_call_us": sorted(call_us[i])[len(call_us[i]) // 2],
                        "host_enqueue_us": host_enq,
                        "delay_covers_host": 1.0 if host_enq < cover else 0.0,
                        "interleaved": 1.0 if n > 1 else 0.0})
        return out

    def cupti_view(self, fn, launches: int, flops, entry: dict):
        """The CUPTI kernel-time view of fn (cupti_time, `launches` launches; none if 0) written into
        entry's cupti_* counters (cupti_TFLOPS where flops is given). Returns (a suffix for the
        label, the median in us or None)."""
        if launches <= 0:
            return "", None
        try:
            c = self.cupti_time(fn, launches)
        except Exception as e:  # noqa: BLE001 - the second view is optional
            return f" [cupti failed: {type(e).__name__}: {str(e)[:200]}]", None
        if "error" in c:
            return f" [cupti: {c['error']}]", None
        us = c["median_us"]
        entry["cupti_median_us"] = us
        if flops:
            entry["cupti_TFLOPS"] = flops / (us * 1e-6) / 1e12
        entry["cupti_kernels_per_call"] = float(c["kernels_per_call"])
        return " [cupti kernels: " + ", ".join(n[:90] for n in c["kernels"][:4]) + "]", us

    def cupti_time(self, fn, launches: int) -> dict:
        """Kernel time by CUPTI (torch.profiler), L2 flushed between launches, no delay."""
        torch = self.torch
        from torch.profiler import ProfilerActivity, profile
        try:
            from torch.autograd import DeviceType
        except ImportError:  # pragma: no cover
            DeviceType = None

        def kernels(prof):
            out = []
            for e in prof.events():
                dt = getattr(e, "device_type", None)
                if DeviceType is not None and dt != DeviceType.CUDA:
                    continue
                tr = getattr(e, "time_range", None)
                if tr is None:
                    continue
                out.append((tr.start, tr.elapsed_us(), e.name))
            return out

        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as p0:
            for _ in range(3):
                self.flush()
            torch.cuda.synchronize()
        exclude = {name for _, _, name in kernels(p0)}
        with profile(activities=[ProfilerActivity.CUDA]) as p:
            for _ in range(launches):
                self.flush()
                fn()
            torch.cuda.synchronize()
        ev = sorted(k for k in kernels(p) if k[2] not in exclude)
        if not ev:
            return {"error": "no kernel events recorded"}
        names = []
        for _, _, n in ev:
            if n not in names:
                names.append(n)
        per = len(ev) // launches if len(ev) % launches == 0 else 0
        if per > 0:
            sums = sorted(sum(d for _, d, _ in ev[i * per:(i + 1) * per]) for i in range(launches))
            med = sums[len(sums) // 2]
        else:  # uneven: mean per call
            med = sum(d for _, d, _ in ev) / launches
        return {"median_us": med, "kernels_per_call": per, "kernels": names}

    # -- data -------------------------------------------------------------------------------------

    def quant_1x128(self, x):
        torch = self.torch
        m, k = x.shape
        kp = ceil_div(k, 128) * 128
        xp = torch.zeros((m, kp), dtype=torch.float32, device=x.device)
        xp[:, :k] = x.float()
        v = xp.view(m, kp // 128, 128)
        sf = v.abs().amax(dim=2).clamp(min=1e-4) / 448.0
        q = (v / sf.unsqueeze(2)).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
        return q.view(m, kp)[:, :k].contiguous(), sf.contiguous()

    def quant_128x128(self, x):
        torch = self.torch
        n, k = x.shape
        np_, kp = ceil_div(n, 128) * 128, ceil_div(k, 128) * 128
        xp = torch.zeros((np_, kp), dtype=torch.float32, device=x.device)
        xp[:n, :k] = x.float()
        v = xp.view(np_ // 128, 128, kp // 128, 128)
        sf = v.abs().amax(dim=(1, 3), keepdim=True).clamp(min=1e-4) / 448.0
        q = (v / sf).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
        return q.view(np_, kp)[:n, :k].contiguous(), sf.view(np_ // 128, kp // 128).contiguous()

    def dequant_1x128(self, q, sf):
        m, k = q.shape
        return q.double() * sf.double().repeat_interleave(128, dim=1)[:, :k]

    def dequant_128x128(self, q, sf):
        n, k = q.shape
        s = sf.double().repeat_interleave(128, dim=0)[:n].repeat_interleave(128, dim=1)[:, :k]
        return q.double() * s

    def error_parts(self, d, ref) -> dict:
        """The sums behind compare() for one block (e.g. one expert's rows), so that several blocks
        can be combined (combine_errors): squared norms, maxima, worst 128 x 128 tile (tiles are
        local to the block). d and ref: 2-D, same shape, at least one element."""
        torch = self.torch
        F = torch.nn.functional
        dd = d.double()
        finite = bool(torch.isfinite(dd).all().item())
        diff = dd - ref
        M, N = ref.shape
        t = 128
        Mp, Np = ceil_div(M, t) * t, ceil_div(N, t) * t
        d2 = F.pad(diff * diff, (0, Np - N, 0, Mp - M)).view(Mp // t, t, Np // t, t).sum(dim=(1, 3))
        r2 = F.pad(ref * ref, (0, Np - N, 0, Mp - M)).view(Mp // t, t, Np // t, t).sum(dim=(1, 3))
        return {"finite": finite, "diff_sq": d2.sum().item(), "ref_sq": r2.sum().item(),
                "diff_max": diff.abs().max().item(), "ref_max": ref.abs().max().item(),
                "worst_tile": (d2 / r2.clamp(min=1e-300)).sqrt().max().item()}

    @staticmethod
    def combine_errors(parts: list, K: int) -> dict:
        """compare()'s result from the error_parts of several blocks (tolerance(K))."""
        finite = all(p["finite"] for p in parts)
        ref_norm = math.sqrt(sum(p["ref_sq"] for p in parts))
        rel = math.sqrt(sum(p["diff_sq"] for p in parts)) / ref_norm if ref_norm > 0 else float("inf")
        ref_max = max((p["ref_max"] for p in parts), default=0.0)
        max_rel = max((p["diff_max"] for p in parts), default=0.0) / ref_max if ref_max > 0 else float("inf")
        worst = max((p["worst_tile"] for p in parts), default=0.0)
        tol = tolerance(K)
        ok = bool(parts) and finite and rel <= tol and worst <= tol
        return {"ok": ok, "finite": finite, "rel_error": rel if finite else float("inf"),
                "max_rel_error": max_rel if finite else float("inf"),
                "worst_tile_error": worst if finite else float("inf"), "tolerance": tol}

    def compare(self, d, ref, K: int) -> dict:
        return self.combine_errors([self.error_parts(d, ref)], K)


def torch_scaled_mm_candidates(torch, args, Aq, sfa, Bq, sfb, M, N, K):
    """(api label, callable) pairs to try for the 1x128 x 128x128 recipe, documented one first."""
    F = torch.nn.functional
    L = ceil_div(K, 128)
    L4 = ceil_div(L, 4) * 4
    # A's scales: (M, L), outer-dim-major (M contiguous): strides (1, M).
    scale_a = sfa.t().contiguous().t()
    b_t = Bq.t()  # (K, N), column-major: what cuBLASLt's row-major x column-major needs
    cands = []
    want = args.torch_api
    if want in ("auto", "v2"):
        ST = getattr(F, "ScalingType", None) or getattr(torch._C, "_ScalingType", None)
        SW = getattr(F, "SwizzleType", None) or getattr(torch._C, "_SwizzleType", None)
        fn = getattr(F, "scaled_mm", None)
        if fn is None or ST is None or not hasattr(ST, "BlockWise1x128") or not hasattr(ST, "BlockWise128x128"):
            cands.append(("v2", None, "torch.nn.functional.scaled_mm / ScalingType.BlockWise1x128 not in this torch"))
        else:
            # B's scales, in mat_b's (K, N) orientation: (L4, N/128), strides (1, L4); the padding
            # slots (L..L4) are zero and never read.
            sb = torch.zeros((ceil_div(N, 128), L4), dtype=torch.float32, device=sfb.device)
            sb[:, :L] = sfb
            scale_b = sb.t()
            kw = {}
            if SW is not None and hasattr(SW, "NO_SWIZZLE"):
                kw = {"swizzle_a": SW.NO_SWIZZLE, "swizzle_b": SW.NO_SWIZZLE}

            def call_v2(Aq=Aq, b_t=b_t, scale_a=scale_a, scale_b=scale_b, kw=kw):
                return fn(Aq, b_t, scale_a, ST.BlockWise1x128, scale_b, ST.BlockWise128x128,
                          output_dtype=torch.bfloat16, **kw)
            cands.append(("v2 torch.nn.functional.scaled_mm(BlockWise1x128, BlockWise128x128, NO_SWIZZLE); "
                          f"scale_a {tuple(scale_a.shape)} strides {scale_a.stride()}, "
                          f"scale_b {tuple(scale_b.shape)} strides {scale_b.stride()}", call_v2, None))
    if want in ("auto", "v1"):
        # torch._scaled_mm infers the recipe from shapes and strides: scale_b.t() must be
        # (N/128, L) with strides (L, 1), i.e. scale_b (L, N/128) strides (1, L).
        scale_b1 = sfb.contiguous().t()

        def call_v1(Aq=Aq, b_t=b_t, scale_a=scale_a, scale_b=scale_b1):
            return torch._scaled_mm(Aq, b_t, scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16)
        note = "" if L % 4 == 0 else " (L % 4 != 0: known wrong, FACTS.md)"
        cands.append((f"v1 torch._scaled_mm; scale_a {tuple(scale_a.shape)} strides {scale_a.stride()}, "
                      f"scale_b {tuple(scale_b1.shape)} strides {scale_b1.stride()}{note}", call_v1, None))
    return cands


def counters(shape, t: dict, scale_bytes: float, in_bytes_per_elem: int = 1) -> dict:
    M, N, K = shape
    med_s = t["median_ms"] / 1e3
    bytes_ = in_bytes_per_elem * (M * K + N * K) + 2 * M * N + scale_bytes
    return {
        "real_time": t["median_ms"] * 1e3,
        "cpu_time": t["host_call_us"],
        "time_unit": "us",
        "TFLOPS": 2.0 * M * N * K / med_s / 1e12,
        "GB/s": bytes_ / med_s / 1e9,
        "median_us": t["median_ms"] * 1e3,
        "min_us": t["min_ms"] * 1e3,
        "max_us": t["max_ms"] * 1e3,
        "reps": float(t["reps"]),
        "host_call_us": t["host_call_us"],
        "host_enqueue_us": t["host_enqueue_us"],
        "delay_covers_host": t["delay_covers_host"],
    }


def dg_warm_worker(shapes, max_sms: int = 0) -> int:
    """Hidden mode (--dg-warm-only): call deep_gemm.fp8_gemm_nt once per shape on zero operands, so
    that its JIT compiles the kernels into its on-disk cache (compiles are atomic renames there),
    with the timing process's SM count (DeepGEMM's configuration depends on it)."""
    import torch
    import deep_gemm as dg
    if max_sms:
        dg.set_num_sms(max_sms)
    for (M, N, K) in shapes:
        t0 = time.time()
        L = ceil_div(K, 128)
        a = torch.zeros((M, K), dtype=torch.uint8, device="cuda").view(torch.float8_e4m3fn)
        b = torch.zeros((N, K), dtype=torch.uint8, device="cuda").view(torch.float8_e4m3fn)
        sfa = dg.get_mn_major_tma_aligned_tensor(torch.ones((M, L), dtype=torch.float32, device="cuda"))
        sfb = torch.ones((ceil_div(N, 128), L), dtype=torch.float32, device="cuda")
        d = torch.empty((M, N), dtype=torch.bfloat16, device="cuda")
        dg.fp8_gemm_nt((a, sfa), (b, sfb), d)
        torch.cuda.synchronize()
        print(f"dg-warm {shape_name((M, N, K))} {time.time() - t0:.1f} s", flush=True)
    return 0


def dg_warm_parallel(shapes, jobs: int, timeout_s: float, max_sms: int = 0) -> str:
    """Compile DeepGEMM's kernels for all shapes in `jobs` processes at once (its JIT compiles one
    kernel at a time per process, ~10-30 s each with nvcc). Shapes with the same (N, K) go to the
    same process (with compiled dims "nk" they may share a kernel). Returns a summary line."""
    groups: dict[tuple[int, int], list] = {}
    for s in shapes:
        groups.setdefault((s[1], s[2]), []).append(s)
    buckets: list[list] = [[] for _ in range(max(1, min(jobs, len(groups))))]
    for g in sorted(groups.values(), key=len, reverse=True):
        min(buckets, key=len).extend(g)  # greedy: the emptiest process takes the next group
    cmds = [[sys.executable, os.path.abspath(__file__), "--dg-warm-only", "--max-sms", str(max_sms),
             "--shapes", ",".join(shape_name(s) for s in b)] for b in buckets]
    return run_warm_processes(cmds, timeout_s)


def run_warm_processes(cmds: list, timeout_s: float) -> str:
    """Run the warm-up commands at once (each a list for subprocess), wait at most timeout_s in all;
    echo their "dg-warm" lines (all lines of a failed one). Returns a summary line."""
    t0 = time.time()
    procs = []
    for cmd in cmds:
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    rcs, lines = [], []
    for p in procs:
        try:
            o, _ = p.communicate(timeout=max(1.0, timeout_s - (time.time() - t0)))
        except subprocess.TimeoutExpired:
            p.kill()
            o, _ = p.communicate()
            o = (o or "") + "\n(timed out)"
        rcs.append(p.returncode)
        lines += [ln for ln in (o or "").splitlines() if ln.startswith("dg-warm") or p.returncode]
    for ln in lines:
        print(f"  {ln}", flush=True)
    return f"{len(procs)} processes, {time.time() - t0:.0f} s wall, exit codes {rcs}"


def run_gpu(args, shapes, impls) -> int:
    ctx = base_context(args)
    out = Output(args.out, ctx)
    notes: list[str] = []
    ctx["notes"] = notes
    try:
        import torch
    except ImportError as e:
        torch = None
        torch_error = f"torch not importable: {e}"
    if torch is None or not torch.cuda.is_available():
        msg = torch_error if torch is None else "no CUDA device visible to torch"
        ctx["gpu"] = "none"
        notes.append(msg)
        for s in shapes:
            for impl in impls:
                out.add_error(impl, s, msg)
        out.write()
        print(f"peers.py: {msg}", file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False
    ctx.update(gpu_context(torch, args))

    dg = None
    if IMPL_DG in impls:
        try:
            import deep_gemm as dg  # noqa: F401
            ctx["deep_gemm_version"] = str(getattr(dg, "__version__", "?"))
            ctx["deep_gemm_path"] = os.path.dirname(getattr(dg, "__file__", "") or "")
            if not hasattr(dg, "fp8_gemm_nt"):
                raise ImportError("deep_gemm has no fp8_gemm_nt (built without CUDA >= 12.1 kernels?)")
        except Exception as e:  # noqa: BLE001 - any import failure means: skip it, say why
            dg = None
            msg = f"deepgemm skipped: deep_gemm not importable ({type(e).__name__}: {e}); " \
                  "build it with bash .peer/build_deepgemm.sh and export the PYTHONPATH it prints"
            ctx["deep_gemm_version"] = "not importable"
            notes.append(msg)
            print(f"peers.py: {msg}", file=sys.stderr)
            impls = [i for i in impls if i != IMPL_DG]

    if IMPL_OURS in impls:
        # The commit the imported package was built from (stage.sh writes commit.txt next to it).
        # git_commit names the checkout that ran this script (or build/bin/commit.txt), which on a
        # machine that received only a copy of the tree and a staged package can be another commit
        # (session 43's call 3 recorded the tree's HEAD while the package was 0d59ffe).
        try:
            import fp8gemm
            where = os.path.dirname(getattr(fp8gemm, "__file__", "") or "")
            with open(os.path.join(where, "commit.txt"), encoding="utf-8") as f:
                ctx["fp8gemm_package_commit"] = f.read().strip() or "unknown"
            ctx["fp8gemm_package_path"] = where
        except Exception as e:  # noqa: BLE001 - informational; the op's own import reports failures
            ctx["fp8gemm_package_commit"] = f"unknown ({type(e).__name__}: {e})"

    if dg is not None and args.dg_jobs > 1 and len(shapes) > 1:
        print(f"peers.py: compiling DeepGEMM's kernels for {len(shapes)} shapes in parallel "
              f"(--dg-jobs {args.dg_jobs}) ...", flush=True)
        try:
            ctx["deep_gemm_jit_prewarm"] = dg_warm_parallel(shapes, args.dg_jobs, args.dg_warm_timeout,
                                                            args.max_sms)
        except Exception as e:  # noqa: BLE001 - only a speed-up: the checked call compiles anyway
            ctx["deep_gemm_jit_prewarm"] = f"failed: {type(e).__name__}: {e}"
        print(f"peers.py: DeepGEMM JIT pre-warm: {ctx['deep_gemm_jit_prewarm']}", flush=True)

    ctx["max_sms"] = str(args.max_sms)
    if args.max_sms:
        # Before any timed call: both libraries build their plans / pick their configurations for
        # this many SMs. torch (cuBLASLt, bf16 matmul) has no such setting.
        if dg is not None:
            dg.set_num_sms(args.max_sms)
        if IMPL_OURS in impls:
            import fp8gemm
            fp8gemm.ops.set_max_sms(args.max_sms)
        if IMPL_TORCH in impls or IMPL_BF16 in impls:
            notes.append(f"--max-sms {args.max_sms}: torch's implementations run on all SMs "
                         "(no such setting); fp8gemm and DeepGEMM on the given count")

    gpu = Gpu(torch, args)
    ctx["flush_bytes"] = str(gpu.flush_bytes)
    ctx["flush_us"] = f"{gpu.flush_us:.1f}"
    ctx["sleep_cycles_per_us"] = f"{gpu.cycles_per_us:.1f}"
    ctx["delay_cycles"] = str(gpu.delay_cycles)
    flush_desc = (f"torch.Tensor.zero_ on a {gpu.flush_bytes}-byte uint8 buffer = 2 x L2 "
                  "(the harness: cudaMemsetAsync on 2 x L2)") if not args.flush_bytes else \
        f"torch.Tensor.zero_ on a {gpu.flush_bytes}-byte uint8 buffer"
    ctx["method"] = method_text(args, flush_desc)
    ctx["implementations"] = ", ".join(impls)
    out.write()
    print(f"peers.py: {ctx.get('gpu')} | torch {torch.__version__} | deep_gemm {ctx.get('deep_gemm_version', '-')} "
          f"| flush {gpu.flush_bytes >> 20} MiB ({gpu.flush_us:.0f} us) | delay "
          f"{'none' if args.no_delay else f'{args.delay_us:g} us = {gpu.delay_cycles} cycles'}", flush=True)
    print(f"{'implementation':28s} {'shape':20s} {'TFLOPS':>8s} {'median_us':>10s} {'cupti_us':>9s} "
          f"{'host_us':>8s} {'rel_err':>9s} {'max_rel':>9s}  note", flush=True)

    t_start = time.time()
    failures = 0
    for si, shape in enumerate(shapes):
        if args.time_limit and time.time() - t_start > args.time_limit:
            msg = f"not run: --time-limit {args.time_limit:g} s reached"
            notes.append(f"{shape_name(shape)} and later shapes {msg}")
            for s in shapes[si:]:
                for impl in impls:
                    out.add_error(impl, s, msg)
            break
        M, N, K = shape
        L = ceil_div(K, 128)
        gen = torch.Generator(device="cuda")
        gen.manual_seed(args.seed + M * 1000003 + N * 1009 + K)
        a16 = torch.randn((M, K), generator=gen, device="cuda", dtype=torch.float32).to(torch.bfloat16)
        b16 = torch.randn((N, K), generator=gen, device="cuda", dtype=torch.float32).to(torch.bfloat16)
        fp8_impls = [i for i in impls if i in (IMPL_TORCH, IMPL_DG, IMPL_OURS)]
        ref8 = None
        if fp8_impls:
            Aq, sfa = gpu.quant_1x128(a16)
            Bq, sfb = gpu.quant_128x128(b16)
            ref8 = gpu.dequant_1x128(Aq, sfa) @ gpu.dequant_128x128(Bq, sfb).t()
            # A's scales MN-major and TMA-aligned, made once (as fp8_gemm_nt would on every call):
            # what DeepGEMM and our op (which takes them without a copy) are both given.
            sfa_mn = dg.get_mn_major_tma_aligned_tensor(sfa) if dg is not None and \
                hasattr(dg, "get_mn_major_tma_aligned_tensor") else sfa.t().contiguous().t()
            scale_bytes = 4.0 * (M * L + ceil_div(N, 128) * L)
        pending = []  # --interleave: the checked calls of this shape, timed together below

        def finish(impl, fn, chk, label, fields, sb, bpe, t):
            """Counters, the CUPTI view and the console line of one timed implementation."""
            entry = counters(shape, t, sb, bpe)
            entry.update({"rel_error": chk["rel_error"], "max_rel_error": chk["max_rel_error"],
                          "worst_tile_error": chk["worst_tile_error"],
                          "interleaved": t.get("interleaved", 0.0)})
            entry.update(fields)
            suffix, cupti_us = gpu.cupti_view(fn, args.cupti_launches, 2.0 * M * N * K, entry)
            entry["label"] = label + suffix
            out.add(impl, shape, entry)
            print(f"{impl:28s} {shape_name(shape):20s} {entry['TFLOPS']:8.1f} {entry['median_us']:10.2f} "
                  f"{(f'{cupti_us:9.2f}' if cupti_us else '        -')} {t['host_call_us']:8.1f} "
                  f"{chk['rel_error']:9.2e} {chk['max_rel_error']:9.2e}  "
                  f"{'' if t['delay_covers_host'] or args.no_delay else 'host work NOT covered by the delay'}",
                  flush=True)

        for impl in impls:
            label, fields = "", {}
            try:
                if impl == IMPL_OURS:
                    # This repository's library (chapter 7's kernels, the library's per-shape table)
                    # through its PyTorch op, given the same scale tensors as DeepGEMM: A's MN-major
                    # and TMA-aligned (taken as they are, no copy), B's [nb, kg] contiguous.
                    import fp8gemm.ops as fops
                    d_ours = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")

                    def fn(a=Aq, sa=sfa_mn, b=Bq, sb_=sfb, d=d_ours):
                        fops.gemm_block_scaled(a, sa, b, sb_, out=d)
                        return d
                    fn()
                    torch.cuda.synchronize()
                    chk = gpu.compare(d_ours, ref8, K)
                    label = (f"fp8gemm.ops.gemm_block_scaled (the library; chapter 7's kernels), sfa "
                             f"{tuple(sfa_mn.shape)} strides {sfa_mn.stride()}, sfb {tuple(sfb.shape)} "
                             f"strides {sfb.stride()}")
                    if not chk["ok"]:
                        fields = {k: finite_or_none(chk[k]) for k in ("rel_error", "max_rel_error", "worst_tile_error")}
                        raise RuntimeError(f"WRONG result: rel_error {chk['rel_error']:.3g}, worst tile "
                                           f"{chk['worst_tile_error']:.3g} (tolerance {chk['tolerance']:.3g})")
                    sb, bpe = scale_bytes, 1
                elif impl == IMPL_BF16:
                    ref16 = a16.double() @ b16.double().t()
                    fn = lambda a=a16, b=b16: torch.matmul(a, b.t())  # noqa: E731
                    chk = gpu.compare(fn(), ref16, K)
                    del ref16
                    label = "torch.matmul bf16 (cuBLAS)"
                    sb = 0.0
                    bpe = 2
                elif impl == IMPL_TORCH:
                    chk, fn, errs = None, None, []
                    for api, call, why in torch_scaled_mm_candidates(torch, args, Aq, sfa, Bq, sfb, M, N, K):
                        if call is None:
                            errs.append(f"{api}: {why}")
                            continue
                        try:
                            d = call()
                            torch.cuda.synchronize()
                        except Exception as e:  # noqa: BLE001 - unsupported recipe/layout: try the next
                            errs.append(f"{api.split(';')[0]}: {type(e).__name__}: {str(e).splitlines()[0][:300]}")
                            continue
                        c = gpu.compare(d, ref8, K)
                        del d
                        if c["ok"]:
                            chk, fn, label = c, call, api
                            break
                        errs.append(f"{api.split(';')[0]}: WRONG result, rel_error {c['rel_error']:.3g}, "
                                    f"worst tile {c['worst_tile_error']:.3g}, max_rel {c['max_rel_error']:.3g} "
                                    f"(tolerance {c['tolerance']:.3g})")
                        chk = c  # keep the last wrong one for the record
                    if fn is None:
                        fields = {k: finite_or_none(v) for k, v in (chk or {}).items()
                                  if k in ("rel_error", "max_rel_error", "worst_tile_error")}
                        raise RuntimeError("no torch scaled-mm path gave a correct result: " + " | ".join(errs))
                    if errs:
                        label += " [other paths: " + " | ".join(errs) + "]"
                    sb, bpe = scale_bytes, 1
                else:  # DeepGEMM
                    sfa_dg = sfa_mn  # LHS scales: MN-major, TMA-aligned (above)
                    d_out = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")

                    def fn(a=(Aq, sfa_dg), b=(Bq, sfb), d=d_out):
                        dg.fp8_gemm_nt(a, b, d)
                        return d
                    t0 = time.time()
                    fn()  # JIT-compiles the kernel for this shape on first use
                    torch.cuda.synchronize()
                    jit_s = time.time() - t0
                    chk = gpu.compare(d_out, ref8, K)
                    label = (f"deep_gemm.fp8_gemm_nt, recipe default (1,128,128); sfa {tuple(sfa_dg.shape)} strides "
                             f"{sfa_dg.stride()}, sfb {tuple(sfb.shape)} strides {sfb.stride()}; first call "
                             f"(JIT) {jit_s:.1f} s")
                    fields["first_call_s"] = jit_s
                    if not chk["ok"]:
                        fields = {k: finite_or_none(chk[k]) for k in ("rel_error", "max_rel_error", "worst_tile_error")}
                        raise RuntimeError(f"WRONG result: rel_error {chk['rel_error']:.3g}, worst tile "
                                           f"{chk['worst_tile_error']:.3g} (tolerance {chk['tolerance']:.3g})")
                    sb, bpe = scale_bytes, 1

                if args.interleave:
                    pending.append((impl, fn, chk, label, fields, sb, bpe))
                    continue
                finish(impl, fn, chk, label, fields, sb, bpe, gpu.time_call(fn))
            except Exception as e:  # noqa: BLE001 - one failure must not stop the others
                failures += 1
                msg = f"{type(e).__name__}: {e}"
                out.add_error(impl, shape, msg, dict(fields, label=label) if label else fields)
                print(f"{impl:28s} {shape_name(shape):20s} ERROR {msg[:400]}", flush=True)
                try:
                    torch.cuda.synchronize()
                except Exception as e2:  # noqa: BLE001 - a sticky CUDA error: the rest cannot run
                    notes.append(f"CUDA context unusable after {impl} {shape_name(shape)}: {e2}")
                    out.write()
                    print(f"peers.py: CUDA context unusable ({e2}); stopping", file=sys.stderr)
                    return 3
        if pending:
            try:
                times = gpu.time_group([p[1] for p in pending])
                for p, t in zip(pending, times):
                    finish(*p, t)
            except Exception as e:  # noqa: BLE001 - record it for every member of the group
                failures += len(pending)
                for p in pending:
                    out.add_error(p[0], shape, f"{type(e).__name__}: {e}", {"label": p[3]})
                print(f"{'(interleaved group)':28s} {shape_name(shape):20s} ERROR {type(e).__name__}: {e}",
                      flush=True)
        # free this shape's tensors before the next one
        pending = []
        a16 = b16 = Aq = sfa = Bq = sfb = ref8 = fn = d_out = sfa_dg = d_ours = sfa_mn = None  # noqa: F841
        gc.collect()
        torch.cuda.empty_cache()
        cl = cublaslt_version_loaded()
        if cl:
            ctx["cublaslt_version"] = cl
        out.write()
    if args.out:
        print(f"peers.py: wrote {args.out} ({len(out.doc['benchmarks'])} benchmarks, {failures} errors)")
    return 1 if failures else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", type=parse_shapes, default=None,
                    help="MxNxK,... (default: 8192^3 and the DeepSeek-V3 set, 19 shapes)")
    ap.add_argument("--out", default=None, help="JSON file to write (Google Benchmark format)")
    ap.add_argument("--impls", default=f"{IMPL_TORCH},{IMPL_DG}",
                    help=f"comma-separated subset of {','.join(ALL_IMPLS)} (default: %(default)s)")
    ap.add_argument("--bf16", action="store_true", help=f"also time {IMPL_BF16} (torch.matmul in bf16)")
    ap.add_argument("--torch-api", choices=["auto", "v2", "v1"], default="auto",
                    help="auto: torch.nn.functional.scaled_mm if present, else/then torch._scaled_mm")
    ap.add_argument("--delay-us", type=float, default=50.0,
                    help="GPU-side delay before the start event, microseconds (default %(default)s)")
    ap.add_argument("--no-delay", action="store_true", help="no GPU-side delay (to show its effect)")
    ap.add_argument("--interleave", action="store_true",
                    help="time a shape's implementations together, one call each per round, the order "
                         "rotating (the C++ harness's default since ba5bcc2); without it one after the other")
    ap.add_argument("--warmup", type=int, default=3, help="warm-up calls after the checked call (default 3)")
    ap.add_argument("--budget-ms", type=float, default=250.0, help="GPU time to fill per shape (default 250)")
    ap.add_argument("--min-reps", type=int, default=10, help="(default 10, as the harness)")
    ap.add_argument("--max-reps", type=int, default=300, help="(default 300, as the harness)")
    ap.add_argument("--flush-bytes", type=int, default=0, help="L2 flush buffer (default 2 x L2, as the harness)")
    ap.add_argument("--cupti-launches", type=int, default=20,
                    help="launches for the CUPTI kernel-time view (0: skip it; default 20)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--commit", default=None, help="git commit to record (default: build/bin/commit.txt)")
    ap.add_argument("--time-limit", type=float, default=0.0,
                    help="seconds after which no new shape is started (0: none); the JSON keeps what ran")
    ap.add_argument("--dg-jobs", type=int, default=min(8, os.cpu_count() or 1),
                    help="processes that compile DeepGEMM's kernels for all shapes before timing "
                         "(its JIT cache is on disk; 0 or 1: compile at each shape's first call; default %(default)s)")
    ap.add_argument("--dg-warm-timeout", type=float, default=420.0, help="seconds for that (default 420)")
    ap.add_argument("--dg-warm-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--max-sms", type=int, default=0,
                    help="SMs the GEMMs may use, as training code leaves the rest to communication "
                         "kernels: fp8gemm.ops.set_max_sms and deep_gemm.set_num_sms (which also "
                         "re-picks DeepGEMM's configuration); torch has no such setting and runs on "
                         "all SMs (the context says so). 0: all (default)")
    ap.add_argument("--dry-run", action="store_true", help="print shapes and method; no torch, no GPU")
    args = ap.parse_args(argv)
    if args.max_sms < 0:
        ap.error("need --max-sms >= 0")
    if args.dg_warm_only:
        return dg_warm_worker(args.shapes or DEFAULT_SHAPES, args.max_sms)

    shapes = args.shapes or DEFAULT_SHAPES
    impls = [i.strip() for i in args.impls.split(",") if i.strip()]
    bad = [i for i in impls if i not in ALL_IMPLS]
    if bad:
        ap.error(f"unknown implementation(s) {bad}; choose from {ALL_IMPLS}")
    if args.bf16 and IMPL_BF16 not in impls:
        impls.append(IMPL_BF16)
    if args.delay_us < 0 or args.min_reps < 1 or args.max_reps < args.min_reps or args.warmup < 0:
        ap.error("need --delay-us >= 0, 1 <= --min-reps <= --max-reps, --warmup >= 0")

    if args.dry_run:
        print(f"implementations: {', '.join(impls)}")
        print(f"shapes ({len(shapes)}): {', '.join(shape_name(s) for s in shapes)}")
        for s in shapes:
            M, N, K = s
            L = ceil_div(K, 128)
            print(f"  {shape_name(s):20s} L = {L:4d}, L4 = {ceil_div(L, 4) * 4:4d}, tolerance {tolerance(K):.2e}, "
                  f"{2.0 * M * N * K / 1e12:8.3f} TFLOP")
        print("method: " + method_text(args))
        print(f"output: {args.out or '(none)'}; commit: {git_commit(args.commit)}")
        return 0
    return run_gpu(args, shapes, impls)


if __name__ == "__main__":
    sys.exit(main())
