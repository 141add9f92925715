#!/usr/bin/env bash
# Session 55's pack, at the commit to run: .gpu/t55.txz (test_chapter_08, test_chapter_08_wgrad,
# test_chapter_09_hopper, test_library_gpu, chapter 9's executable, Google Benchmark) and the staged
# PyTorch package .gpu/py55b.txz. call2.sh also carries .gpu/t54.txz of 63f1a9d (the A/B's old side).
#   cmake --preset default -DFP8GEMM_TORCH_PYTHON=$PWD/.venv-torch/bin/python && cmake --build build -j2
#   bash plots/data/h200/session55_plan/pack.sh
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
cmake --build build -j2 --target test_chapter_08 test_chapter_08_wgrad test_chapter_09_hopper \
  test_library_gpu ch09_hopper_mxfp8 fp8gemm_torch
mkdir -p .gpu
(cd build && tar cf - bin/commit.txt bin/gpu_tests.txt bin/libbenchmark.so.1.7.1 \
   bin/libbenchmark.so.1debian bin/test_chapter_08 bin/test_chapter_08_wgrad \
   bin/test_chapter_09_hopper bin/test_library_gpu bin/ch09_hopper_mxfp8 | xz -9 -T2 > ../.gpu/t55.txz)
rm -rf /tmp/py10 && bash chapters/10_production/python/stage.sh build /tmp/py10/py
(cd /tmp/py10 && tar cf - py | xz -6 -T2 > "$OLDPWD/.gpu/py55b.txz")
echo "commit $(cat build/bin/commit.txt)"; ls -l .gpu/t55.txz .gpu/py55b.txz
