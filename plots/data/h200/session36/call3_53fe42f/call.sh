#!/usr/bin/env bash
# Session 36, call 3: binaries .gpu/c.txz of the commit in bin/commit.txt (53fe42f: the code of
# 79ef248). The GPU tests that no call has run since session 31 (d00cfce), while the engine's
# kernel.cuh, plan.hpp, params.hpp and kernel_info.cuh changed under them (e9e93ec: idle
# warpgroups of grouped tiles; 59dc5ea, 15e58a2: the counter schedule): chapters 1-7 and 9
# (Hopper), the weight gradient, common, MX, reliability, split-K. Call 1 ran the rest
# (test_chapter_08, _08_e2e, test_library_gpu, test_library_threads_gpu, quantize_test_gpu) at
# abe5a85, whose non-quantiser code is this commit's.
# Predicted: "13 passed, 0 failed, 1 skipped" (test_chapter_09_gpu skips: no sm_100a code in the
# default preset), in about 350-450 s.
set -u
source scripts/gpu_call.sh .gpu/c.txz || exit 1
C7=${C:0:7}
say "GPU tests"
BIN=$B STEPS=tests ONLY='^(test_chapter_05|test_chapter_06|test_chapter_07|test_chapter_08_wgrad|test_chapter_09_gpu|test_chapter_09_hopper|test_chapters_01_04|common_test_gpu|common_test_cublaslt|common_test_bench_harness|test_mx_gpu|test_reliability|test_reliability_threads|test_chapter_07_splitk)$' \
  TIMEOUT=540 timeout 560 bash scripts/gpu_loop.sh "$OUT/gl" > /dev/null 2>&1; echo "gpu_loop rc=$?" >> "$L"
cp "$OUT/gl/summary.txt" "$OUT/gpu_tests_$C7.txt" 2>/dev/null
grep -E "PASS|FAIL|SKIP" "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
tail -1 "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
tar cJf "$OUT/gl.txz" -C "$OUT" gl && rm -rf "$OUT/gl"
say end
cat "$L"
