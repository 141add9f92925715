#!/usr/bin/env bash
# Session 26, call A: the full dispatch sweep at 945b0eb (every family; the kernels changed since
# the c47176c / fe11ef0 / 80c55ad sweeps the table was learned from: sessions 23-24's early wave,
# hand-over and pinned loops). On the CPU machine:
#   (cd build && tar cf - bin/fp8gemm_dispatch_sweep bin/commit.txt bin/gpu_tests.txt \
#      bin/libbenchmark.so.1.7.1 bin/libbenchmark.so.1debian | xz -6 -T2 > ../.gpu/sweep.txz)
# then run this with the device tool, carrying .gpu.
set -u
source scripts/gpu_call.sh .gpu/sweep.txz || exit 1
say "dispatch sweep (all families)"
timeout 200 "$B/fp8gemm_dispatch_sweep" --json="$OUT/dispatch_sweep.json" > "$OUT/sweep.log" 2>&1
echo "rc=$?" >> "$L"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv >> "$L" 2>&1
xz -k -6 "$OUT/sweep.log"
say end
tail -5 "$OUT/sweep.log"; cat "$L"
