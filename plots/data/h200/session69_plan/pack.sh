#!/usr/bin/env bash
# Session 69's pack for call1.sh: .gpu/t69TAG.txz (session 68's binaries: test_chapter_08,
# ch08_grouped_moe, test_chapter_09_hopper, test_chapter_07, ch07_block_scaling, ch09_hopper_mxfp8,
# test_library_gpu) and .gpu/py69TAG.txz, built from a commit with both session68_plan patches
# applied (call 1 ran it at e186dc5 with chapter 8's grouped FP32 TMA kernel in 1 x 2 clusters,
# since dropped). BINS="..." names fewer binaries (call2.sh's):
#   git checkout -b f32-defaults && git apply plots/data/h200/session68_plan/*.patch &&
#   git commit -qam "WIP (to measure): ..." && bash plots/data/h200/session69_plan/pack.sh a
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
grep -q "accumulate && tma_store_ok" chapters/07_block_scaling/bs_gemm.cpp ||
  { echo "pack.sh: apply session68_plan/ch07-f32-acc-tma-default.patch first" >&2; exit 1; }
grep -q "kBf16F32Narrow" chapters/09_blackwell_mxfp8/hopper_mx.cpp ||
  { echo "pack.sh: apply session68_plan/ch09-bf16-path-f32-tma-default.patch first" >&2; exit 1; }
BINS=${BINS:-"test_chapter_08 ch08_grouped_moe test_chapter_09_hopper test_chapter_07 ch07_block_scaling
      ch09_hopper_mxfp8 test_library_gpu"} SESSION=69 \
  exec bash plots/data/h200/session66_plan/pack.sh "$@"
