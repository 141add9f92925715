"""gemm_block_scaled against PyTorch's own block-scaled GEMM (cuBLASLt underneath) on the same
quantised operands: torch.nn.functional.scaled_mm with ScalingType.BlockWise1x128 /
BlockWise128x128 (torch 2.10+), else torch._scaled_mm with [M, K/128] and [K/128, N/128] scales
(only when ceil(K/128) % 4 == 0: with other K it is silently wrong on the H200; the shared FACTS
and bench/peers.py have the layouts). Both are checked against the float64 reference too, so a
disagreement says which side is wrong. Skipped without an sm_90a GPU or without either API."""

import torch

from _testlib import make_bf16, parametrize, rel_error, require_gpu, skip, tolerance
from fp8gemm import ops


def _torch_blockwise(qa, sa, qb, sb):
    """torch's block-scaled GEMM of A [M, K] (1 x 128) and B [N, K] (128 x 128), bf16 D, or None
    with the reason when this torch cannot express it."""
    F = torch.nn.functional
    K = qa.shape[1]
    L = (K + 127) // 128
    L4 = (L + 3) // 4 * 4
    scale_a = sa.t().contiguous().t()  # [M, L], strides (1, M)
    ST = getattr(F, "ScalingType", None)
    SW = getattr(F, "SwizzleType", None)
    fn = getattr(F, "scaled_mm", None)
    if fn is not None and ST is not None and hasattr(ST, "BlockWise1x128"):
        sbp = torch.zeros(sb.shape[0], L4, dtype=torch.float32, device=sb.device)
        sbp[:, :L] = sb
        kw = {"swizzle_a": SW.NO_SWIZZLE, "swizzle_b": SW.NO_SWIZZLE} if SW is not None else {}
        return fn(qa, qb.t(), scale_a, ST.BlockWise1x128, sbp.t(), ST.BlockWise128x128,
                  output_dtype=torch.bfloat16, **kw), "torch.nn.functional.scaled_mm"
    if L % 4 != 0:
        return None, "torch._scaled_mm cannot express ceil(K/128) % 4 != 0 block scales"
    return (torch._scaled_mm(qa, qb.t(), scale_a=scale_a, scale_b=sb.contiguous().t(),
                             out_dtype=torch.bfloat16), "torch._scaled_mm")


def _torch_refuses(N, K):
    """Why torch's scaled_mm refuses an [M, K] x [K, N] product whatever the scales (None if it
    takes it): both dimensions of mat2 (B^T, K x N) must be multiples of 16 (its check on the
    H200, torch 2.11: "mat2 shape (640x264) must be divisible by 16"). fp8gemm takes any N
    (test_ops_gpu.py covers N = 264 against float64)."""
    if N % 16 or K % 16:
        return (f"torch's scaled_mm takes only mat2 = B^T with both dimensions multiples of 16; "
                f"here {K} x {N}: nothing to compare against (fp8gemm's own result at such N is "
                "checked against float64 in test_ops_gpu.py)")
    return None


# M = 200 and N = 264 / 272 are not multiples of the 128-tiles: partial tiles on both sides. torch
# refuses N = 264 (not a multiple of 16); N = 272 keeps a partial-tile shape it accepts.
@parametrize("M,N,K", [(256, 512, 1024), (200, 264, 640), (200, 272, 640), (4096, 2112, 7168),
                       (128, 7168, 2048)])
def test_against_torch_scaled_mm(M, N, K):
    require_gpu()
    reason = _torch_refuses(N, K)
    if reason:
        skip(reason)
    gen = torch.Generator(device="cuda").manual_seed(M + N + K)
    qa, sa = ops.quantize_1x128(make_bf16((M, K), gen))
    qb, sb = ops.quantize_128x128(make_bf16((N, K), gen))
    try:
        dt, api = _torch_blockwise(qa, sa, qb, sb)
    except (RuntimeError, NotImplementedError, TypeError, ValueError) as e:
        # torch's own refusal of this shape or recipe (ValueError: its shape checks).
        skip(f"torch {torch.__version__} refused the block-scaled call at {M}x{N}x{K}: {e}")
    if dt is None:
        skip(api)
    d = ops.gemm_block_scaled(qa, sa, qb, sb)
    ref = ops.dequantize_1x128(qa, sa).double() @ ops.dequantize_128x128(qb, sb).double().t()
    e_ours, e_torch, e_pair = rel_error(d, ref), rel_error(dt, ref), rel_error(d, dt)
    print(f"{M}x{N}x{K} ({api}): ours {e_ours:.2e}, torch {e_torch:.2e}, ours vs torch {e_pair:.2e}")
    assert e_ours <= tolerance(K)
    assert e_torch <= tolerance(K), f"torch's {api} is off the reference: {e_torch}"
    assert e_pair <= 2 * tolerance(K)
