"""Launches one per-tensor FP32 kernel by name four times (for ncu: call4.sh profiles the third),
D = A.B in float32 at M x N x K, promoted or fast accumulation as the name says:
    PYTHONPATH=STAGED python3 run_f32_kernel.py KERNEL M N K"""
import sys

import torch

from fp8gemm import ops

name = sys.argv[1]
M, N, K = (int(x) for x in sys.argv[2:5])
g = torch.Generator(device="cuda").manual_seed(M + N + K)
qa, sa = ops.quantize_per_tensor(torch.randn(M, K, generator=g, device="cuda"))
qb, sb = ops.quantize_per_tensor(torch.randn(N, K, generator=g, device="cuda"))
out = torch.empty(M, N, device="cuda")
for _ in range(4):
    torch.ops.fp8gemm._gemm_per_tensor_kernel(qa, qb, sa, sb, out, False, "_fast_" in name, name)
torch.cuda.synchronize()
print(name, M, N, K, "ok")
