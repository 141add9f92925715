#!/usr/bin/env bash
# Session 40, call 2: chapter 7's executable at 0182cd3 (.gpu/n2.txz: call 1's _cycj twins plus
# five decode candidates: deeper rings 64x16_s20, 64x32_s18, 64x64_s13 (what shared memory
# allows), and A multicast over a 1 x 2 cluster, 64x16_s16_c1x2 and 64x32_s14_c1x2).
#  1. The candidates beside the table's 64-row tiles and their _cyc twins, in one process, six
#     M <= 128 shapes (the four K = 7168 ones with N <= 4096, 64x7168x16384, 64x32768x512), two
#     runs in opposite orders. Prediction: session 39's ncu put 64x16_s16 at 64x2112x7168 at 39 %
#     of L2 throughput and 30 % of DRAM, so neither the ring's bytes in flight (16 x 10 KB
#     cover ~1 us of latency at the kernel's ~40 GB/s per SM) nor A's L2 reads limit it:
#     deeper rings within +-1 % of their 16/14/12-stage tiles (the cycle twins likewise), and
#     multicast 1.00-1.05x the time of its unclustered tile (the pair waits for each other's
#     slot; session 10 measured 1.03-1.08x at 64/128 x 7168 x 16384 on 64 x 64 / 128 x 64).
#  2. ncu, one launch each at 64x2112x7168: 64x16_s16 (the table's), 64x16_s20, 64x16_s16_c1x2,
#     sections SpeedOfLight and MemoryWorkloadAnalysis: L2 and DRAM throughput, L2 hit rate.
set -u
source scripts/gpu_call.sh .gpu/n2.txz || exit 1
mkdir -p "$OUT/ab" "$OUT/ncu"
S6="64x2112x7168,64x4096x7168,128x2112x7168,128x4096x7168,64x7168x16384,64x32768x512"
T=""
for t in 64x16_s16 64x16_s16_c1x1_promoted_tma_b1_cyc 64x16_s20 64x16_s20_c1x1_promoted_tma_b1_cyc \
         64x16_s16_c1x2 64x32_s14 64x32_s14_c1x1_promoted_tma_b1_cyc 64x32_s18 \
         64x32_s18_c1x1_promoted_tma_b1_cyc 64x32_s14_c1x2 64x64_s12 64x64_s13; do
  case $t in *_cyc) T="$T,$t" ;; *_c1x2) T="$T,${t}_promoted_tma_b1" ;; *) T="$T,${t}_c1x1_promoted_tma_b1" ;; esac
done
T=${T#,}
echo "kernels: $T" >> "$L"
TR=$(echo "$T" | tr ',' '\n' | tac | paste -sd,)
for r in 1 2; do
  LEFT=$(seconds_left 330)
  [ "$LEFT" -gt 90 ] || { echo "twins run $r skipped ($LEFT s left)" >> "$L"; break; }
  if [ $r = 1 ]; then K="$T"; else K="$TR"; fi
  say "ch07 candidates, run $r ($LEFT s left)"
  timeout 110 "$B/ch07_block_scaling" --gpu_delay_us=50 --shapes=$S6 --kernels=$K \
    --json="$OUT/ab/ch07_cand_$r.json" > "$OUT/ab/ch07_cand_$r.log" 2>&1; echo "rc=$?" >> "$L"
  grep -E "FAIL|error|rror:" "$OUT/ab/ch07_cand_$r.log" | head -5 >> "$L"
done
P='Duration|DRAM Throughput|L2 Cache Throughput|L2 Hit Rate|L1/TEX Hit Rate|Mem Busy|Max Bandwidth|SM Frequency'
for k in 64x16_s16_c1x1_promoted_tma_b1 64x16_s20_c1x1_promoted_tma_b1 64x16_s16_c1x2_promoted_tma_b1; do
  LEFT=$(seconds_left 330)
  [ "$LEFT" -gt 25 ] || break
  say "ncu $k"
  ncu_step "$OUT/ncu" "$k" gemm_kernel "SpeedOfLight MemoryWorkloadAnalysis" "$P" \
    "$B/ch07_block_scaling" --shapes=64x2112x7168 --kernels=$k --benchmark_filter=ch07:
done
tar cJf "$OUT/ab.txz" -C "$OUT" ab ncu && rm -rf "$OUT/ab" "$OUT/ncu"
say end
cat "$L"
