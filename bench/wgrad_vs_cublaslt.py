#!/usr/bin/env python3
"""One dense weight gradient, dW [N, K] float32 = dY^T . X over T tokens, both operands in 1 x 128
groups along the tokens (DeepSeek-V3's wgrad recipe), by fp8gemm's k-grouped kernel (one group)
and by cuBLASLt through torch._scaled_mm (BlockWise1x128 x BlockWise1x128, float32 out): checked
against each other, then timed (L2 flushed, CUDA events, median), so that ncu can profile one
launch of each (run it under ncu with --kernel-name for the side wanted).

    PYTHONPATH=<staged fp8gemm> python3 bench/wgrad_vs_cublaslt.py [--n 4096 --k 7168 --t 2048]
        [--kernels NAME,...] [--only ours|cublaslt|ours:NAME] [--reps 20]

--kernels adds sides "ours:NAME": the named compiled weight-gradient kernels (FP32 dW ones, names
with _f32) on the same operands, beside the plan's default ("ours").
"""
import argparse
import statistics

import torch

from fp8gemm import ops


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--k", type=int, default=7168)
    ap.add_argument("--t", type=int, default=2048, help="tokens (a multiple of 128)")
    ap.add_argument("--kernels", default="",
                    help="comma-separated compiled kernels (FP32 dW) to time beside the default")
    ap.add_argument("--only", default=None, help="one side: ours, cublaslt or ours:NAME")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--list-kernels", action="store_true",
                    help="print the names of the kernels each side launches (torch.profiler)")
    a = ap.parse_args()
    N, K, T = a.n, a.k, a.t
    g = torch.Generator(device="cuda").manual_seed(1)
    dy = torch.randn(T, N, generator=g, device="cuda").to(torch.bfloat16)
    x = torch.randn(T, K, generator=g, device="cuda").to(torch.bfloat16)
    off = ops.dense_offsets(T, "cuda")
    # dY^T [N, T] and X^T [K, T] e4m3, scales [N, T/128] / [K, T/128] with strides (1, N) / (1, K)
    q_dyt, s_dyt, _ = ops.quantize_tokens_transposed_1x128(dy, off)
    q_xt, s_xt, _ = ops.quantize_tokens_transposed_1x128(x, off)
    ours_out = torch.full((1, N, K), float("nan"), device="cuda")
    cub_out = torch.full((N, K), float("nan"), device="cuda")

    def ours():
        ops.gemm_weight_grad(q_dyt, s_dyt, q_xt, s_xt, off, out=ours_out)

    def cublaslt():
        # a = dY^T row-major [N, T]; b = X^T^T = [T, K] column-major; scale_a [N, T/128]
        # (strides (1, N)), scale_b [T/128, K] contiguous
        torch._scaled_mm(q_dyt, q_xt.t(), scale_a=s_dyt, scale_b=s_xt.t(),
                         out_dtype=torch.float32, out=cub_out)

    sides = [("ours", ours)]
    for kname in filter(None, a.kernels.split(",")):
        sides.append((f"ours:{kname}", lambda n=kname: torch.ops.fp8gemm._gemm_weight_grad_kernel(
            q_dyt, s_dyt, q_xt, s_xt, off, n)))
    sides.append(("cublaslt", cublaslt))
    if a.only and a.only not in dict(sides):
        print(f"--only {a.only}: no such side ({', '.join(n for n, _ in sides)})")
        return 2
    ours()
    cublaslt()
    torch.cuda.synchronize()
    diff = ((ours_out[0] - cub_out).norm() / cub_out.norm()).item()
    print(f"N {N} K {K} T {T}: ours vs cuBLASLt relative difference {diff:.2e}")
    if not diff <= 1e-5:
        print("the two results differ: not timed")
        return 1
    for name, fn in sides[1:-1]:
        # Under ncu (--launch-skip 1 --only NAME) the second k-grouped launch must be NAME's.
        if a.only and name != a.only:
            continue
        got = fn()
        torch.cuda.synchronize()
        d = ((got.reshape(N, K).float() - cub_out).norm() / cub_out.norm()).item()
        print(f"{name} vs cuBLASLt relative difference {d:.2e}")
        if not d <= 1e-5:
            print("the two results differ: not timed")
            return 1
    if a.list_kernels:
        for name, fn in sides:
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                fn()
                torch.cuda.synchronize()
            names = sorted({ev.name for ev in prof.events()
                            if ev.device_type == torch.autograd.DeviceType.CUDA})
            print(f"{name} launches: " + " | ".join(names))
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    for name, fn in sides:
        if a.only and name != a.only:
            continue
        ts = []
        for _ in range(a.reps):
            flush.zero_()
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda._sleep(100_000)
            s.record()
            fn()
            e.record()
            e.synchronize()
            ts.append(s.elapsed_time(e))
        ms = statistics.median(ts)
        print(f"{name}: median {ms * 1e3:.1f} us, {2 * N * K * T / (ms * 1e-3) / 1e12:.0f} TFLOPS "
              f"({a.reps} launches)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
