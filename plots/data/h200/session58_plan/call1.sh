#!/usr/bin/env bash
# Session 58's first call (carry .gpu/t57c.txz .gpu/py57c.txz .gpu/t56.txz; packs of 5875716 by
# session57_plan/call3.sh's header, and session56_plan/pack.sh's t56 of 99de62d, whose chapter 9
# kernels are HEAD's: only host-side checks changed since). Any Hopper GPU:
#  1. session 57's call 3, never run: test_chapter_08's counter case and the PyTorch tests after
#     the review's refactor (validate_disjoint_from_operands; nn.py's _made_here). Predicted: pass,
#     PyTorch "131 passed, 2 skipped".
#  2. On an H200 only: session56_plan/call4.sh's chapter 9 tables (predictions in its header).
# About 60 s on an H100, 360 s on an H200.
set -u
source scripts/gpu_call.sh .gpu/t57c.txz .gpu/py57c.txz || exit 1
say "test_chapter_08: the counter schedule case"
timeout 90 "$B/test_chapter_08" "ch08: the counter schedule with the caller's counters on two streams at once" \
  > "$OUT/ch08_counter.log" 2>&1; echo "test_chapter_08 (counter case) rc=$?" >> "$L"
tail -2 "$OUT/ch08_counter.log" >> "$L"
say "PyTorch tests"
torch_tests_step 120
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  OUT2=$OUT bash plots/data/h200/session56_plan/call4.sh > "$OUT/call4_stdout.txt" 2>&1
else
  say "not an H200: chapter 9's tables not run"
fi
say end
cat "$L"
