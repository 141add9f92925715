#!/usr/bin/env bash
# Session 42 plan, call 2 (was session 40 call 3, same kernels, host code of db48841): binaries in .gpu/c6.txz's bin/commit.txt ("new": block
# scaling's 64x16, 64x32, 64x64, 128x32 and 128x64 tiles run the ring-cycle loop on tiles of at
# least two ring cycles of K blocks, two-deep on shorter ones: kTwoDeepLongCycleLoop) and
# chapter 7's executable at a334058 (.gpu/old3.txz, "old").
#  1. (Session 40's plan ran here the GPU tests of the binaries that hold the changed kernels: chapter 7, its split-K
#     binary (it links chapter 7's kernel list; its own split-K kernels, f32 register epilogue,
#     are unchanged), the library and its threads test. Every other test binary's kernels compile
#     to the SASS of a334058's, which passed (tools/sass_diff.py; ../sass_c14a810_vs_a334058.txt).
#     Prediction: all pass. Session 42's call 1 runs every GPU test instead.)
#  2. Chapter 7 old / new / new / old on session 38's fifteen shapes (the twelve M <= 128, 8192^3,
#     4096x2112x7168, 4096x7168x2048). Prediction, from the twins' runs (sessions 39-40): new / old
#     0.95-0.97x at 128x2112x7168 (64x32), 0.96-0.99x at 64x2112x7168 (64x16), 0.97-0.98x at
#     128x7168x16384 (128x64), 0.98-1.00x at 128x7168x2048 (128x64, 16 K blocks = two cycles),
#     0.99-1.00x at 64x4096x7168 and 128x4096x7168, +-1 % at the other six M <= 128 shapes (tiles
#     of fewer than two cycles, or 64x128 / 128x128) and at the large ones (unchanged kernels);
#     geomean over the twelve M <= 128 shapes 0.985-0.995x.
# (The PyTorch op against DeepGEMM runs in call 3: the package, DeepGEMM and these binaries do
# not fit in one call's 64 MiB.)
set -u
source scripts/gpu_call.sh .gpu/c6.txz || exit 1
mkdir -p /tmp/o && tar xJf .gpu/old3.txz -C /tmp/o
OLD=/tmp/o/old
echo "old: $(cat $OLD/commit.txt)" >> "$L"
SM="64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048"
SM="$SM,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048"
S7="8192x8192x8192,4096x2112x7168,4096x7168x2048,$SM"
old_new_runs "$OUT/ab" 455 40 35 "$OLD" ch07_block_scaling ch07 --shapes=$S7
python3 plots/data/h200/ch07/abcompare.py "$OUT/ab" >> "$L" 2>&1
tar cJf "$OUT/ab.txz" -C "$OUT" ab && rm -rf "$OUT/ab"
tar cJf "$OUT/logs.txz" -C "$OUT" gl 2>/dev/null && rm -rf "$OUT/gl"
say end
cat "$L"
