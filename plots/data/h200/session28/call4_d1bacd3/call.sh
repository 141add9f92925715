#!/usr/bin/env bash
# Session 28, call 4: a measurement for later work, no code change. ncu's source view (SASS per
# instruction: executed counts, stall samples) of the weight gradient, ours (the k-grouped kernel,
# one group) against cuBLASLt's (torch._scaled_mm, 1 x 128 x 1 x 128, FP32 out), on the same
# quantised operands: bench/wgrad_vs_cublaslt.py at N 4096, K 7168, T 4096 (Fp8Linear's
# 4096 x 7168 shape). Session 8 found the two execute the same promotion (a multiply and an FMA
# per accumulator and 128 tokens) and cuBLASLt's kernel 1.17x fewer cycles; session 8 named the
# source view the next measurement and no session has taken it. The PyTorch package of the
# commit in bin/commit.txt (.gpu/py.txz; the wgrad kernels unchanged since session 15).
# NOT RUN in session 28: five starts refused (11:13, 11:27, 11:39, 11:51, 12:03); ready for the next.
set -u
source scripts/gpu_call.sh .gpu/c.txz .gpu/py.txz || exit 1
export PYTHONPATH=/tmp/py
mkdir -p "$OUT/w"
say "timing"
timeout 120 python3 bench/wgrad_vs_cublaslt.py --n 4096 --k 7168 --t 4096 --list-kernels \
  > "$OUT/w/time_wgrad_vs_cublaslt.txt" 2>&1; echo "rc=$?" >> "$L"
cat "$OUT/w/time_wgrad_vs_cublaslt.txt" | grep -v "^\s*$" | head -20 >> "$L"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for side in "ours regex:KGrouped" "cublaslt regex:nvjet|xmma|cutlass|sm90_"; do
  set -- $side
  say "ncu $1"
  timeout 150 "$NCU" --clock-control none --kernel-name-base demangled --kernel-name "$2" \
    --launch-skip 1 --launch-count 1 --set full --import-source no -o "$OUT/w/ncu_wgrad_$1" -f \
    python3 bench/wgrad_vs_cublaslt.py --n 4096 --k 7168 --t 4096 --only "$1" --reps 2 \
    > "$OUT/w/ncu_$1.log" 2>&1; echo "rc=$?" >> "$L"
  "$NCU" -i "$OUT/w/ncu_wgrad_$1.ncu-rep" --page details > "$OUT/w/ncu_wgrad_$1_details.txt" 2>&1
  "$NCU" -i "$OUT/w/ncu_wgrad_$1.ncu-rep" --page source --csv --print-source sass \
    > "$OUT/w/ncu_wgrad_$1_source.csv" 2>&1
  grep -E "Duration|Elapsed Cycles|SM Frequency|Compute \(SM\)|Issued Warp Per|Warp Cycles Per Issued|Registers Per|Executed Instructions  " \
    "$OUT/w/ncu_wgrad_$1_details.txt" >> "$L"
done
rm -f "$OUT/w/"*.ncu-rep
tar cJf "$OUT/w.txz" -C "$OUT" w && rm -rf "$OUT/w"
say end
cat "$L"
