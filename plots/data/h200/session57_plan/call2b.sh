#!/usr/bin/env bash
# Session 57's call 2, cut to fit the device time left after a machine was taken back mid-call
# (carry .gpu/t57b.txz and .gpu/py57b.txz as call2.sh): test_strided_gpu whole, test_chapter_08's
# counter-schedule case alone (with the new refusal of a counter inside the offsets, D, A or a
# scale), test_library_threads_gpu, the PyTorch tests. About 150 s. Predicted: pass.
set -u
source scripts/gpu_call.sh .gpu/t57b.txz .gpu/py57b.txz || exit 1
say "test_strided_gpu"
timeout 60 "$B/test_strided_gpu" > "$OUT/strided.log" 2>&1; echo "test_strided_gpu rc=$?" >> "$L"
tail -2 "$OUT/strided.log" >> "$L"
say "test_chapter_08: the counter schedule case"
timeout 120 "$B/test_chapter_08" "ch08: the counter schedule with the caller's counters on two streams at once" \
  > "$OUT/ch08_counter.log" 2>&1; echo "test_chapter_08 (counter case) rc=$?" >> "$L"
tail -2 "$OUT/ch08_counter.log" >> "$L"
say "test_library_threads_gpu"
timeout 120 "$B/test_library_threads_gpu" "~[other-device]" > "$OUT/threads.log" 2>&1
echo "test_library_threads_gpu rc=$?" >> "$L"; tail -2 "$OUT/threads.log" >> "$L"
tar cJf "$OUT/logs.txz" -C "$OUT" strided.log ch08_counter.log threads.log && rm -f "$OUT"/*.log.tmp
rm -f "$OUT/strided.log" "$OUT/ch08_counter.log" "$OUT/threads.log"
say "PyTorch tests"
torch_tests_step 150
say end
cat "$L"
