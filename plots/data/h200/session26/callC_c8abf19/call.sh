#!/usr/bin/env bash
# Session 26, call C: chapters 6 and 7 with the re-learned table's picks (6055bb7; binaries and
# package of c8abf19, which adds the quantisers' shared helpers and quantize_128x128_dual's
# occupancy variants), re-measured.
#   GPU tests of chapters 6 and 7 and of the quantisers (DeepGEMM built in the background
#   meanwhile), quantize_bench's 128 x 128 entries again, chapter 6's
#   default table twice, chapter 7's committed tables (gpu_loop STEPS=ch07: the table with the
#   peers' method and the accuracy study), the Python peers in a second process (bench/peers.py,
#   as gpu_loop's peers step runs it, --delay-us 50), then chapter 7 against DeepGEMM in one
#   process, interleaved, through the library's op (bench/peers.py --interleave).
# On the CPU machine: build, stage the package (.gpu/py.txz), and
#   (cd build && tar cf - bin/ch06_warp_specialization bin/ch07_block_scaling bin/test_chapter_06 \
#      bin/test_chapter_07 bin/quantize_test_gpu bin/quantize_bench bin/gpu_tests.txt bin/commit.txt bin/chapters.txt \
#      bin/libbenchmark.so.1.7.1 bin/libbenchmark.so.1debian | xz -6 -T2 > ../.gpu/c.txz)
# then run this with the device tool, carrying .gpu and .peer (prepare.sh's DeepGEMM archive).
# Predictions (before the run): chapter 7 against DeepGEMM in two processes 0.915x -> ~0.93x
# (8192^3 +5 %, four M = 4096 shapes +0.7-2.8 %, from part (c) at 7404262), in one process
# interleaved 0.970x -> ~0.985x; against cuBLASLt block-scaled 1.088x -> ~1.10x; chapter 6's
# promoted geomean 1.050x -> ~1.06x (4096x32768x512 +6 %), the fast one within +-1 % of 1.066x;
# quantize_128x128_dual at 4 CTAs per SM (occ4, 64 registers, 14 words spilled) 76-80 % of the
# copy against occ3's 73-74 %.
set -u
source scripts/gpu_call.sh .gpu/c.txz .gpu/py.txz || exit 1
mkdir -p "$OUT/p"
say "DeepGEMM build (background)"
(bash .peer/build_deepgemm.sh > "$OUT/p/deepgemm_build.log" 2>&1; echo "build rc=$?" >> "$OUT/p/deepgemm_build.log") &
DG=$!
say "GPU tests (chapters 6, 7, quantisers)"
BIN=$B STEPS=tests ONLY='^(test_chapter_06|test_chapter_07|quantize_test_gpu)$' TIMEOUT=200 \
  timeout 300 bash scripts/gpu_loop.sh "$OUT/gl" > /dev/null 2>&1; echo "gpu_loop rc=$?" >> "$L"
cp "$OUT/gl/summary.txt" "$OUT/gpu_tests_${C:0:7}.txt" 2>/dev/null
tail -5 "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
wait $DG; tail -2 "$OUT/p/deepgemm_build.log" >> "$L"
say "quantize_bench 128x128"
timeout 60 "$B/quantize_bench" --benchmark_filter='128x128' \
  --benchmark_out="$OUT/quantize_bench_128x128_${C:0:7}.json" > "$OUT/p/quantize_bench.log" 2>&1
echo "rc=$?" >> "$L"; tail -5 "$OUT/p/quantize_bench.log" >> "$L"
for i in 1 2; do
  say "ch06 table ($i)"
  timeout 40 "$B/ch06_warp_specialization" --json="$OUT/ch06_warp_specialization_$i.json" \
    > "$OUT/p/ch06_table_$i.log" 2>&1; echo "rc=$?" >> "$L"
done
say "ch07 table + accuracy (gpu_loop STEPS=ch07)"
BIN=$B STEPS=ch07 TIMEOUT=150 timeout 200 bash scripts/gpu_loop.sh "$OUT/g7" > /dev/null 2>&1
echo "gpu_loop rc=$?" >> "$L"
cp "$OUT/g7/json/ch07_block_scaling.json" "$OUT/g7/json/ch07_accuracy.json" "$OUT/" 2>/dev/null
say "peers, second process (bench/peers.py --delay-us 50)"
(PYTHONPATH=/tmp/deepgemm:/tmp/py timeout 200 python3 bench/peers.py --out "$OUT/peers_ch07.json" \
   --time-limit 150 --commit "$C" --delay-us 50) > "$OUT/p/peers.log" 2>&1; echo "rc=$?" >> "$L"
LEFT=$(seconds_left 570)
say "peers ch07 interleaved ($LEFT s left)"
(PYTHONPATH=/tmp/deepgemm:/tmp/py timeout "$LEFT" python3 bench/peers.py --interleave \
   --impls fp8gemm_block_scaled,deepgemm --cupti-launches 0 --commit "$C" \
   --time-limit $((LEFT > 60 ? LEFT - 20 : 40)) --out "$OUT/peers_ch07_interleaved_${C:0:7}.json") \
   > "$OUT/p/peers_interleaved.log" 2>&1; echo "rc=$?" >> "$L"
tar cJf "$OUT/logs.txz" -C "$OUT" p gl g7 && rm -rf "$OUT/p" "$OUT/gl" "$OUT/g7"
say end
cat "$L"
