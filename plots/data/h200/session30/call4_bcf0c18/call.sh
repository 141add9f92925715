#!/usr/bin/env bash
# Session 30, call 4: binaries .gpu/c.txz and the PyTorch package .gpu/py.txz of bcf0c18 (call 3's),
# DeepGEMM 2.6.1 built from .peer/.
# Why: call 3's two sweeps put the FP32 dB kernels with two staging units and the early wave
# (128 x 256 s3 b2 _pin_ew1, 128 x 192 s4 b2 _pin_ew2) at 1.00-1.09x the default at 65536
# tokens, with the default itself moving 1.5-3 % between the runs: inside the spread. The peers'
# interleaved method (each implementation timed in turn, round after round) is steadier.
# Predictions (written before the run):
#  1. Interleaved with DeepGEMM (bench/peers_moe.py --only wgrad --interleave --delay-us 150):
#     the default at 65536 tokens 0.98-1.00x DeepGEMM (call 1: 0.987, 0.993); the b2 early-wave
#     kernels 1.01-1.04x; at 8192 tokens all about 2x (call 1: 2.02-2.06x the default).
#  2. A third sweep run (65536 tokens only): the b2 early-wave kernels 1.00-1.05x the default.
set -u
source scripts/gpu_call.sh .gpu/c.txz .gpu/py.txz || exit 1
C7=${C:0:7}
say "peers_moe --only wgrad (DeepGEMM built first), interleaved"
EW=128x256_s3_c1x1_promoted_f32_tma_b2_pin_ew1,128x192_s4_c1x1_promoted_f32_tma_b2_pin_ew2,128x256_s3_c1x1_promoted_f32_tma_b2,128x256_s4_c1x1_promoted_f32_tma_b1_pin_ew1
PYTHONPATH=/tmp/py BIN=$B STEPS=peers_moe PEER_TIMEOUT=240 TIMEOUT=240 \
  PEER_ARGS="--only wgrad --interleave --delay-us 150 --cupti-launches 0 --wgrad-kernels=$EW" \
  timeout 400 bash scripts/gpu_loop.sh "$OUT/p" > /dev/null 2>&1; echo "peers rc=$?" >> "$L"
tail -4 "$OUT/p/summary.txt" >> "$L" 2>/dev/null
cp "$OUT/p/json/peers_ch08.json" "$OUT/peers_ch08_wgrad_$C.json" 2>/dev/null
grep -E "^(deepgemm|fp8gemm|torch)" "$OUT/p/peers_moe.log" | tail -30 >> "$L" 2>/dev/null
if [ "$(seconds_left 480)" -gt 80 ]; then
  K="128x256_s4_c1x1_promoted_f32_tma_b1 128x256_s4_c1x1_promoted_f32_tma_b1_pin_ew1 128x256_s3_c1x1_promoted_f32_tma_b2 128x256_s3_c1x1_promoted_f32_tma_b2_pin_ew1 128x192_s4_c1x1_promoted_f32_tma_b2 128x192_s4_c1x1_promoted_f32_tma_b2_pin_ew2"
  say "sweep 3"
  BIN=$B STEPS=ch08 CH08_ARGS="--kernels=$(echo $K | tr ' ' ',') --only=skew_g32_t65536" TIMEOUT=120 \
    timeout 130 bash scripts/gpu_loop.sh "$OUT/s3" > /dev/null 2>&1; echo "rc=$?" >> "$L"
  cp "$OUT/s3/json/ch08_grouped_moe.json" "$OUT/sweep_${C7}_3.json" 2>/dev/null
fi
tar cJf "$OUT/c.txz" -C "$OUT" p s3 2>/dev/null; rm -rf "$OUT/p" "$OUT/s3"
say end
cat "$L"
