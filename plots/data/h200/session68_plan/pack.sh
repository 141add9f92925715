#!/usr/bin/env bash
# Session 68's pack for call1.sh: .gpu/t68TAG.txz (session 67's binaries: test_chapter_08,
# ch08_grouped_moe, test_chapter_09_hopper, test_chapter_07, ch07_block_scaling,
# ch09_hopper_mxfp8, test_library_gpu) and .gpu/py68TAG.txz, built from a commit that has both
# patches of this folder applied (the two float D defaults the call measures):
#   git checkout -b f32-defaults && git apply plots/data/h200/session68_plan/*.patch &&
#   git commit -qam "WIP (to measure): ..." && bash plots/data/h200/session68_plan/pack.sh a
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
grep -q "accumulate && tma_store_ok" chapters/07_block_scaling/bs_gemm.cpp ||
  { echo "pack.sh: apply ch07-f32-acc-tma-default.patch first" >&2; exit 1; }
grep -q "kBf16F32Narrow" chapters/09_blackwell_mxfp8/hopper_mx.cpp ||
  { echo "pack.sh: apply ch09-bf16-path-f32-tma-default.patch first" >&2; exit 1; }
BINS="test_chapter_08 ch08_grouped_moe test_chapter_09_hopper test_chapter_07 ch07_block_scaling
      ch09_hopper_mxfp8 test_library_gpu" SESSION=68 \
  exec bash plots/data/h200/session66_plan/pack.sh "$@"
