#!/usr/bin/env bash
# Session 57's first pack, at the commit to run: .gpu/t57a.txz (the GPU tests call1.sh runs) and
# .gpu/py57a.txz (the staged PyTorch package).
#   cmake --preset default && cmake --build build -j2     (or an up-to-date build/)
#   bash plots/data/h200/session57_plan/pack1.sh
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
T="test_strided_gpu test_chapter_06 test_library_gpu test_reliability test_chapter_05"
cmake --build build -j2 --target $T fp8gemm_torch
mkdir -p .gpu
(cd build && tar cf - bin/commit.txt bin/gpu_tests.txt bin/libbenchmark.so.1.7.1 \
   bin/libbenchmark.so.1debian $(for t in $T; do echo bin/$t; done) | xz -9 -T2 > ../.gpu/t57a.txz)
rm -rf /tmp/py10 && bash chapters/10_production/python/stage.sh build /tmp/py10/py
(cd /tmp/py10 && tar cf - py | xz -6 -T2 > "$OLDPWD/.gpu/py57a.txz")
echo "commit $(cat build/bin/commit.txt)"; ls -l .gpu/t57a.txz .gpu/py57a.txz
