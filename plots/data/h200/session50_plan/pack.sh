#!/usr/bin/env bash
# Session 50's plan: packs, on the CPU machine at the commit to run, what tests_call.sh carries:
# the seven GPU test binaries whose code changed since the H200 last ran them, the dispatch sweep
# (for session 49's plan, which carries .gpu/sw49.txz; this packs that too) and Google Benchmark.
#   cmake --preset default && cmake --build build -j2     (or an up-to-date build/)
#   bash plots/data/h200/session50_plan/pack.sh
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
cmake --build build -j2 --target test_chapter_07 test_chapter_09_hopper test_chapter_08 \
  test_chapter_08_wgrad quantize_test_gpu test_reliability test_library_gpu fp8gemm_dispatch_sweep
mkdir -p .gpu
(cd build && tar cf - bin/commit.txt bin/gpu_tests.txt bin/libbenchmark.so.1.7.1 \
   bin/libbenchmark.so.1debian bin/test_chapter_07 bin/test_chapter_09_hopper bin/test_chapter_08 \
   bin/test_chapter_08_wgrad bin/quantize_test_gpu bin/test_reliability bin/test_library_gpu | xz -9 -T2 > ../.gpu/t50.txz)
(cd build && tar cf - bin/commit.txt bin/libbenchmark.so.1.7.1 bin/libbenchmark.so.1debian \
   bin/fp8gemm_dispatch_sweep | xz -6 -T2 > ../.gpu/sw49.txz)
# The PyTorch package at the same commit (its ops changed in session 50: every check before a scale
# copy), staged as session 46's plan does (the build must have found torch: FP8GEMM_TORCH_PYTHON).
rm -rf /tmp/py10 && bash chapters/10_production/python/stage.sh build /tmp/py10/py
(cd /tmp/py10 && tar cf - py | xz -6 -T2 > "$OLDPWD/.gpu/py10.txz")
echo "commit $(cat build/bin/commit.txt)"; ls -l .gpu/t50.txz .gpu/sw49.txz .gpu/py10.txz
