#!/usr/bin/env bash
# Assembles the importable `fp8gemm` Python package from a build folder into DEST:
#   DEST/fp8gemm/{__init__.py, ops.py, nn.py, _C.so, commit.txt}
# plus the tests, the benchmark and the training example beside it (DEST/fp8gemm_tools/), so that
# DEST alone can be copied to a GPU machine that has torch (the same build: 2.11.0+cu130) and run
#   PYTHONPATH=DEST python3 -c "import fp8gemm"
#
#   bash chapters/10_production/python/stage.sh BUILD_DIR DEST
# BUILD_DIR: a CMake build of this repository configured with a Python that has torch, with the
# target fp8gemm_torch built (cmake --build BUILD_DIR --target fp8gemm_torch).
set -euo pipefail
if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR DEST" >&2
  exit 2
fi
build=$1
dest=$2
here=$(cd "$(dirname "$0")" && pwd)
so="$build/chapters/10_production/python/fp8gemm/_C.so"
if [[ ! -f "$so" ]]; then
  echo "$0: $so not found: configure $build with a Python that has torch" \
       "(-DFP8GEMM_TORCH_PYTHON=...) and build the target fp8gemm_torch" >&2
  exit 1
fi
# The .py files must be the source's (the build copies them only when it relinks).
if [[ "$so" -ot "$here/csrc/ops.cpp" ]]; then
  echo "$0: warning: $so is older than csrc/ops.cpp: rebuild fp8gemm_torch" >&2
fi
mkdir -p "$dest/fp8gemm" "$dest/fp8gemm_tools/tests"
cp "$here"/fp8gemm/*.py "$dest/fp8gemm/"
cp "$so" "$dest/fp8gemm/_C.so"
cp "$here"/tests/*.py "$dest/fp8gemm_tools/tests/"
cp "$here"/bench_torch.py "$here"/train_example.py "$dest/fp8gemm_tools/"
# The README section's example, which a test runs.
cp "$here/../README.md" "$dest/fp8gemm_tools/README_ch10.md"
commit=$(git -C "$here" rev-parse HEAD 2>/dev/null || echo unknown)
# "-dirty" when what _C.so is built from (this folder, the library, common/, chapters 6-9) has
# uncommitted changes in this checkout.
if [[ -n "$(cd "$here" && git status --porcelain -- . ../include ../src ../CMakeLists.txt \
              ../../../common ../../0[6789]_* 2>/dev/null)" ]]; then
  commit="$commit-dirty"
fi
echo "$commit" > "$dest/fp8gemm/commit.txt"
echo "staged fp8gemm ($commit) into $dest"
