#!/usr/bin/env bash
# Session 53's pack: at the commit to run, what session 53's calls carry.
#   .gpu/t53.txz   the GPU test binaries (the two with session 53's re-quantising path,
#                  test_mx_gpu and test_chapter_09_hopper, first) and chapter 9's executable
#                  (ch09_hopper_mxfp8, its bench with the new path), Google Benchmark;
#   .gpu/py10.txz  the PyTorch package, as session 50's plan stages it;
#   .gpu/sw49.txz  the dispatch sweep (session 49's plan).
#   cmake --preset default && cmake --build build -j2     (or an up-to-date build/)
#   bash plots/data/h200/session53_plan/pack.sh
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
cmake --build build -j2 --target test_mx_gpu test_chapter_09_hopper ch09_hopper_mxfp8 \
  test_chapter_07 test_chapter_08 test_chapter_08_wgrad quantize_test_gpu test_reliability \
  test_library_gpu fp8gemm_dispatch_sweep
mkdir -p .gpu
(cd build && tar cf - bin/commit.txt bin/gpu_tests.txt bin/libbenchmark.so.1.7.1 \
   bin/libbenchmark.so.1debian bin/test_mx_gpu bin/test_chapter_09_hopper bin/ch09_hopper_mxfp8 \
   bin/test_chapter_07 bin/test_chapter_08 bin/test_chapter_08_wgrad bin/quantize_test_gpu \
   bin/test_reliability bin/test_library_gpu | xz -9 -T2 > ../.gpu/t53.txz)
(cd build && tar cf - bin/commit.txt bin/libbenchmark.so.1.7.1 bin/libbenchmark.so.1debian \
   bin/fp8gemm_dispatch_sweep | xz -6 -T2 > ../.gpu/sw49.txz)
rm -rf /tmp/py10 && bash chapters/10_production/python/stage.sh build /tmp/py10/py
(cd /tmp/py10 && tar cf - py | xz -6 -T2 > "$OLDPWD/.gpu/py10.txz")
echo "commit $(cat build/bin/commit.txt)"; ls -l .gpu/t53.txz .gpu/sw49.txz .gpu/py10.txz
