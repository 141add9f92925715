#!/usr/bin/env bash
# Sets up, builds (Hopper sm_90a + Blackwell sm_100a) and runs every test. On a machine without
# a GPU the GPU tests are reported as skipped. This is what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
cmake --preset full
cmake --build --preset full -j "$(nproc)"
ctest --preset full -j "$(nproc)"
