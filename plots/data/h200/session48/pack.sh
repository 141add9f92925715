#!/usr/bin/env bash
# Packs what plots/data/h200/session48/call.sh carries, on the CPU machine, at the commit to run:
#   bash plots/data/h200/session48/pack.sh [DEEPGEMM_GITDIR CUTLASS_GITDIR FMT_GITDIR]
# (session47_plan/pack.sh first: the build, .gpu/c10.txz, py10.txz, .peer), then .gpu/d48.txz: the
# sweep, the picks, the four GPU test binaries of MODE=tests and the installed-package examples in
# one archive (the library is linked into each; one xz stream keeps their common bytes once).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
bash plots/data/h200/session47_plan/pack.sh "$@"
(cd build && tar cf - bin/commit.txt bin/gpu_tests.txt bin/libbenchmark.so.1.7.1 \
   bin/libbenchmark.so.1debian bin/fp8gemm_dispatch_sweep bin/fp8gemm_dispatch_picks \
   bin/test_chapter_06 bin/test_chapter_07 bin/test_library_gpu bin/test_library_threads_gpu \
   bin/consumer_example bin/readme_example | xz -9e -T2 > ../.gpu/d48.txz)
tracked=$(git ls-files -z | du -cb --files0-from=- | tail -1 | cut -f1)
carry=$(($(stat -c %s .gpu/d48.txz) + $(stat -c %s .gpu/py10.txz) + $(du -sb .peer | cut -f1)))
echo "pack: carry [d48.txz py10.txz .peer] + tracked tree = $(((carry + tracked) / 1048576)) MiB of 64"
