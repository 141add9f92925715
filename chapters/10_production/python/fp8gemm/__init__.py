"""fp8gemm for PyTorch: the DeepSeek-V3 block-scaled FP8 GEMMs of fp8gemm (chapter 10) as
torch.library ops, and layers that use them.

    import fp8gemm
    fp8gemm.ops.quantize_1x128(x)              # bf16 [M, K] -> (e4m3 [M, K], float32 scales)
    fp8gemm.ops.gemm_block_scaled(...)         # D = A . B^T, block-scaled, bf16 or float32
    fp8gemm.nn.Fp8Linear(in_features, out_features)   # drop-in for torch.nn.Linear

The compiled part, ``_C.so`` (next to this file), registers the ops as ``torch.ops.fp8gemm.*``;
it is a plain shared library loaded with ``torch.ops.load_library`` (no Python C API), so it
serves any Python version of the torch build it was compiled against. Without it (a source
checkout, or a build without torch) the package still imports: ``available()`` is False,
``unavailable_reason()`` says why, and calling an op raises RuntimeError with that reason.
"""

from __future__ import annotations

import os

import torch

__version__ = "0.9.0"  # the C++ library's version (fp8gemm::version(), CHANGELOG.md)

_HERE = os.path.dirname(os.path.abspath(__file__))
_LIB = os.path.join(_HERE, "_C.so")
_load_error: str | None = None

try:
    if not os.path.exists(_LIB):
        raise OSError(f"{_LIB} does not exist (build the CMake target fp8gemm_torch, then "
                      "chapters/10_production/python/stage.sh)")
    torch.ops.load_library(_LIB)
except OSError as e:  # a missing or unloadable _C.so: the package imports, the ops say why
    _load_error = f"fp8gemm's compiled ops could not be loaded: {e}"


def available() -> bool:
    """Whether the compiled ops (``_C.so``) are loaded. Running them needs a Hopper GPU too."""
    return _load_error is None


def unavailable_reason() -> str | None:
    """Why the compiled ops are not available (None when they are)."""
    return _load_error


from . import ops  # noqa: E402  (after loading _C.so: ops registers the fake implementations)
from . import nn  # noqa: E402

__all__ = ["ops", "nn", "available", "unavailable_reason", "__version__"]
