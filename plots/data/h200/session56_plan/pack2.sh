#!/usr/bin/env bash
# Session 56's second pack, at the commit to run (.gpu/t56b.txz, .gpu/py56b.txz): the GPU tests
# the device check touches (every plan's run()), the library bench, Google Benchmark; the staged
# PyTorch package; and, as bin/fp8gemm_library_bench_old, the library bench built before the
# device check (copied from the build before it was rebuilt: OLD=path, default
# /tmp/oldbin/fp8gemm_library_bench).
#   bash plots/data/h200/session56_plan/pack2.sh
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
OLD=${OLD:-/tmp/oldbin/fp8gemm_library_bench}
cmake --build build -j2 --target test_library_gpu test_library_threads_gpu test_reliability \
  test_reliability_threads test_chapter_09_hopper test_chapter_08_wgrad test_chapter_08_e2e \
  fp8gemm_library_bench fp8gemm_torch
mkdir -p .gpu
cp "$OLD" build/bin/fp8gemm_library_bench_old
(cd build && tar cf - bin/commit.txt bin/gpu_tests.txt bin/libbenchmark.so.1.7.1 \
   bin/libbenchmark.so.1debian bin/test_library_gpu bin/test_library_threads_gpu \
   bin/test_reliability bin/test_reliability_threads bin/test_chapter_09_hopper \
   bin/test_chapter_08_wgrad bin/test_chapter_08_e2e bin/fp8gemm_library_bench \
   bin/fp8gemm_library_bench_old | xz -9 -T2 > ../.gpu/t56b.txz)
rm -f build/bin/fp8gemm_library_bench_old
rm -rf /tmp/py10 && bash chapters/10_production/python/stage.sh build /tmp/py10/py
(cd /tmp/py10 && tar cf - py | xz -6 -T2 > "$OLDPWD/.gpu/py56b.txz")
echo "commit $(cat build/bin/commit.txt)"; ls -l .gpu/t56b.txz .gpu/py56b.txz
