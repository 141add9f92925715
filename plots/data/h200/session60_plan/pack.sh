#!/usr/bin/env bash
# Session 60's pack for call1.sh (TAG a, the default), call2.sh (TAG b) and call3.sh (TAG c), at the commit to run
# (commit first: build/bin/commit.txt is the build's HEAD): .gpu/t60TAG.txz (test_library_gpu,
# test_strided_gpu, and for an H200 chapter 9's executable with Google Benchmark) and the staged
# PyTorch package .gpu/py60TAG.txz.
#   cmake --preset default && cmake --build build -j2     (or an up-to-date build/)
#   bash plots/data/h200/session60_plan/pack.sh [TAG]
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
T=${1:-a}
cmake --build build -j2 --target test_library_gpu test_strided_gpu ch09_hopper_mxfp8 fp8gemm_torch
mkdir -p .gpu
(cd build && tar cf - bin/commit.txt bin/gpu_tests.txt bin/libbenchmark.so.1.7.1 \
   bin/libbenchmark.so.1debian bin/test_library_gpu bin/test_strided_gpu bin/ch09_hopper_mxfp8 \
   | xz -9 -T2 > ../.gpu/t60$T.txz)
rm -rf /tmp/py10 && bash chapters/10_production/python/stage.sh build /tmp/py10/py
(cd /tmp/py10 && tar cf - py | xz -6 -T2 > "$OLDPWD/.gpu/py60$T.txz")
echo "commit $(cat build/bin/commit.txt)"; ls -l .gpu/t60$T.txz .gpu/py60$T.txz
