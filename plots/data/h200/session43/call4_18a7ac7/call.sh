#!/usr/bin/env bash
# Session 43, call 4: main's binaries at 18a7ac7 and the PyTorch package staged at 5ed74e6 (18a7ac7's
# _C.so; 5ed74e6 changed only the Python tests: Fp8GroupedExperts' dX / dW against float64, the
# plan-cache, threads and streams tests' references against float64) (.gpu/c8.txz, .gpu/py8.txz;
# main = long-cycle merged onto c8d3eb7's host-code mend + chapter 9's mended NaN / determinism
# tests) and DeepGEMM 2.6.1 (.peer).
#  1. The GPU tests whose code changed since 0d59ffe's binaries passed in calls 1-2 (host code of
#     c8d3eb7: validate_gemm's ld rule, the quantisers' extents, scale_extent, wgrad's bounds,
#     unit_grid; chapter 9's Hopper tests mended in 74fb635, the library threads test's case (a)
#     in 18a7ac7: each thread its own B scales x 2^t): test_chapter_09_hopper,
#     test_reliability, test_library_gpu, test_library_threads_gpu, test_chapter_07,
#     quantize_test_gpu (test_chapter_08_wgrad left out: two refused device starts cost 180 s of
#     the budget, and the plan was cut from 585 to 540 s). Their sm_90a kernels are 0d59ffe's.
#     Prediction: all pass (6 of 6). test_chapter_09_hopper's NaN checks now start from a finite D.
#  2. fp8gemm_dispatch_sweep, every family (the sweep the library's table is learned from; the
#     committed one is session 26's, 945b0eb; since then the producer warp (session 38) and the
#     cycle loop on long tiles (this session) changed every kernel's code). Prediction: at the
#     M = 4096 shapes and 8192^3 the block-scaled picks stay; at M <= 128 at most 3 of 12 picks
#     move, each by <= 3 %; per-tensor picks mostly stay.
#  3. The PyTorch tests (prediction: 106 passed, 2 skipped; the mended ones pass), DeepGEMM's build, then the op against
#     DeepGEMM, interleaved, 50 us delay, on 8192^3, the six M = 4096 shapes and the twelve
#     M <= 128: run A with the library's table as committed, run B with FP8GEMM_KERNEL_BLOCK_SCALED
#     set to the new sweep's block-scaled picks (picks.py; what a regenerated table would run).
#     Prediction: B / A at M <= 128 within 0.99-1.00x of A's time geomean (small moves), level at
#     the large shapes; A against DeepGEMM ~0.99x at M <= 128 (call 3: 0.993x), ~0.97-0.98x at
#     the large ones (session 27: 0.973-0.978x).
set -u
source scripts/gpu_call.sh .gpu/c8.txz .gpu/py8.txz || exit 1
H=plots/data/h200/session43/call4_18a7ac7
say "GPU tests"
gpu_tests_step '^(test_chapter_09_hopper|test_reliability|test_library_gpu|test_library_threads_gpu|test_chapter_07|quantize_test_gpu)$' 280
LEFT=$(seconds_left 540)
say "dispatch sweep ($LEFT s left)"
timeout 120 "$B/fp8gemm_dispatch_sweep" --json="$OUT/dispatch_sweep_${C:0:7}.json" > "$OUT/sweep.log" 2>&1
echo "sweep rc=$?" >> "$L"
python3 $H/picks.py "$OUT/dispatch_sweep_${C:0:7}.json" $H/table_block_scaled.txt \
  > "$OUT/picks.txt" 2>> "$L"
LEFT=$(seconds_left 540)
say "PyTorch tests ($LEFT s left)"
mkdir -p "$OUT/p"
timeout 60 bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" tests \
  > "$OUT/p/gpu_run.log" 2>&1; echo "gpu_run rc=$?" >> "$L"
tail -1 "$OUT/torch/tests.log" >> "$L" 2>/dev/null
grep -E "FAILED|Error" "$OUT/torch/tests.log" | head -5 >> "$L" 2>/dev/null
LEFT=$(seconds_left 540)
say "DeepGEMM build ($LEFT s left)"
timeout 100 bash .peer/build_deepgemm.sh > "$OUT/p/deepgemm_build.log" 2>&1; echo "build rc=$?" >> "$L"
eval "$(grep '^export PYTHONPATH=' "$OUT/p/deepgemm_build.log" | tail -n 1)"
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}/tmp/py
SH="8192x8192x8192,4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048"
SH="$SH,64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048"
SH="$SH,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048"
for run in A B; do
  LEFT=$(seconds_left 540)
  [ "$LEFT" -lt 45 ] && { say "peers $run skipped: $LEFT s left"; continue; }
  [ "$run" = A ] && LIM=$(((LEFT - 20) / 2)) || LIM=$((LEFT - 20))
  say "peers $run, interleaved, delay 50 us ($LEFT s left, limit $LIM s)"
  if [ "$run" = B ]; then export FP8GEMM_KERNEL_BLOCK_SCALED=$(cat "$OUT/picks.txt"); fi
  timeout $LIM python3 bench/peers.py --interleave --shapes "$SH" \
    --impls fp8gemm_block_scaled,deepgemm --cupti-launches 0 --delay-us 50 --dg-jobs 8 \
    --time-limit $((LIM - 30)) --commit "${C}" --out "$OUT/peers_${run}_${C:0:7}.json" > "$OUT/p/peers_$run.log" 2>&1
  echo "peers $run rc=$?" >> "$L"; grep -E "^(fp8gemm|deepgemm)" "$OUT/p/peers_$run.log" >> "$L"
done
unset FP8GEMM_KERNEL_BLOCK_SCALED
xz -6 "$OUT/sweep.log"
tar cJf "$OUT/logs.txz" -C "$OUT" p torch gl sweep.log.xz 2>/dev/null && rm -rf "$OUT/p" "$OUT/torch" "$OUT/gl" "$OUT/sweep.log.xz"
say end
cat "$L"
