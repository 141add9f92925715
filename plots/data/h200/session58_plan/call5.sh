#!/usr/bin/env bash
# Session 58's fifth call (carry .gpu/t58d.txz .gpu/py58d.txz, packed at the commit to run with
# call3.sh's pack commands, t58d / py58d), any Hopper GPU, about 140 s: the final FP32 rule.
#  1. test_library_gpu and test_strided_gpu: predicted pass (as call 4).
#  2. The PyTorch tests: "132 passed, 2 skipped".
#  3. bench_torch.py --only per_tensor: predicted as call 3 but 4096 x 2112 x 7168, now on
#     128 x 128 tiles: 0.83-0.88x torch's float32 D (call 3: 0.73x; call 4 by name: 0.857x).
set -u
source scripts/gpu_call.sh .gpu/t58d.txz .gpu/py58d.txz || exit 1
say "library GPU tests"
packed_tests_step lib 'test_library_gpu|test_strided_gpu' 150
say "PyTorch tests"
torch_tests_step 100
say "bench_torch.py --only per_tensor"
BENCH_ARGS="--only per_tensor --time-limit 0.4 --commit $C" timeout 110 \
  bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/pt" bench > /dev/null 2>&1
echo "bench rc=$?" >> "$L"
grep -E "^per_tensor|Error|error" "$OUT/pt/bench_torch.log" | head -40 >> "$L"
cp "$OUT/pt/bench_torch.json" "$OUT/per_tensor_f32_${C:0:7}.json" 2>/dev/null
tar cJf "$OUT/pt.txz" -C "$OUT" pt && rm -rf "$OUT/pt"
say end
cat "$L"
