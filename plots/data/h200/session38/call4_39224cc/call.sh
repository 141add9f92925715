#!/usr/bin/env bash
# Session 38, call 4: chapter 8's executable at 39224cc (.gpu/c.txz: "new", the producer warp) and
# main e93c92e's (.gpu/old.txz: "old"), the masked cases only, old / new alternating, six runs
# (old, new, new, old, old, new), 50 us GPU delay, in one call.
# Why: call 1 measured masked_g1x1024_n7168_k2048 at 1.052x the time (old 37.3 and 40.1 us, new
# 40.9 and 40.5: the old side's two runs 7 % apart), the one chapter 8 case that lost; issue 10's
# ratio there is 1.066x DeepGEMM, on its 1.05 line.
# Prediction: within +-2 % (the other masked cases 0.98-1.00x in call 1; the change is the
# producer's instruction count, which the 3-stage 256 x 128 kernel does not wait on), i.e. call
# 1's 1.052x was the old side's spread.
set -u
source scripts/gpu_call.sh .gpu/c.txz || exit 1
mkdir -p /tmp/o && tar xJf .gpu/old.txz -C /tmp/o
OLD=/tmp/o/old
echo "old: $(cat $OLD/commit.txt)" >> "$L"
mkdir -p "$OUT/ab"
run=0
for side in old new new old old new; do
  run=$((run + 1))
  if [ "$side" = old ]; then X=$OLD; else X=$B; fi
  LEFT=$(seconds_left 200); say "run $run ($side), $LEFT s left"
  [ "$LEFT" -gt 35 ] || { echo "run $run skipped" >> "$L"; break; }
  timeout 30 "$X/ch08_grouped_moe" --gpu_delay_us=50 --forward-only --only='^masked_' \
    --json="$OUT/ab/ch08_${run}_$side.json" > "$OUT/ab/ch08_${run}_$side.log" 2>&1; echo "rc=$?" >> "$L"
done
python3 plots/data/h200/ch07/abcompare.py "$OUT/ab" >> "$L" 2>&1
tar cJf "$OUT/ab.txz" -C "$OUT" ab && rm -rf "$OUT/ab"
say end
cat "$L"
