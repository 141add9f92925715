#!/usr/bin/env bash
# Session 37, call 5 (the device time left, ~250 s): ncu's source view of chapter 7's table kernel
# (64x16_s16, binaries of db77afb, the code of 0f8167c) and DeepGEMM's kernel for the same tile
# at 64x2112x7168, one launch each: per SASS line, executed instructions (and the stall samples
# where this machine's ncu collects them). For the next session: where the 1.46x instructions
# and the 27 % cycles of call 1 go. No prediction of a number: a measurement to read.
set -u
source scripts/gpu_call.sh .gpu/c.txz || exit 1
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
mkdir -p "$OUT/src"
export_rep() {
  "$NCU" -i "$OUT/src/$1.ncu-rep" --page source --csv --print-source sass > "$OUT/src/$1_sass.csv" 2> "$OUT/src/$1_sass.err"
  "$NCU" -i "$OUT/src/$1.ncu-rep" --page details > "$OUT/src/$1_details.txt" 2>&1
  echo "$1: $(wc -l < "$OUT/src/$1_sass.csv") csv lines" >> "$L"
  rm -f "$OUT/src/$1.ncu-rep"
}
say "ncu ours"
timeout 60 "$NCU" --clock-control none --launch-skip 2 --launch-count 1 --kernel-name regex:gemm_kernel \
  --section SourceCounters --section WarpStateStats --section SpeedOfLight --section InstructionStats \
  -o "$OUT/src/ours" -f "$B/ch07_block_scaling" --shapes=64x2112x7168 --benchmark_filter=ch07_block \
  > "$OUT/src/ours.log" 2>&1; echo "ncu ours rc=$?" >> "$L"
export_rep ours
LEFT=$(seconds_left 175)
if [ "$LEFT" -gt 110 ]; then
  say "DeepGEMM build ($LEFT s left)"
  timeout $((LEFT - 30)) bash .peer/build_deepgemm.sh > "$OUT/src/deepgemm_build.log" 2>&1; echo "build rc=$?" >> "$L"
  eval "$(grep '^export PYTHONPATH=' "$OUT/src/deepgemm_build.log" | tail -n 1)"
  LEFT=$(seconds_left 175)
  say "ncu DeepGEMM ($LEFT s left)"
  [ "$LEFT" -gt 20 ] && timeout $((LEFT - 8)) "$NCU" --clock-control none --launch-skip 2 --launch-count 1 \
    --kernel-name regex:sm90_fp8_gemm_1d2d --section SourceCounters --section WarpStateStats \
    --section SpeedOfLight --section InstructionStats -o "$OUT/src/dg" -f python3 bench/peers.py \
    --impls deepgemm --shapes 64x2112x7168 --cupti-launches 0 --dg-jobs 0 --out /tmp/dg.json \
    > "$OUT/src/dg.log" 2>&1; echo "ncu dg rc=$?" >> "$L"
  [ -f "$OUT/src/dg.ncu-rep" ] && export_rep dg
fi
tar cJf "$OUT/src.txz" -C "$OUT" src && rm -rf "$OUT/src"
say end
cat "$L"
