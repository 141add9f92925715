#!/usr/bin/env bash
# Session 46, call 4: the dispatch rescaled to the plan's SMs (rule table_sms, 3a85ebb), measured.
# In order of need (the device time left may cut it short; every step writes its own files):
#  1. DeepGEMM 2.6.1's build, then both libraries on 112 SMs (fp8gemm.ops.set_max_sms(112),
#     deep_gemm.set_num_sms(112)), the 18 shapes, interleaved, 50 us delay (call 1's method).
#     Prediction (call 1's 112-SM peers and sweep): M <= 128 0.97-1.03x DeepGEMM geomean (0.863x
#     in call 1, before the rescaling: 64 x 2112 x 7168 0.649x, 128 x 2112 x 7168 0.679x);
#     M = 4096 0.99-1.03x (0.996x); where the table's kernel stays (64 x 7168 x 16384, ...), the
#     same as call 1 within 2%.
#  2. The same on 120 SMs, the twelve M <= 128 shapes (no sweep on 120 SMs exists: the rule's
#     first test away from the 112 it was checked on). Prediction: 0.95-1.03x DeepGEMM.
#  3. Run A again on all SMs (the twelve shapes, the table adopted in 61c1b6d). Prediction:
#     1.00-1.02x DeepGEMM (call 1's run B, the same kernels: 1.010x).
#  4. The PyTorch tests and test_library_gpu (its new table_sms case). Prediction: 110 passed,
#     2 skipped; test_library_gpu passes.
# On a GPU other than the H200 only step 4 runs, except on an H100 (132 SMs as well): after three
# refused H200 starts, the same steps ran there, labelled H100 (its JSON and logs name the GPU):
# the question is a same-run ratio (the op against DeepGEMM on the same SMs), not an H200 number.
# Run: carry .gpu/lib.txz (commit.txt, libbenchmark, test_library_gpu), .gpu/py10.txz, .peer.
set -u
source scripts/gpu_call.sh .gpu/lib.txz .gpu/py10.txz || exit 1
M128="64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048"
M128="$M128,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048"
SH18="$M128,4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -qE "H200|H100"; then
  say "DeepGEMM build"
  deepgemm_build_step 150
  say "peers on 112 SMs ($(seconds_left 480) s left)"
  PEERS_MAX_SMS=112 peers_ch07_step sms112 80 "$SH18"
  say "peers on 120 SMs ($(seconds_left 480) s left)"
  PEERS_MAX_SMS=120 peers_ch07_step sms120 60 "$M128"
  say "peers A on all SMs ($(seconds_left 480) s left)"
  peers_ch07_step A 60 "$M128"
else
  say "not an H200: tests only"
fi
say "PyTorch tests"
timeout 90 bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" tests \
  > "$OUT/gpu_run.log" 2>&1; echo "gpu_run rc=$?" >> "$L"
tail -1 "$OUT/torch/tests.log" >> "$L" 2>/dev/null
grep -E "FAILED|Error" "$OUT/torch/tests.log" | head -8 >> "$L" 2>/dev/null
say "test_library_gpu"
gpu_tests_step '^test_library_gpu$' 150
tar cJf "$OUT/logs.txz" -C "$OUT" p gl torch gpu_run.log 2>/dev/null &&
  rm -rf "$OUT/p" "$OUT/gl" "$OUT/torch" "$OUT/gpu_run.log"
say end
cat "$L"
