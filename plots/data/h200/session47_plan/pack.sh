#!/usr/bin/env bash
# Session 46's plan for the next device session. Packs, on the CPU machine, from a clone at the
# commit to run: session46_plan/pack.sh (its header: the build, .gpu/c10.txz, c10s.txz, py10.txz,
# and .peer from the three git directories when missing), then .gpu/s47.txz, what call1.sh needs:
#   bash plots/data/h200/session47_plan/pack.sh [DEEPGEMM_GITDIR CUTLASS_GITDIR FMT_GITDIR]
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
bash plots/data/h200/session46_plan/pack.sh "$@"
(cd build && tar cf - bin/commit.txt bin/libbenchmark.so.1.7.1 bin/libbenchmark.so.1debian \
   bin/fp8gemm_dispatch_sweep bin/fp8gemm_dispatch_picks | xz -9 -T2 > ../.gpu/s47.txz)
# Call 1 on a GPU other than the H200 runs test_chapter_07 from this.
(cd build && tar cf - bin/gpu_tests.txt bin/test_chapter_07 | xz -9 -T2 > ../.gpu/t07.txz)
ls -l .gpu/s47.txz .gpu/t07.txz
