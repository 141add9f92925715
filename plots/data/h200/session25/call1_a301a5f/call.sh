#!/usr/bin/env bash
# A ready GPU call for deferred_promotion_inputs.patch (not yet run). On the CPU machine:
#   git apply plots/data/h200/session24/candidate/deferred_promotion_inputs.patch
#   cmake --build build --target ch07_block_scaling ch07_timeline test_chapter_07 -j2
#   (cd build && tar cf - bin/ch07_block_scaling bin/ch07_timeline bin/test_chapter_07 \
#      bin/gpu_tests.txt bin/commit.txt bin/libbenchmark.so.1.7.1 bin/libbenchmark.so.1debian \
#      | xz -6 -T2 > ../.gpu/defer.txz)
# then run this with the device tool, carrying .gpu (about 150 s, plus the start; 230 s with the
# test). Each _defer twin beside its default at the seven large shapes, twice, one process; the
# timeline of both tiles; chapter 7's GPU test (it validates every kernel, the twins included).
# Read the result with:
#   python3 plots/data/h200/ch07/early_wave/compare.py ab.txz --pairs=_defer:
#   python3 plots/data/h200/ch07/timeline/analyse.py --unroll timeline_defer.json.xz
set -u
source scripts/gpu_call.sh .gpu/defer.txz || exit 1
mkdir -p "$OUT/ab"
S7=8192x8192x8192,4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048
T=128x256_s3_c1x2_promoted_tma_b4
W=256x128_s3_c1x2_promoted_tma_b4
for i in 1 2; do
  say "ch07 defer twins ($i)"
  timeout 80 "$B/ch07_block_scaling" --gpu_delay_us=50 --shapes=$S7 --kernels=$W,${W}_defer,$T,${T}_defer \
    --json="$OUT/ab/ch07_defer_$i.json" > "$OUT/ab/ch07_defer_$i.log" 2>&1; echo "rc=$?" >> "$L"
done
say "timeline"
timeout 50 "$B/ch07_timeline" --shapes=8192x8192x8192,4096x7168x2048,4096x24576x1536 \
  --kernels=${W}_timeline,${W}_defer_timeline,${T}_timeline,${T}_defer_timeline \
  --json="$OUT/timeline_defer.json" > "$OUT/ab/timeline_defer.log" 2>&1; echo "rc=$?" >> "$L"
xz -6 "$OUT/timeline_defer.json"
tar cJf "$OUT/ab.txz" -C "$OUT" ab && rm -rf "$OUT/ab"
LEFT=$(seconds_left 560)
say "test_chapter_07 ($LEFT s left)"
BIN=$B STEPS=tests ONLY='^test_chapter_07$' TIMEOUT=$LEFT timeout "$LEFT" bash scripts/gpu_loop.sh "$OUT/gl" \
  > /dev/null 2>&1; echo "gpu_loop rc=$?" >> "$L"
tail -3 "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
tar cJf "$OUT/gl.txz" -C "$OUT" gl && rm -rf "$OUT/gl"
say end
tail -20 "$L"
