#!/usr/bin/env bash
# Session 67's pack, at the commit to run (commit first: build/bin/commit.txt is the build's
# HEAD): .gpu/t67TAG.txz (test_chapter_08, ch08_grouped_moe, test_chapter_09_hopper,
# test_chapter_07, ch07_block_scaling (its --float-d), ch09_hopper_mxfp8 (--float-d),
# test_library_gpu; Google Benchmark's library) and the staged PyTorch package .gpu/py67TAG.txz.
# (The tracked tree is 44 MB of the device call's 64 MiB: session 66's pack without
# test_chapter_06 and test_chapter_08_wgrad, so that ch07_block_scaling fits beside the package.)
#   bash plots/data/h200/session67_plan/pack.sh [TAG]
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
BINS="test_chapter_08 ch08_grouped_moe test_chapter_09_hopper test_chapter_07 ch07_block_scaling
      ch09_hopper_mxfp8 test_library_gpu" SESSION=67 \
  exec bash plots/data/h200/session66_plan/pack.sh "$@"
