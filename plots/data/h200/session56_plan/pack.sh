#!/usr/bin/env bash
# Session 56's pack, at the commit to run (.gpu/t56.txz): test_chapter_08_wgrad (session 55's last
# checking-mode cases), chapter 9's executable and the GPU tests session 54's pack carries
# (test_mx_gpu, test_chapter_09_hopper, test_library_gpu, quantize_bench), Google Benchmark; and the
# staged PyTorch package (.gpu/py56.txz).
#   cmake --preset default && cmake --build build -j2     (or an up-to-date build/)
#   bash plots/data/h200/session56_plan/pack.sh
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
cmake --build build -j2 --target test_chapter_08_wgrad test_mx_gpu test_chapter_09_hopper \
  test_library_gpu ch09_hopper_mxfp8 quantize_bench fp8gemm_torch
mkdir -p .gpu
(cd build && tar cf - bin/commit.txt bin/gpu_tests.txt bin/libbenchmark.so.1.7.1 \
   bin/libbenchmark.so.1debian bin/test_chapter_08_wgrad bin/test_mx_gpu bin/test_chapter_09_hopper \
   bin/test_library_gpu bin/ch09_hopper_mxfp8 bin/quantize_bench | xz -9 -T2 > ../.gpu/t56.txz)
rm -rf /tmp/py10 && bash chapters/10_production/python/stage.sh build /tmp/py10/py
(cd /tmp/py10 && tar cf - py | xz -6 -T2 > "$OLDPWD/.gpu/py56.txz")
echo "commit $(cat build/bin/commit.txt)"; ls -l .gpu/t56.txz .gpu/py56.txz
