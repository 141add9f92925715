#!/usr/bin/env bash
# Session 60's second call (carry .gpu/t60b.txz .gpu/py60b.txz from `pack.sh b` at 04fe052 or
# later), any Hopper GPU, about 330 s: call1.sh's steps with the FP32 rule that call 1's timings
# gave (04fe052), without the ncu step, timing the defaults against torch at every M:
#  1. test_library_gpu and test_strided_gpu (the strided test now compares kernel names only where
#     both D go by TMA): predicted "2 passed".
#  2. bench_torch.py --only per_tensor,per_tensor_f32_kernels: predicted, each default within 2 %
#     of call 1's fastest by name at M = 4096: promoted 0.91-1.02x torch's float32 D (4096 x 2112
#     x 7168 about 1.00x on 128 x 192 by TMA, 4096 x 7168 x 16384 about 0.95x from registers),
#     fast 0.89-1.14x (the ping-pong at K = 1536 and 2048); M = 64 and 128 unchanged (0.91-1.03x,
#     session 58); the bf16 rows unchanged.
#  3. The PyTorch tests: "132 passed, 2 skipped".
PACK=b ONLY=per_tensor,per_tensor_f32_kernels NCU=0 CH09=${CH09:-1} PLAN=${PLAN:-560} \
  exec bash plots/data/h200/session60_plan/call1.sh
