#!/usr/bin/env bash
# Packs what this plan's calls carry, on the CPU machine, from a clone at the commit to run (a
# fresh machine included: the ignored .gpu/, .peer/, .venv-torch/ and build/ did not survive from
# session 44 to 45):
#   bash plots/data/h200/session46_plan/pack.sh [DEEPGEMM_GITDIR CUTLASS_GITDIR FMT_GITDIR]
# The three git directories (the `fetch` tool's mirrors of deepseek-ai/DeepGEMM, NVIDIA/cutlass and
# fmtlib/fmt, /work/.mirror/<owner>+<name>/repo) make .peer (DeepGEMM 2.6.1, call 3) when it is
# missing. Writes .gpu/c10.txz (calls 1-2), .gpu/c10s.txz and .gpu/py10.txz (call 3). About 25
# minutes on 2 cores from nothing (the build), a minute with build/ current.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
bash scripts/install_deps.sh
[ -x .venv-torch/bin/python ] || bash chapters/10_production/python/torch_for_build.sh
cmake --preset default -DFP8GEMM_TORCH_PYTHON="$PWD/.venv-torch/bin/python" >/dev/null
cmake --build build -j"$(nproc)"
head=$(git rev-parse HEAD)
built=$(cat build/bin/commit.txt)
echo "pack: HEAD $head, build/bin/commit.txt $built"
[ "$built" = "$head" ] || echo "pack: WARNING the binaries do not name HEAD (uncommitted changes?)" >&2
# The installed-package examples (examples/consumer, examples/readme), built against
# `cmake --install` by their CPU tests, whose GPU halves call 1 runs.
ctest --test-dir build -R '^(package_consumer|readme_example)$' --output-on-failure
cp build/package_test/consumer/consumer build/bin/consumer_example
cp build/readme_example_test/build/readme_example build/bin/readme_example
mkdir -p .gpu
(cd build && tar cf - bin/commit.txt bin/gpu_tests.txt bin/libbenchmark.so.1.7.1 \
   bin/libbenchmark.so.1debian bin/quantize_test_gpu bin/test_chapter_08_wgrad \
   bin/test_library_gpu bin/test_chapter_06 bin/test_chapter_08 bin/test_library_threads_gpu \
   bin/test_reliability bin/test_chapter_07 bin/test_chapter_07_splitk bin/test_chapter_09_hopper \
   bin/fp8gemm_dispatch_sweep bin/consumer_example bin/readme_example | xz -9e -T2 > ../.gpu/c10.txz)
(cd build && tar cf - bin/commit.txt bin/libbenchmark.so.1.7.1 bin/libbenchmark.so.1debian \
   | xz -9e > ../.gpu/c10s.txz)  # call 3: the commit only (the carry limit)
rm -rf /tmp/py10 && bash chapters/10_production/python/stage.sh build /tmp/py10/py
(cd /tmp/py10 && tar cf - py | xz -6 -T2 > "$OLDPWD/.gpu/py10.txz")
if [ ! -f .peer/deepgemm.tgz ]; then
  if [ $# -eq 3 ]; then
    bash ../shared/peers/deepgemm/prepare.sh "$1" "$2" "$3"
  else
    echo "pack: no .peer/deepgemm.tgz and no git directories given: call 3's DeepGEMM runs will fail" >&2
  fi
fi
ls -l .gpu .peer 2>/dev/null || true
tracked=$(git ls-files -z | du -cb --files0-from=- | tail -1 | cut -f1)
for call in "c10.txz" "c10s.txz py10.txz"; do
  carry=0
  for f in $call; do carry=$((carry + $(stat -c %s ".gpu/$f"))); done
  [ "$call" = "c10s.txz py10.txz" ] && carry=$((carry + $(du -sb .peer 2>/dev/null | cut -f1 || echo 0)))
  echo "pack: carry [$call] + tracked tree = $(((carry + tracked) / 1048576)) MiB of 64"
done
