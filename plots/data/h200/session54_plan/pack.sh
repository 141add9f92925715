#!/usr/bin/env bash
# Session 54's pack: at the commit to run, the binaries session 54's re-quantiser calls carry
# (.gpu/t54.txz): test_mx_gpu (every requant_tuning variant byte for byte), test_chapter_09_hopper
# and test_library_gpu (the path through the plans), chapter 9's executable (its bench: the three
# Hopper paths) and quantize_bench (the re-quantiser's variants against a copy), Google Benchmark.
#   cmake --preset default && cmake --build build -j2     (or an up-to-date build/)
#   bash plots/data/h200/session54_plan/pack.sh
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
cmake --build build -j2 --target test_mx_gpu test_chapter_09_hopper test_library_gpu \
  ch09_hopper_mxfp8 quantize_bench
mkdir -p .gpu
(cd build && tar cf - bin/commit.txt bin/gpu_tests.txt bin/libbenchmark.so.1.7.1 \
   bin/libbenchmark.so.1debian bin/test_mx_gpu bin/test_chapter_09_hopper bin/test_library_gpu \
   bin/ch09_hopper_mxfp8 bin/quantize_bench | xz -9 -T2 > ../.gpu/t54.txz)
echo "commit $(cat build/bin/commit.txt)"; ls -l .gpu/t54.txz
