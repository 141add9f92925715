#!/usr/bin/env bash
# Sets up, builds and runs one chapter's executable (default: chapter 1):
#   bash scripts/run_chapter.sh [NN] [chapter arguments...]
# The executable validates the kernel against a float64 CPU reference, then benchmarks it beside
# cuBLASLt. Without a GPU it builds and then says clearly that it cannot run.
set -euo pipefail
cd "$(dirname "$0")/.."
chapter=${1:-01}
shift || true
dir=$(ls -d chapters/"$chapter"_* 2>/dev/null | head -1)
if [ -z "$dir" ]; then
  echo "no chapter $chapter; there are: $(ls chapters | grep -E '^[0-9]{2}_' | tr '\n' ' ')" >&2
  exit 1
fi
name="ch${chapter}_${dir#chapters/"$chapter"_}"
# Chapter 9's executable is its Hopper half (the sm_100a kernel has no GPU to run on here);
# chapter 10 is the library, whose executable is its benchmark against the chapter plans.
case "$chapter" in
  09) name=ch09_hopper_mxfp8 ;;
  10) name=fp8gemm_library_bench ;;
esac
bash scripts/install_deps.sh
cmake --preset default
cmake --build --preset default -j "$(nproc)" --target "$name"
exec build/bin/"$name" "$@"
