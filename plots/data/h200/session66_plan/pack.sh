#!/usr/bin/env bash
# Session 66's pack, at the commit to run (commit first: build/bin/commit.txt is the build's HEAD):
# .gpu/t66TAG.txz (session 65's binaries but test_strided_gpu: test_chapter_08, test_chapter_09_hopper,
# test_chapter_07, test_chapter_08_wgrad, ch08_grouped_moe (not test_chapter_07_splitk); and now
# ch09_hopper_mxfp8 (--float-d), test_library_gpu and test_chapter_06; Google Benchmark's library) and the staged
# PyTorch package .gpu/py66TAG.txz. (The tracked tree is 44 MB of the device call's 64 MiB: this
# pack and the PyTorch package's 6.7 MB leave ~2 MB, so the sweep's pack travels on its own call.)
#   bash plots/data/h200/session66_plan/pack.sh [TAG]
# A later session's pack names its own binaries and archives: BINS="..." SESSION=67 (then
# .gpu/t67TAG.txz and .gpu/py67TAG.txz).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
T=${1:-}
BINS=${BINS:-"test_chapter_06 test_chapter_08 ch08_grouped_moe test_chapter_09_hopper test_chapter_07
      test_chapter_08_wgrad ch09_hopper_mxfp8 test_library_gpu"}
S=${SESSION:-66}
# shellcheck disable=SC2086
cmake --build build -j2 --target $BINS fp8gemm_torch
mkdir -p .gpu
(cd build && tar cf - bin/commit.txt bin/gpu_tests.txt bin/libbenchmark.so.1.7.1 \
   bin/libbenchmark.so.1debian $(for b in $BINS; do echo bin/$b; done) | xz -9 -T2 > ../.gpu/t$S$T.txz)
rm -rf /tmp/py10 && bash chapters/10_production/python/stage.sh build /tmp/py10/py
(cd /tmp/py10 && tar cf - py | xz -6 -T2 > "$OLDPWD/.gpu/py$S$T.txz")
echo "commit $(cat build/bin/commit.txt)"; ls -l .gpu/t$S$T.txz .gpu/py$S$T.txz
