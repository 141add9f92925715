#!/usr/bin/env bash
# Session 49's plan for a later device session, on the H200 only (the library's table is the
# H200's): the large rows of the dispatch table re-timed with each confirmed kernel alone under
# sustained load (fp8gemm_dispatch_sweep --sustain_ms, session 49: at 8192^3 the interleaved
# confirmation and the block medians ranked kernels 5-11% apart from what they do alone at the
# power cap; chapter 10's NOTEBOOK.md, "Session 49").
#   pack (CPU machine, at the commit to run):
#     cmake --build build -j2 --target fp8gemm_dispatch_sweep
#     (cd build && tar cf - bin/commit.txt bin/libbenchmark.so.1.7.1 bin/libbenchmark.so.1debian \
#        bin/fp8gemm_dispatch_sweep | xz -6 -T2 > ../.gpu/sw49.txz)
#   run:  bash plots/data/h200/session49_plan/h200_call.sh          (carry .gpu/sw49.txz)
# Name nvidia-h200 (do not pass needs_h200: that is for work that cannot fit an H100; session 49's
# seven calls all got an H100). On another GPU it runs 8192^3 alone with --sustain_ms (session 50's
# fallback, ~70 s, capped at 200 s; not for the table) and stops.
# The sweep binary must be of 23d089f or later (its confirmation also times the committed table's
# kernel, so the old row and the new pick are both timed alone). Afterwards, on the CPU machine:
#   cp <files_at>/dispatch_sweep_sustained_<commit>.json plots/data/h200/ch10/dispatch_sweep_sustained.json
#   python3 chapters/10_production/tools/gen_dispatch_table.py --picks-exe build/bin/fp8gemm_dispatch_picks
#   cmake --build build -j2 && (cd build && ctest -L cpu -R 'library|table')
# (gen_dispatch_table.py lists that file first among its sources, so its (family, shape) pairs
# replace the full sweep's; the sustained medians rank them.) Commit the JSON and the two
# generated files with the picks that changed.
# (Session 50: plots/data/h200/session50_plan/pack.sh packs sw49.txz and t50.txz at HEAD; then, warm,
# plots/data/h200/session50_plan/tests_call.sh runs the six GPU tests no GPU has run at that code.)
# Then, if device time is left (h200_call ~560 s + tests_call ~380 s + starts), while the H200 is
# warm: `SUS_SMS="" bash plots/data/h200/session49/call_c.sh` (its three tests repeat tests_call's;
# the 112-SM sweeps are what it adds) (carry
# .gpu/c10.txz from plots/data/h200/session46_plan/pack.sh): test_chapter_08, test_chapter_08_wgrad
# and quantize_test_gpu, which no H200 has run at the code of sessions 47-49, and the 112-SM sweeps of
# session 49's call 1 on the table's own GPU (~250 s).
# What it runs: the six M = 4096 DeepSeek-V3 shapes and 8192^3, every family, --confirm=4
# --sustain_ms=2000 (the 4 fastest by block median and the chapter's rule's kernel, each alone
# for 1 s twice, A B C D E .. E D C B A), nvidia-smi every 100 ms. About 7 x (5 + 5 + 5 + 3)
# kernels x 2 s = 250 s of sustained runs plus ~60 s of block timing.
# Predictions (session 49, before any run on the H200): every confirmed kernel's sustained median
# within 0.95-1.10x of its confirmed one; the table's kernel changes at 3-8 of the 28 large
# (family, shape) rows, each new pick 1-5% faster alone than the old; 8192^3 fast keeps the
# ping-pong 128x192_s4_c2x1 (on the H100 it was 10.7% ahead of 192x128_s4_c2x1 alone).
# Session 65: PACK names another pack of the sweep (.gpu/sw65.txz, packed the same way at HEAD);
# H200_ONLY=1 stops at once on any other GPU (the fallback has run).
set -u
source scripts/gpu_call.sh "${PACK:-.gpu/sw49.txz}" || exit 1
if ! nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  [[ -n "${H200_ONLY:-}" ]] && { say "not an H200: nothing run (H200_ONLY)"; cat "$L"; exit 0; }
  # Session 50: on another GPU, only 8192^3 (every family) with --sustain_ms, so that 23d089f's
  # sustained passes run on some GPU at all (~70 s); its numbers do not go into the H200's table.
  say "not an H200: 8192^3 only, to exercise --sustain_ms (the table is the H200's)"
  dispatch_sweep_step sustained_check 200 8192x8192x8192 --confirm=4 --sustain_ms=2000
  python3 -c 'import json,sys; r=[x for x in json.load(open(sys.argv[1]))["results"] if x.get("sustain_median_us")]; [print(x["family"], x["kernel"], x["confirm_median_us"], x["sustain_median_us"]) for x in r]' \
    "$OUT/dispatch_sweep_sustained_check_${C:0:7}.json" >> "$L" 2>&1
  say end; cat "$L"; exit 0
fi
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.active \
  --format=csv,noheader -lms 100 > "$OUT/smi.csv" 2>&1 &
SMI=$!
LARGE="4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048,8192x8192x8192"
say "dispatch sweep, large shapes, --sustain_ms=2000"
# SWEEP_S (session 51): the step's cap where less device time is left (about 310 s are predicted).
dispatch_sweep_step sustained "${SWEEP_S:-540}" "$LARGE" --confirm=4 --sustain_ms=2000
kill $SMI 2>/dev/null
xz -6 "$OUT/smi.csv"
python3 - "$OUT/dispatch_sweep_sustained_${C:0:7}.json" >> "$L" 2>&1 <<'PY'
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["results"] if r.get("sustain_median_us")]
print(len(rows), "results with sustain_median_us")
for r in rows:
    print(f"  {r['family']:20s} {r['shape']:16s} {r['kernel']:40s} confirmed {r['confirm_median_us']:8.1f}"
          f"  sustained {r['sustain_median_us']:8.1f}  ({r['sustain_median_us'] / r['confirm_median_us']:.3f}x)")
PY
say end
cat "$L"
