#!/usr/bin/env bash
# Session 37, call 2: binaries .gpu/c.txz (ch07_block_scaling, test_chapter_07) with k-split
# consumers (ConsumerOrder::ksplit): a 64-row tile's K blocks split between two consumer
# warpgroups (even / odd ring stages), each running the two-deep loop on its half, the second
# handing its FP32 totals to the first through shared memory at the tile's end.
# Why: call 1's ncu at 64x2112x7168 (the table's 64 x 16 tile, DeepGEMM's own configuration):
# ours 13.22 us, DeepGEMM 10.46 us, with 1.46x DeepGEMM's instructions; one warp per scheduler
# issues at ~5 cycles per instruction, so a consumer warpgroup's chain of dependent instructions
# per K block sets the time, not the tensor cores (~1 % busy) nor memory (DRAM 25 %).
#  1. test_chapter_07 (every kernel, the k-split ones with odd K-block counts across tiles on one
#     CTA and with a warpgroup that gets no K block). Prediction: pass.
#  2. The 12 M <= 128 shapes, the table's kernels and the four k-split ones, interleaved in one
#     process (cuBLASLt block-scaled beside them), twice. Prediction: where the chain binds
#     (K = 7168 with N <= 4096: 64/128 x 2112 x 7168, 64/128 x 4096 x 7168) the k-split twin of
#     the table's tile at 0.65-0.85x its time; at K = 2048, 1536 and 512 (16, 12, 4 K blocks per
#     tile) 0.85-1.0x; at 64/128 x 7168 x 16384 (2.8-2.9 TB/s already) 0.95-1.02x.
#  3. ncu of 64x16_s16_ks at 64x2112x7168. Prediction: 8-10 us (call 1: 13.22, DeepGEMM 10.46).
set -u
source scripts/gpu_call.sh .gpu/c.txz || exit 1
C7=${C:0:7}
say "GPU tests"
gpu_tests_step '^test_chapter_07$' 170
SM="64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048"
SM="$SM,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048"
T=64x16_s16_c1x1_promoted_tma_b1,64x32_s14_c1x1_promoted_tma_b1,64x64_s12_c1x1_promoted_tma_b1
T=$T,64x128_s8_c1x1_promoted_tma_b1,128x64_s8_c1x1_promoted_tma_b1,128x128_s6_c1x1_promoted_tma_b1
KS=64x16_s16_c1x1_promoted_tma_b1_ks,64x32_s14_c1x1_promoted_tma_b1_ks
KS=$KS,64x64_s12_c1x1_promoted_tma_b1_ks,64x128_s6_c1x1_promoted_tma_b1_ks
mkdir -p "$OUT/ks"
for r in 1 2; do
  LEFT=$(seconds_left 560)
  [ "$LEFT" -gt 120 ] || { echo "run $r skipped ($LEFT s left)" >> "$L"; break; }
  if [ $r = 1 ]; then K="$T,$KS"; else K="$KS,$T"; fi
  say "ch07 small M, run $r ($LEFT s left)"
  timeout $((LEFT - 60)) "$B/ch07_block_scaling" --gpu_delay_us=50 --shapes=$SM --kernels=$K \
    --json="$OUT/ks/ch07_ks_$r.json" > "$OUT/ks/ch07_ks_$r.log" 2>&1; echo "rc=$?" >> "$L"
  grep -E "FAIL|error" "$OUT/ks/ch07_ks_$r.log" | head -5 >> "$L"
done
python3 - "$OUT"/ks/ch07_ks_*.json >> "$L" 2>&1 <<'PY'
import json, sys
for f in sys.argv[1:]:
    t = {}
    for b in json.load(open(f))["benchmarks"]:
        if "real_time" in b:
            i, s = b["name"].split("/")[:2]
            t.setdefault(s, {})[i] = b["real_time"]
    print(f)
    for s, v in t.items():
        print(" ", s, " ".join(f"{k.replace('_c1x1_promoted_tma_b1', '')}={x:.2f}" for k, x in sorted(v.items(), key=lambda kv: kv[1])))
PY
say "ncu"
P='Duration|Elapsed Cycles|DRAM Throughput|L2 Cache Throughput|Warp Cycles Per Issued|No Eligible|Executed Instructions  '
ncu_step "$OUT/ks" ks_64x2112x7168 gemm_kernel "SpeedOfLight MemoryWorkloadAnalysis WarpStateStats SchedulerStats InstructionStats" \
  "$P" "$B/ch07_block_scaling" --shapes=64x2112x7168 --benchmark_filter=ch07_block \
  --kernels=64x16_s16_c1x1_promoted_tma_b1_ks
tar cJf "$OUT/ks.txz" -C "$OUT" ks gl 2>/dev/null && rm -rf "$OUT/ks" "$OUT/gl"
say end
cat "$L"
