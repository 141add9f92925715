#!/usr/bin/env bash
# Session 64's pack for call4.sh, at the commit to run (commit first): .gpu/t64b.txz
# (test_chapter_09_hopper, test_library_gpu) and the staged PyTorch package .gpu/py64b.txz.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
cmake --build build -j2 --target test_chapter_09_hopper test_library_gpu fp8gemm_torch
mkdir -p .gpu
(cd build && tar cf - bin/commit.txt bin/gpu_tests.txt bin/test_chapter_09_hopper \
   bin/test_library_gpu | xz -9 -T2 > ../.gpu/t64b.txz)
rm -rf /tmp/py10 && bash chapters/10_production/python/stage.sh build /tmp/py10/py
(cd /tmp/py10 && tar cf - py | xz -6 -T2 > "$OLDPWD/.gpu/py64b.txz")
echo "commit $(cat build/bin/commit.txt)"; ls -l .gpu/t64b.txz .gpu/py64b.txz
