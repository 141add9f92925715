#!/usr/bin/env bash
# Session 48: one script for whichever GPU the device tool lends (an H200 cannot be asked for: the
# tool gives an H100 or an H200 to a call naming either, and session 47 never got an H200).
#   MODE=plan   session 47's H200 plan (plots/data/h200/session47/h200_call.sh, its steps and
#               predictions unchanged; BUDGET bounds them), only on an H200.
#   MODE=tests  the GPU tests the code since session 46's last full run touched, at this commit:
#               the installed-package examples' GPU halves, test_chapter_06, test_chapter_07 (its
#               new case "ch07: the rule's choice for fewer SMs, against float64" never ran),
#               test_library_gpu, test_library_threads_gpu, then the PyTorch tests. Any Hopper GPU.
#               Prediction: everything passes (the rule's picks for 112 and 16 SMs are kernels
#               test_chapter_07's every-kernel cases check; PyTorch "110 passed, 2 skipped").
#   MODE=pt_all the per-tensor dispatch sweep on all SMs (18 shapes) and tools/check_table.py for
#               both per-tensor families (the table as committed, --sms 0). Call 3 (H100) checked the
#               table rescaled to 112 SMs against a --max_sms=112 sweep: 16 / 18 and 15 / 18 within
#               3%, the misses at the short-K shapes (64 / 128 x 32768 x 512, 128 x 24576 x 1536) and
#               4096 x 7168 x 16384 fast. Whether those misses are the H100 (a table learned on the
#               H200) or the rescaling: the same check on all SMs. Prediction: the same shapes miss
#               on all SMs (the GPU, not the rule), within one shape.
#   MODE=auto   (default) plan on an H200, $FALLBACK (default tests) elsewhere.
# Carry .gpu/d48.txz (the binaries both modes need, packed by plots/data/h200/session48/pack.sh),
# .gpu/py10.txz and .peer.
set -u
source scripts/gpu_call.sh .gpu/d48.txz .gpu/py10.txz || exit 1
MODE=${MODE:-auto}
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then H200=1; else H200=0; fi
[ "$MODE" = auto ] && { [ $H200 = 1 ] && MODE=plan || MODE=${FALLBACK:-tests}; }
echo "mode: $MODE (H200: $H200)" >> "$L"
if [ "$MODE" = plan ] && [ $H200 = 0 ]; then say "plan asked for, not an H200: nothing run"; cat "$L"; exit 0; fi
# The plan is session 47's script itself, from this call's binaries (it unpacks them again and
# logs into the same call.log).
[ "$MODE" = plan ] && PLAN_BINS=.gpu/d48.txz exec bash plots/data/h200/session47/h200_call.sh
if [ "$MODE" = pt_all ]; then
  say "dispatch sweep on all SMs, per-tensor, 18 shapes"
  dispatch_sweep_step per_tensor_all 270 "$DS_SH18" --families=per_tensor
  for f in per_tensor_promoted per_tensor_fast; do
    python3 tools/check_table.py --picks-exe "$B/fp8gemm_dispatch_picks" --family $f \
      --dispatch-sweep "$OUT/dispatch_sweep_per_tensor_all_${C:0:7}.json" > "$OUT/check_all_$f.txt" 2>&1
    echo "check_table $f rc=$?" >> "$L"; grep -E "^(FAIL|check_table)" "$OUT/check_all_$f.txt" >> "$L"
  done
  say end
  cat "$L"
  exit 0
fi
if [ "$MODE" = tests ]; then
  examples_step
  say "GPU tests"
  gpu_tests_step '^(test_chapter_07|test_chapter_06|test_library_gpu|test_library_threads_gpu)$' 470
  say "PyTorch tests"
  timeout 90 bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" tests > /dev/null 2>&1
  echo "gpu_run rc=$?" >> "$L"
  tail -1 "$OUT/torch/tests.log" >> "$L" 2>/dev/null
  tar cJf "$OUT/logs.txz" -C "$OUT" gl torch consumer_example.log readme_example.log 2>/dev/null \
    && rm -rf "$OUT/gl" "$OUT/torch" "$OUT/consumer_example.log" "$OUT/readme_example.log"
  say end
  cat "$L"
  exit 0
fi
say "unknown MODE=$MODE: nothing run"; cat "$L"
