#!/usr/bin/env bash
# Installs what building and testing fp8gemm needs on a Debian/Ubuntu machine, skipping what is
# already there: Catch2, Google Benchmark, and doxygen + graphviz for the documentation test
# (apt), cuobjdump + nvdisasm for the SASS tests and matplotlib for the plots (pip). The CUDA toolkit (nvcc >= 12.8) must already be installed:
# NVIDIA's packages, not Debian's, carry a recent enough one.
set -euo pipefail
NVCC=${CUDACXX:-/usr/local/cuda/bin/nvcc}
if ! [ -x "$NVCC" ] && ! command -v nvcc >/dev/null; then
  echo "install_deps: no nvcc found (looked at $NVCC and PATH). Install the CUDA toolkit >= 12.8" >&2
  echo "              from NVIDIA (https://developer.nvidia.com/cuda-downloads), then run again." >&2
  exit 1
fi

need_apt=()
[ -f /usr/include/catch2/catch.hpp ] || [ -d /usr/include/catch2 ] || [ -d /usr/local/include/catch2 ] || need_apt+=(catch2)
[ -f /usr/include/benchmark/benchmark.h ] || [ -f /usr/local/include/benchmark/benchmark.h ] || need_apt+=(libbenchmark-dev)
command -v cmake >/dev/null || need_apt+=(cmake)
command -v doxygen >/dev/null || need_apt+=(doxygen)  # CTest doxygen_config builds the HTML
command -v dot >/dev/null || need_apt+=(graphviz)     # dot: Doxygen's diagram tool
command -v python3 >/dev/null || need_apt+=(python3 python3-pip)
command -v xz >/dev/null || need_apt+=(xz-utils)  # CTest gpu_loop_tests_step packs a call's binaries as .txz
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  echo "install_deps: apt-get install ${need_apt[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

need_pip=()
python3 -c 'import matplotlib' 2>/dev/null || need_pip+=(matplotlib numpy)
if ! command -v cuobjdump >/dev/null && [ ! -x /usr/local/cuda/bin/cuobjdump ]; then
  python3 - <<'PY' 2>/dev/null || need_pip+=(nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)
import glob, os, sys, nvidia
hits = [glob.glob(os.path.join(p, "**", "bin", t), recursive=True)
        for p in nvidia.__path__ for t in ("cuobjdump", "nvdisasm")]
sys.exit(0 if all(hits) else 1)
PY
fi
if [ ${#need_pip[@]} -gt 0 ]; then
  echo "install_deps: pip install ${need_pip[*]}"
  python3 -m pip install -q --disable-pip-version-check "${need_pip[@]}" 2>&1 | grep -v "WARNING: Running pip as" || true
fi
echo "install_deps: ok"
