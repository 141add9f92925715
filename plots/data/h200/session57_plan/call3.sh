#!/usr/bin/env bash
# Session 57's third call (carry .gpu/t57c.txz and .gpu/py57c.txz, packed at the commit to run:
#   cmake --build build -j2 --target test_chapter_08 fp8gemm_torch
#   (cd build && tar cf - bin/commit.txt bin/gpu_tests.txt bin/test_chapter_08 | xz -9 -T2 > ../.gpu/t57c.txz)
#   rm -rf /tmp/py10 && bash chapters/10_production/python/stage.sh build /tmp/py10/py
#   (cd /tmp/py10 && tar cf - py | xz -6 -T2 > "$OLDPWD/.gpu/py57c.txz")
# ), any Hopper GPU, about 45 s: after the review's refactor (the tile counter's overlap checks
# through validate_disjoint_from_operands; nn.py's _made_here), test_chapter_08's counter case
# and the PyTorch tests. Predicted: pass.
set -u
source scripts/gpu_call.sh .gpu/t57c.txz .gpu/py57c.txz || exit 1
say "test_chapter_08: the counter schedule case"
timeout 90 "$B/test_chapter_08" "ch08: the counter schedule with the caller's counters on two streams at once" \
  > "$OUT/ch08_counter.log" 2>&1; echo "test_chapter_08 (counter case) rc=$?" >> "$L"
tail -2 "$OUT/ch08_counter.log" >> "$L"
say "PyTorch tests"
torch_tests_step 120
say end
cat "$L"
