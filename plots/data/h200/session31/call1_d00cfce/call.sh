#!/usr/bin/env bash
# Session 31, call 1: binaries .gpu/c.txz (every GPU test and ch08_grouped_moe) and the PyTorch
# package .gpu/py.txz of d00cfce (be92bd5's kernels: session 30's review commit, not GPU-run).
# Predictions (written before the run):
#  1. Every GPU test passes (the full list last ran at 4bd922d in session 22; since then each
#     session ran the tests of what it changed and compared the SASS of the rest). Left out here
#     and run in call 2 with the session's wgrad change: test_chapter_08_wgrad, test_library_gpu,
#     test_library_threads_gpu.
#  2. FP32 dW of ONE group (what Fp8Linear computes for FP32 weights, e.g. under autocast), the
#     six Fp8Linear shapes at 4096 tokens (32 K blocks per tile) and two at 16384: the two-unit
#     early-wave 128 x 192 s4 b2 (the grouped FP32 pick since session 30) 1.01-1.04x the TFLOPS
#     of the one-unit 128 x 192 s5 b1 (the single-group rule's narrow kernel) at 4096 tokens,
#     0.99-1.02x at 16384 (a smaller share of epilogue); 128 x 256 s3 b2 1.00-1.03x the one-unit
#     128 x 256 s4 b1. Two runs, kernel order reversed.
#  3. bench/wgrad_vs_cublaslt.py (FP32 dW, one group, 4096 tokens): ours / cuBLASLt's time
#     0.95-1.05 (session 29 measured cuBLASLt ~1.1x ours at 4096 x 7168 before sessions 29-30's
#     +6-9 %).
set -u
source scripts/gpu_call.sh .gpu/c.txz .gpu/py.txz || exit 1
C7=${C:0:7}
K="128x192_s5_c1x1_promoted_f32_tma_b1 128x192_s4_c1x1_promoted_f32_tma_b2 128x256_s4_c1x1_promoted_f32_tma_b1 128x256_s3_c1x1_promoted_f32_tma_b2"
LIN=""
for nk in 2112:7168 24576:1536 32768:512 7168:16384 4096:7168 7168:2048; do
  LIN="$LIN --case=lin_t4096_n${nk%%:*}_k${nk##*:}:4096:$nk"
done
for nk in 4096:7168 7168:2048; do
  LIN="$LIN --case=lin_t16384_n${nk%%:*}_k${nk##*:}:16384:$nk"
done
sweep() {
  local i=$1 order=$2
  say "sweep $i"
  BIN=$B STEPS=ch08 CH08_ARGS="--kernels=$order --only=lin_$LIN" TIMEOUT=120 \
    timeout 130 bash scripts/gpu_loop.sh "$OUT/s$i" > /dev/null 2>&1; echo "rc=$?" >> "$L"
  cp "$OUT/s$i/json/ch08_grouped_moe.json" "$OUT/sweep_${C7}_$i.json" 2>/dev/null
}
sweep 1 "$(echo $K | tr ' ' ',')"
sweep 2 "$(echo $K | tr ' ' '\n' | tac | paste -sd,)"
python3 - "$OUT"/sweep_${C7}_*.json >> "$L" 2>&1 <<'PY'
import json, sys, collections, math
for f in sys.argv[1:]:
    t = collections.defaultdict(dict)
    for b in json.load(open(f))["benchmarks"]:
        impl, case = b["name"].split("/")[:2]
        if impl.startswith("ch08_wgrad:"): t[case][impl[11:]] = b["TFLOPS"]
    print(f)
    for case, row in sorted(t.items()):
        a = row.get("128x192_s4_c1x1_promoted_f32_tma_b2", 0) / max(row.get("128x192_s5_c1x1_promoted_f32_tma_b1", 1e-9), 1e-9)
        b = row.get("128x256_s3_c1x1_promoted_f32_tma_b2", 0) / max(row.get("128x256_s4_c1x1_promoted_f32_tma_b1", 1e-9), 1e-9)
        print(f"  {case:28s} " + " ".join(f"{k.split('_promoted')[0]}:{v:7.1f}" for k, v in sorted(row.items())) + f"  192b2/192b1 {a:.3f} 256b2/256b1 {b:.3f}")
PY
say "wgrad_vs_cublaslt"
mkdir -p "$OUT/w"
for nkt in 4096:7168 7168:2048 2112:7168; do
  PYTHONPATH=/tmp/py timeout 60 python3 bench/wgrad_vs_cublaslt.py --n ${nkt%%:*} --k ${nkt##*:} --t 4096 \
    --kernels 128x192_s4_c1x1_promoted_f32_tma_b2,128x256_s3_c1x1_promoted_f32_tma_b2,128x192_s5_c1x1_promoted_f32_tma_b1,128x256_s4_c1x1_promoted_f32_tma_b1 \
    > "$OUT/w/cublaslt_${nkt/:/x}.txt" 2>&1; echo "rc=$?" >> "$L"
  tail -8 "$OUT/w/cublaslt_${nkt/:/x}.txt" >> "$L"
done
LEFT=$(seconds_left 585)
say "GPU tests (all but the three call 2 runs), $LEFT s left"
BIN=$B STEPS=tests ONLY='^(test_chapter_05|test_chapter_06|test_chapter_07|test_chapter_08|test_chapter_08_e2e|test_chapter_09_gpu|test_chapter_09_hopper|test_chapters_01_04|common_test_gpu|common_test_cublaslt|common_test_bench_harness|test_mx_gpu|quantize_test_gpu|test_reliability|test_reliability_threads|test_chapter_07_splitk)$' TIMEOUT=200 \
  timeout $((LEFT - 5)) bash scripts/gpu_loop.sh "$OUT/gl" > /dev/null 2>&1; echo "gpu_loop rc=$?" >> "$L"
grep -E "PASS|FAIL|SKIP" "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
tail -1 "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
cp "$OUT/gl/summary.txt" "$OUT/gpu_tests_${C7}.txt" 2>/dev/null
tar cJf "$OUT/c.txz" -C "$OUT" gl s1 s2 w 2>/dev/null; rm -rf "$OUT/gl" "$OUT/s1" "$OUT/s2" "$OUT/w"
say end
cat "$L"
