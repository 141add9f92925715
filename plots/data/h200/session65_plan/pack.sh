#!/usr/bin/env bash
# Session 65's pack for call1.sh, at the commit to run (commit first: build/bin/commit.txt is the
# build's HEAD): .gpu/t65TAG.txz (test_chapter_08, test_chapter_09_hopper, test_strided_gpu,
# test_chapter_07, test_chapter_07_splitk, test_chapter_08_wgrad, ch08_grouped_moe, Google Benchmark's library) and the staged PyTorch package .gpu/py65TAG.txz.
#   bash plots/data/h200/session65_plan/pack.sh [TAG]
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
T=${1:-}
cmake --build build -j2 --target test_chapter_08 test_strided_gpu ch08_grouped_moe \
  test_chapter_09_hopper test_chapter_08_args test_chapter_07 test_chapter_07_splitk test_chapter_08_wgrad fp8gemm_torch
mkdir -p .gpu
(cd build && tar cf - bin/commit.txt bin/gpu_tests.txt bin/libbenchmark.so.1.7.1 \
   bin/libbenchmark.so.1debian bin/test_chapter_08 bin/test_strided_gpu bin/ch08_grouped_moe \
   bin/test_chapter_09_hopper bin/test_chapter_07 bin/test_chapter_07_splitk bin/test_chapter_08_wgrad \
   | xz -9 -T2 > ../.gpu/t65$T.txz)
rm -rf /tmp/py10 && bash chapters/10_production/python/stage.sh build /tmp/py10/py
(cd /tmp/py10 && tar cf - py | xz -6 -T2 > "$OLDPWD/.gpu/py65$T.txz")
echo "commit $(cat build/bin/commit.txt)"; ls -l .gpu/t65$T.txz .gpu/py65$T.txz
