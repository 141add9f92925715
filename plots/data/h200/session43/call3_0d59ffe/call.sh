#!/usr/bin/env bash
# Session 42 plan, call 3 (was session 40 call 4): the PyTorch package at 0d59ffe (.gpu/py6.txz: the library with call 2's
# kernels, kTwoDeepLongCycleLoop the default of block scaling's narrow one-slab tiles) and
# DeepGEMM 2.6.1 (.peer; .gpu/c7.txz only names the commit).
#  1. The package's PyTorch tests. Prediction: 106 passed, 2 skipped (session 39: 105; session 42 added test_gemm_mx_dequantize_path_per_stream_and_not_captured).
#  2. The PyTorch op (fp8gemm.ops, the library's table: the same kernels as chapter 7's at these
#     shapes) against DeepGEMM, interleaved, 50 us delay, 8192^3 and the twelve M <= 128 shapes
#     (session 38's method). Prediction: M <= 128 geomean 0.99-1.00x DeepGEMM's speed (session
#     38: 0.987x); 64 / 128 x 2112 x 7168 ~0.96-0.98x; issue 9's 1.10x not met.
set -u
source scripts/gpu_call.sh .gpu/c7.txz .gpu/py6.txz || exit 1
mkdir -p "$OUT/p"
LEFT=$(seconds_left 330)
say "PyTorch tests ($LEFT s left)"
timeout 90 bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" tests \
  > "$OUT/gpu_run.log" 2>&1; echo "gpu_run rc=$?" >> "$L"
tail -1 "$OUT/torch/tests.log" >> "$L" 2>/dev/null
grep -E "FAILED|Error" "$OUT/torch/tests.log" | head -5 >> "$L" 2>/dev/null
SM="64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048"
SM="$SM,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048"
C7=${C:0:7}
LEFT=$(seconds_left 330)
say "DeepGEMM build ($LEFT s left)"
timeout 120 bash .peer/build_deepgemm.sh > "$OUT/p/deepgemm_build.log" 2>&1; echo "build rc=$?" >> "$L"
eval "$(grep '^export PYTHONPATH=' "$OUT/p/deepgemm_build.log" | tail -n 1)"
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}/tmp/py
LEFT=$(seconds_left 330)
say "peers ch07 interleaved, delay 50 us ($LEFT s left)"
[ "$LEFT" -gt 50 ] && timeout $((LEFT - 10)) python3 bench/peers.py --interleave --shapes "8192x8192x8192,$SM" \
  --impls fp8gemm_block_scaled,deepgemm --cupti-launches 0 --delay-us 50 --dg-jobs 8 --time-limit $((LEFT - 45)) \
  --out "$OUT/peers_ch07_$C7.json" > "$OUT/p/peers_ch07.log" 2>&1
echo "peers rc=$?" >> "$L"; grep -E "^(fp8gemm|deepgemm)" "$OUT/p/peers_ch07.log" >> "$L"
tar cJf "$OUT/logs.txz" -C "$OUT" p torch gpu_run.log 2>/dev/null && rm -rf "$OUT/p" "$OUT/torch" "$OUT/gpu_run.log"
say end
cat "$L"
