"""What the fp8gemm PyTorch tests share: skipping rules, pytest stand-ins (the GPU machine may have
no pytest: run_tests.py runs the same files with these), references and error metrics."""

from __future__ import annotations

import contextlib
import os
import re
import sys

# The package: from PYTHONPATH (a staged copy), else the source tree's fp8gemm/ next to tests/
# (which imports without _C.so: the ops then report that they are unavailable).
_HERE = os.path.dirname(os.path.abspath(__file__))
try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:  # pragma: no cover - CI without torch never collects these files
    HAVE_TORCH = False

if HAVE_TORCH:
    try:
        import fp8gemm  # noqa: F401
    except ImportError:
        sys.path.insert(0, os.path.dirname(_HERE))
        import fp8gemm  # noqa: F401

try:
    import pytest
    HAVE_PYTEST = True
except ImportError:
    pytest = None
    HAVE_PYTEST = False


class SkipTest(Exception):
    """Raised by skip() without pytest; the runner counts it as skipped."""


def skip(reason: str):
    if HAVE_PYTEST:
        pytest.skip(reason)
    raise SkipTest(reason)


@contextlib.contextmanager
def raises(exc_type, match: str | None = None):
    """pytest.raises(exc_type, match=...) without pytest: the block must raise exc_type whose
    message matches the regular expression `match` (re.search)."""
    try:
        yield
    except exc_type as e:
        if match is not None and not re.search(match, str(e)):
            raise AssertionError(f"{exc_type.__name__} raised, but its message does not match "
                                 f"{match!r}: {e}") from e
        return
    raise AssertionError(f"{exc_type.__name__} was not raised")


def parametrize(names: str, values):
    """pytest.mark.parametrize, or an attribute that run_tests.py expands."""
    def wrap(f):
        if HAVE_PYTEST:
            return pytest.mark.parametrize(names, values)(f)
        f._params = getattr(f, "_params", []) + [(names, list(values))]
        return f
    return wrap


# ---- what a test needs ---------------------------------------------------------------------------

def gpu_skip_reason() -> str | None:
    """Why the GPU tests cannot run here (None when they can)."""
    if not HAVE_TORCH:
        return "torch is not importable"
    if not torch.cuda.is_available():
        return "no CUDA GPU (torch.cuda.is_available() is False)"
    major, minor = torch.cuda.get_device_capability()
    if (major, minor) != (9, 0):
        return (f"the GPU is compute capability {major}.{minor}; fp8gemm's block-scaled kernels "
                "need an sm_90a GPU (Hopper: H100/H200)")
    if not fp8gemm.available():
        # On a Hopper GPU with torch, missing ops are a broken build or an ABI mismatch: every GPU
        # test skipping would read as a pass, so this fails instead.
        raise RuntimeError("fp8gemm's compiled ops are not available on this sm_90 GPU: "
                           f"{fp8gemm.unavailable_reason()}")
    return None


def require_gpu():
    reason = gpu_skip_reason()
    if reason:
        skip(reason)


def require_ops():
    if not HAVE_TORCH:
        skip("torch is not importable")
    if not fp8gemm.available():
        skip(f"the compiled ops are not available: {fp8gemm.unavailable_reason()}")


# ---- data and references -------------------------------------------------------------------------

def make_bf16(shape, gen, device="cuda", spread=6.0):
    """Fresh random bf16 data, never zero blocks: N(0, 1) with each row scaled by 2^U(-spread/2,
    spread/2), so the groups' scales differ by orders of magnitude."""
    x = torch.randn(shape, generator=gen, device=device, dtype=torch.float32)
    rows = torch.rand(shape[:-1] + (1,), generator=gen, device=device) * spread - spread / 2
    return (x * torch.exp2(rows)).to(torch.bfloat16)


def rel_error(d, ref) -> float:
    """||d - ref||_F / ||ref||_F in float64 (detached: a metric, not part of any graph)."""
    d = d.detach().double()
    ref = ref.detach().double()
    return float((d - ref).norm() / ref.norm())


def tolerance(K: int) -> float:
    """The project's GEMM tolerance against a float64 reference on the dequantised operands
    (common/check.hpp): bf16 output rounding plus FP32 accumulation over K."""
    return 2.0 ** -8 + 2.5e-7 * K


def scale_reference(amax):
    """float32 scales from float32 amax by the project's definition, scale_from_amax in
    common/quantize.hpp (the CPU ground truth that tests/test_quantize_gpu.cu holds the kernels
    to, bit for bit): scale = amax / 448 as ONE IEEE float32 division rounded to nearest (the
    kernels' __fdiv_rn(amax, 448.f)); amax = 0 -> 1; a subnormal quotient (< 2^-126) rounded UP
    to a multiple of 2^-149, from double(amax) / 448 as the C++ does. Finite amax only (the
    tests' data has no NaN / Inf).

    The divisor is a tensor on purpose: on CUDA, torch turns division by a Python scalar into a
    multiplication by the scalar's rounded reciprocal (amax * float(1/448)), which differs from
    the quotient by one ulp for about half of all amax (the first H200 run's failures: scale
    bits 993825354 from amax * (1/448) against the library's correct 993825353). Division of
    two tensors is the elementwise IEEE division."""
    a = amax.float()
    scale = a / torch.full_like(a, 448.0)
    sub = (scale < 2.0 ** -126) & (a > 0)
    if bool(sub.any()):
        # On the CPU in float64 (elementwise IEEE division there), as the C++ computes it.
        tiny = 2.0 ** -149
        a64 = a.double().cpu()
        up = (torch.ceil(a64 / torch.full_like(a64, 448.0) / tiny) * tiny).float().to(a.device)
        scale = torch.where(sub, up, scale)
    return torch.where(a == 0, torch.ones_like(scale), scale)


def e4m3_reference(x32, scale):
    """e4m3(x / scale) as the library's quantisers define it: an IEEE float32 division, round to
    nearest even, saturated to +-448 (torch's cast does not saturate: clamp first)."""
    return (x32 / scale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)


def bits(t):
    """A tensor's bytes as integers, for bitwise comparison (float8 / float32)."""
    if t.dtype == torch.float8_e4m3fn:
        return t.contiguous().view(torch.uint8)
    if t.dtype == torch.float32:
        return t.contiguous().view(torch.int32)
    if t.dtype == torch.bfloat16:
        return t.contiguous().view(torch.int16)
    return t
