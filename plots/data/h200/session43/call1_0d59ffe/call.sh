#!/usr/bin/env bash
# Session 42's plan, call 1 (run by a later session with a device: session 42 had none):
# every GPU test binary at the commit in .gpu/c6.txz's bin/commit.txt (branch long-cycle, 0d59ffe:
# main at db48841 plus long-cycle's kTwoDeepLongCycleLoop default for block scaling's narrow
# one-slab tiles). Main's session 42 changed host code only (entry-point checks that now refuse
# before any CUDA call, the library's split-K pass-through, the cuBLASLt baseline's memory
# checks); its sm_90a SASS equals a334058's (tools/sass_diff.py: 0 differ), whose binaries passed.
# Session 42 also mended GPU tests that could not fail (NaN expected from a NaN-poisoned D,
# determinism without a first-run check, second runs into buffers not re-poisoned, equal operand
# sets in a rebind test, refusals not checking D). This call is the first GPU run of that host
# code, of those tests, and of long-cycle's kernels. A mended test that now fails is either a
# kernel defect the old test hid or a mistake in the mended test: read which before merging.
# Prediction: every test passes, test_chapter_09_gpu skipped (no sm_100 GPU): "18 passed,
# 0 failed, 1 skipped" (session 39's count); ~500 s (session 39: 504 s).
set -u
source scripts/gpu_call.sh .gpu/c6.txz || exit 1
say "GPU tests, all"
gpu_tests_step '.' 575
tar cJf "$OUT/logs.txz" -C "$OUT" gl 2>/dev/null && rm -rf "$OUT/gl"
say end
cat "$L"
