#!/usr/bin/env bash
# A Python with torch to *build* the PyTorch ops against, on a machine without a GPU (the CPU
# machine where the project is built; the GPU machine has torch already). Creates a virtual
# environment DEST (default .venv-torch, ignored by git) with the torch wheel the GPU machine runs
# (2.11.0, CUDA 13.0) installed without its dependencies, plus the three NVIDIA libraries
# `import torch` needs at import time and the CUDA toolkit does not provide (cuSPARSELt, NVSHMEM,
# cuFile). Nothing here runs a GPU; the system Python stays without torch, so the project's own
# configure (CI) still builds without the ops and says so.
#
#   bash chapters/10_production/python/torch_for_build.sh [DEST]
#   cmake --preset default -DFP8GEMM_TORCH_PYTHON=$PWD/.venv-torch/bin/python
#   cmake --build build --target fp8gemm_torch
#   bash chapters/10_production/python/stage.sh build /tmp/fp8gemm_py
set -euo pipefail
dest=${1:-.venv-torch}
python3 -m venv "$dest"
# pip then warns that torch's other dependencies are missing: on purpose (nothing here runs it).
"$dest/bin/pip" install -q --no-deps "torch==2.11.0"
"$dest/bin/pip" install -q --no-deps nvidia-cusparselt-cu13==0.8.0 nvidia-nvshmem-cu13==3.4.5 \
  nvidia-cufile
# torch's CMake package reads these at configure time (typing_extensions: torch/__init__ imports it).
"$dest/bin/pip" install -q typing_extensions
# torch's pure-Python dependencies (not its CUDA wheels, triton or NCCL): with them the CPU CTest
# torch_ops_cpu, registered once cmake is given this Python, can run here (it traces the ops
# with torch.compile, which imports sympy and networkx); without them it fails at that import
# (session 24: "import torch._dynamo" -> ModuleNotFoundError).
"$dest/bin/pip" install -q filelock "sympy>=1.13.3" "networkx>=2.5.1" jinja2 "fsspec>=0.8.5" numpy \
  "setuptools<82"
"$dest/bin/python" -c "import torch; print('torch', torch.__version__, 'for building, in', '$dest')"
