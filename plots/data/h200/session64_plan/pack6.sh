#!/usr/bin/env bash
# Session 64's pack for call6.sh, at the commit to run (commit first): .gpu/t64d.txz.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
cmake --build build -j2 --target test_chapter_08 ch08_grouped_moe test_chapter_08_args
mkdir -p .gpu
(cd build && tar cf - bin/commit.txt bin/libbenchmark.so.1.7.1 bin/libbenchmark.so.1debian \
   bin/test_chapter_08 bin/ch08_grouped_moe | xz -9 -T2 > ../.gpu/t64d.txz)
echo "commit $(cat build/bin/commit.txt)"; ls -l .gpu/t64d.txz
