"""fp8gemm's ops on torch tensors: the DeepSeek-V3 quantisers and block-scaled FP8 GEMMs.

Every function here calls one op of ``torch.ops.fp8gemm`` (registered by ``_C.so`` through
TORCH_LIBRARY), which
  - checks device, dtype, shape and strides and raises ValueError naming the argument and the rule
    before any GPU work (RuntimeError for a CUDA failure or a GPU that is not Hopper);
  - runs on the current CUDA stream, never synchronises with the host and never reads device data
    on the host: the ops can be captured in CUDA graphs (except gemm_mx with
    dequantize_bf16=True or requantize_block_scaled=True, which refuse capture), and their fake
    implementations (below) let
    ``torch.compile(fullgraph=True)`` trace them;
  - promotes the FP8 products to FP32 every 128 K (numerically safe; there is no fast mode in the
    block-scaled ops; the per-tensor GEMM's ``fast_accum=True`` is opt-in).

Notation: e4m3 = torch.float8_e4m3fn, bf16 = torch.bfloat16; kg = ceil(K / 128),
nb = ceil(N / 128). Row-major = unit stride along the last dimension (the row stride may be larger
than the row, e.g. a column slice, when the rule allows).

Tensors and their layouts (the scale tensors are plain float32 torch tensors whose shape is the
logical grid and whose strides are the layout):

  A        [M, K] e4m3, row-major, row stride a multiple of 16 elements: activations.
  scale_a  [M, kg] float32, 1 x 128 groups: scale_a[m, g] dequantises A[m, 128 g : 128 g + 128].
           Native layout: strides (1, ld), ld = round_up(M, 4) (mn-major, each group column 16-byte
           aligned: DeepGEMM's "TMA-aligned" layout; cuBLASLt's VEC128_32F has ld = M). The GEMMs
           read it in place when its strides are (1, ld) with ld >= M and ld % 4 == 0 and its data is
           16-byte aligned; any other strides are accepted and copied into the native layout (one
           small kernel, enqueued only after the library has accepted the call).
  B        [N, K] e4m3, row-major: weights (torch.nn.Linear's weight is [out, in] = [N, K]).
  scale_b  [nb, kg] float32, 128 x 128 blocks: scale_b[i, j] dequantises
           B[128 i : 128 i + 128, 128 j : 128 j + 128]. Native: contiguous (DeepGEMM's packed
           layout); any row stride >= kg with unit column stride is read in place (cuBLASLt's
           padded one); other strides are copied.
  D        [M, N] bf16 (default) or float32, row-major: D = sum over g of
           scale_a[:, g] scale_b[:, g] (A_g . B_g^T), FP32 accumulation promoted every 128 K.

  Grouped (mixture of experts; G groups, B [G, N, K], scale_b [G, nb, kg]):
    contiguous  A [rows, K] with the rows sorted by group; offsets [G + 1] int32 on the GPU:
                group g owns rows offsets[g] .. offsets[g+1] - 1 (offsets[0] = 0, monotone,
                offsets[G] = rows; any count, 0 included, no padding). scale_a [rows, kg].
                D [rows, N] bf16 (default) or float32 (optionally D += into out=).
    masked      A [G, M_max, K]; masked_m [G] int32 on the GPU: group g's valid rows are
                0 .. masked_m[g] - 1. scale_a [G * M_max, kg] (quantise A.view(G * M_max, K)).
                D [G, M_max, N] bf16 or float32; rows at or past masked_m[g] are NOT written
                (undefined in a new D; an out= keeps what it held there).
    The host never reads offsets / masked_m (CUDA graphs can replay other counts); keeping them
    in range is the caller's job: see chapters/08_grouped_moe/grouped_gemm.hpp.

  Weight gradient (k-grouped over tokens; G = 1 is a dense weight gradient):
    dB_g [N, K] = dD_g^T . A_g over group g's tokens, float32 [G, N, K] (optionally +=) or
    bfloat16 (rounded once from the FP32 sums; no +=).
    Operands transposed and quantised in 1 x 128 groups ALONG THE TOKENS, each group's tokens
    padded to a multiple of 128 columns (quantize_tokens_transposed_1x128):
      dd_t [N, T_cap] e4m3, a_t [K, T_cap] e4m3 (row-major),
      scale_dd_t [N, T_cap / 128], scale_a_t [K, T_cap / 128] float32, strides (1, round_up(rows, 4)).
    offsets are the REAL (unpadded) token offsets [G + 1] int32.

  MXFP8 (chapter 9; OCP Microscaling: e4m3 in blocks of 1 x 32 along K, one UE8M0 code per block):
    q [rows, K] e4m3, K a multiple of 32; scales: a flat torch.uint8 tensor of
    round_up(rows, 128) * round_up(K / 32, 4) codes in the swizzled 128 x 4 tile layout that
    tcgen05 and cuBLAS read: the code of (r, block j) at tile (r // 128) * round_up(K / 32, 4) / 4
    + j // 4, byte (r % 32) * 16 + (r % 128 // 32) * 4 + j % 4 of that 512-byte tile (padding 0);
    value = e4m3 * 2 ** (code - 127) (code 255: NaN). dequantize_mx_1x32 reads it back.
    requantize_mx_1x128 / requantize_mx_128x128 turn such an operand into A / B (with scale_a /
    scale_b) above, NOT exactly (their docstrings): for MX weights that do not change, once.
"""

from __future__ import annotations

from typing import Optional, Tuple

import torch

from . import available, unavailable_reason

Tensor = torch.Tensor
E4M3 = torch.float8_e4m3fn
E4M3_MAX = 448.0


def _ops():
    if not available():
        raise RuntimeError(unavailable_reason())
    return torch.ops.fp8gemm


def _ceil_div(a, b):
    return (a + b - 1) // b


def max_padded_tokens(T: int, G: int) -> int:
    """The most token columns quantize_tokens_transposed_1x128 can need for T tokens in G groups
    (every group padded to a multiple of 128): the default T_cap."""
    return (T + 127 * min(G, T)) // 128 * 128


# ============================================ quantisers ==========================================

def quantize_1x128(x: Tensor, *, pow2_scales: bool = False) -> Tuple[Tensor, Tensor]:
    """Activations: x [M, K] bf16 (row-major) -> (q [M, K] e4m3 contiguous, scale [M, kg] float32,
    strides (1, round_up(M, 4))), one scale per 1 x 128 group: scale = amax / 448 (1 for an
    all-zero group; NaN, with NaN codes, for a group holding NaN or Inf), q = e4m3(x / scale)
    rounded to nearest even and saturated. pow2_scales: scales rounded up to powers of two."""
    return _ops().quantize_1x128(x, pow2_scales)


def quantize_128x128(w: Tensor, *, pow2_scales: bool = False) -> Tuple[Tensor, Tensor]:
    """Weights: w [N, K] bf16 (row-major) -> (q [N, K] e4m3 contiguous, scale [nb, kg] float32
    contiguous), one scale per 128 x 128 block (rules as quantize_1x128)."""
    return _ops().quantize_128x128(w, pow2_scales)


def quantize_128x128_dual(w: Tensor, *, pow2_scales: bool = False
                          ) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    """One read of w [N, K] bf16 gives (q, scale) exactly as quantize_128x128(w), and W^T's
    operand (q_t [K, N] e4m3, scale_t [kg, nb] float32, both contiguous): equal to
    transpose_block_scaled(q, scale) (W^T's 128 x 128 blocks are W's blocks transposed), in one
    launch instead of three."""
    return _ops().quantize_128x128_dual(w, pow2_scales)


def quantize_1x128_dual(x: Tensor, *, pow2_scales: bool = False
                        ) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    """One read of x [M, K] bf16 gives (q, scale) exactly as quantize_1x128(x), and
    (q_t [K, M] e4m3, scale_t [K, ceil(M / 128)] float32 strides (1, round_up(K, 4))): x^T in 1 x 128
    groups along ITS rows (128 consecutive m of one column of x). For M % 128 == 0, (q_t, scale_t)
    equal quantize_tokens_transposed_1x128(x, [0, M]): a dense weight gradient's operand."""
    return _ops().quantize_1x128_dual(x, pow2_scales)


def quantize_tokens_transposed_1x128(x: Tensor, offsets: Tensor, t_pad_capacity: Optional[int] = None,
                                     *, pow2_scales: bool = False) -> Tuple[Tensor, Tensor, Tensor]:
    """Tokens sorted by group, x [T, C] bf16, offsets [G + 1] int32 (GPU) -> the weight
    gradient's operand: (q_t [C, T_cap] e4m3, scale_t [C, T_cap / 128] float32 strides
    (1, round_up(C, 4)), padded_offsets [G + 1] int32). Group g's tokens land at columns
    P_g .. P_g + count_g - 1, P_g = sum over j < g of round_up(count_j, 128); the padding and
    everything from P_G to T_cap are zero codes with zero scales. T_cap defaults to
    max_padded_tokens(T, G), which holds any counts (the host never reads offsets)."""
    return _ops().quantize_tokens_transposed_1x128(x, offsets, t_pad_capacity, pow2_scales)


def quantize_per_tensor(x: Tensor) -> Tuple[Tensor, Tensor]:
    """x (any float dtype) -> (q e4m3 of x's shape, contiguous; scale float32 [1] on x's device):
    scale = amax / 448 (1 for all zeros), q = e4m3(clamp(x / scale, +-448)). Plain torch ops on the
    device (no host sync). For gemm_per_tensor."""
    amax = x.detach().abs().amax().float().reshape(1)
    # The divisor is a tensor: torch computes "tensor / python float" on CUDA as a multiplication
    # by the float's rounded reciprocal, one ulp off the IEEE quotient amax / 448 that the
    # project's quantisers define (common/quantize.hpp) for about half of all amax.
    scale = torch.where(amax > 0, amax / torch.full_like(amax, E4M3_MAX), torch.ones_like(amax))
    q = (x.float() / scale).clamp(-E4M3_MAX, E4M3_MAX).to(E4M3).contiguous()
    return q, scale


def transpose_block_scaled(q: Tensor, scale: Tensor) -> Tuple[Tensor, Tensor]:
    """W^T from W quantised 128 x 128: W [N, K] (q, scale [nb, kg]) -> (q^T [K, N] contiguous,
    scale^T [kg, nb] contiguous). Exact: W^T's 128 x 128 blocks are W's blocks transposed.
    Stacked weights [G, N, K] (scale [G, nb, kg]) transpose per group. The codes go through
    transpose_e4m3 (a tiled kernel); the scale grid is small and goes through torch."""
    return transpose_e4m3(q), scale.transpose(-2, -1).contiguous()


def transpose_e4m3(q: Tensor) -> Tensor:
    """q [rows, cols] (or [batch, rows, cols]) e4m3 -> its transpose [cols, rows] (per batch),
    contiguous. A tiled kernel (64 x 64 bytes through shared memory) when q is contiguous with
    rows and cols multiples of 16; torch's copy otherwise (same result, slower), and for tensors
    that are not on a GPU."""
    if not q.is_cuda:
        return q.transpose(-2, -1).contiguous()
    return _ops().transpose_e4m3(q)


def dense_offsets(M: int, device) -> Tensor:
    """[0, M] int32 on `device` (by a kernel, so it can be captured): the offsets of one group."""
    return torch.arange(2, dtype=torch.int32, device=device) * M


# ---- dequantisation (float32 references; plain torch) --------------------------------------------

def dequantize_1x128(q: Tensor, scale: Tensor) -> Tensor:
    """q [M, K] e4m3 with 1 x 128 group scales [M, kg] -> float32 [M, K]."""
    K = q.shape[1]
    return q.float() * scale.float().repeat_interleave(128, dim=1)[:, :K]


def dequantize_128x128(q: Tensor, scale: Tensor) -> Tensor:
    """q [N, K] e4m3 with 128 x 128 block scales [nb, kg] -> float32 [N, K]."""
    N, K = q.shape
    s = scale.float().repeat_interleave(128, dim=0)[:N].repeat_interleave(128, dim=1)[:, :K]
    return q.float() * s


def quantize_mx_1x32(x: Tensor, *, rule: str = "floor_ocp") -> Tuple[Tensor, Tensor]:
    """MXFP8: x [M, K] bf16 (row-major, K a multiple of 32) -> (q [M, K] e4m3 contiguous, scales
    uint8 [round_up(M, 128) * round_up(K / 32, 4)], the swizzled layout above). rule: "floor_ocp"
    (OCP MX v1.0: floor(log2 amax) - 8, values past 448 saturate) or "rceil" (cuBLAS / torchao:
    the smallest power of two with amax / 2^e <= 448). An all-zero block gets code 127; a block
    holding NaN or Inf code 255 and NaN codes."""
    return _ops().quantize_mx_1x32(x, rule)


def requantize_mx_1x128(q: Tensor, scale: Tensor) -> Tuple[Tensor, Tensor]:
    """MXFP8 activations -> chapter 7's format, NOT EXACT: q [M, K] e4m3 (row-major, K a multiple
    of 32, its data 16-byte aligned and its row stride a multiple of 16, as the GEMMs need; a
    contiguous q from quantize_mx_1x32 is) with its swizzled UE8M0 scales (as quantize_mx_1x32
    returns them) -> (q [M, K] e4m3 contiguous, scale [M, ceil(K / 128)] float32), what
    quantize_1x128 returns, for gemm_block_scaled's a and scale_a. Each 1 x 128 group gets the
    largest of its MX scales (up to four; a power of two; blocks holding only zeros do not count)
    and the codes of its other blocks are shifted onto it, rounded to nearest even: elements about
    2^14 or more below the group's largest value lose bits or flush to zero, and a group holding
    a NaN (code or element) becomes NaN throughout (docs/fp8_numerics.md). What gemm_mx(..., requantize_block_scaled=True) does
    inside; as two calls it lets fixed MX weights be re-quantised once (requantize_mx_128x128)
    and only the activations per step."""
    return _ops().requantize_mx_1x128(q, scale)


def requantize_mx_128x128(q: Tensor, scale: Tensor) -> Tuple[Tensor, Tensor]:
    """MXFP8 weights -> chapter 7's format, NOT EXACT, as requantize_mx_1x128 with one scale per
    128 x 128 block (the same rules for q): q [N, K] e4m3 with its swizzled UE8M0 scales -> (q
    [N, K] e4m3 contiguous, scale [ceil(N / 128), ceil(K / 128)] float32 contiguous), what
    quantize_128x128 returns, for gemm_block_scaled's b and scale_b."""
    return _ops().requantize_mx_128x128(q, scale)


def mx_scale_index(rows: int, K: int, device=None) -> Tensor:
    """int64 [rows, K / 32]: where the code of (row, block) lies in a swizzled scale tensor."""
    r = torch.arange(rows, device=device).unsqueeze(1)
    j = torch.arange(K // 32, device=device).unsqueeze(0)
    tiles_k = _ceil_div(K // 32, 4)
    return ((r // 128) * tiles_k + j // 4) * 512 + (r % 32) * 16 + (r % 128 // 32) * 4 + j % 4


def dequantize_mx_1x32(q: Tensor, scales: Tensor) -> Tensor:
    """q [rows, K] e4m3 with its swizzled UE8M0 scales -> float32 [rows, K] (plain torch; exact
    wherever float32 holds the value)."""
    rows, K = q.shape
    codes = scales.to(torch.int64)[mx_scale_index(rows, K, q.device)]  # [rows, K / 32]
    s = torch.where(codes == 255, torch.full_like(codes, 0, dtype=torch.float64) + float("nan"),
                    torch.exp2(codes.double() - 127))
    return (q.double() * s.repeat_interleave(32, dim=1)).float()


# ============================================== GEMMs =============================================

def _check_out(who: str, out_dtype: Optional[torch.dtype], out: Optional[Tensor],
               accumulate: bool, d: str = "D") -> None:
    """Every GEMM wrapper's out= rules: accumulate needs out (there is nothing to add to without
    it); an out_dtype given beside out= must be out's dtype (refused, not ignored). No closures:
    the wrappers' host overhead is timed (bench_torch.py, "Python wrapper")."""
    if out is None:
        if accumulate:
            raise ValueError(f"fp8gemm.{who}: accumulate=True needs out= (a float32 {d} to add to)")
    elif out_dtype is not None and out_dtype != out.dtype:
        raise ValueError(f"fp8gemm.{who}: out_dtype={out_dtype} but out is {out.dtype}: give one "
                         "of them")


def gemm_block_scaled(a: Tensor, scale_a: Tensor, b: Tensor, scale_b: Tensor,
                      out_dtype: Optional[torch.dtype] = None, *, out: Optional[Tensor] = None,
                      accumulate: bool = False) -> Tensor:
    """D [M, N] = A [M, K] . B [N, K]^T with A in 1 x 128 groups (scale_a [M, kg]) and B in
    128 x 128 blocks (scale_b [nb, kg]): DeepSeek-V3's recipe, FP32 promotion every 128 K.
    K a multiple of 16 (the last 128-block may be partial); any M, N.
    out_dtype: D's dtype, bfloat16 (the default) or float32.
    out: write into this [M, N] tensor (bf16 or float32, row-major, any row stride) instead of a
    new one (out_dtype, if given, must be out's dtype); accumulate=True (float32 out only):
    D = A.B^T + out."""
    _check_out("gemm_block_scaled", out_dtype, out, accumulate)
    if out is None:
        return _ops().gemm_block_scaled(a, scale_a, b, scale_b, out_dtype)  # None: bf16
    _ops().gemm_block_scaled_out(a, scale_a, b, scale_b, out, accumulate)
    return out


def _grouped(who: str, a: Tensor, scale_a: Tensor, b: Tensor, scale_b: Tensor, groups: Tensor,
             out_dtype: Optional[torch.dtype], out: Optional[Tensor], accumulate: bool,
             check_offsets: bool) -> Tensor:
    """The grouped forward op `who` (gemm_grouped_contiguous or gemm_grouped_masked; groups: its
    offsets or masked_m) into a new D of out_dtype, or into out (the op's _out twin)."""
    _check_out(who, out_dtype, out, accumulate)
    if out is None:
        return getattr(_ops(), who)(a, scale_a, b, scale_b, groups, check_offsets, out_dtype)
    getattr(_ops(), who + "_out")(a, scale_a, b, scale_b, groups, out, accumulate, check_offsets)
    return out


def gemm_grouped_contiguous(a: Tensor, scale_a: Tensor, b: Tensor, scale_b: Tensor,
                            offsets: Tensor, out_dtype: Optional[torch.dtype] = None, *,
                            out: Optional[Tensor] = None, accumulate: bool = False,
                            check_offsets: bool = False) -> Tensor:
    """Mixture-of-experts forward: D [rows, N], D[rows of g] = A[rows of g] . B[g]^T for every
    group g in one launch. a [rows, K] e4m3 (rows sorted by group), scale_a [rows, kg];
    b [G, N, K] e4m3, scale_b [G, nb, kg]; offsets [G + 1] int32 on the GPU. Bf16 calls with
    fewer than 1024 rows per group on average (2048 at K >= 4096) draw their tiles from a device
    counter the op keeps per stream (a fresh one per call while capturing a CUDA graph): chapter
    8's counter schedule.
    out_dtype: D's dtype, bfloat16 (the default) or float32 (the FP32 kernels, no bf16 rounding).
    out: write into this [rows, N] tensor (bf16 or float32, row-major, any row stride) instead of
    a new one (out_dtype, if given, must be out's dtype); accumulate=True (float32 out only):
    D = A.B^T + out in every group's rows.

    offsets are device data the host never reads: their rules (offsets[0] == 0, not decreasing,
    offsets[G] == rows) are the caller's. Broken, they give wrong rows (never a write outside
    D; rows no group covers are left unwritten) without an error. check_offsets=True validates
    them on the GPU first and raises RuntimeError naming the entry and the rule (nothing is
    computed then); it copies the verdict back and synchronises, so it is for debugging, and a
    CUDA graph cannot capture it (ValueError)."""
    return _grouped("gemm_grouped_contiguous", a, scale_a, b, scale_b, offsets, out_dtype, out,
                    accumulate, check_offsets)


def gemm_grouped_masked(a: Tensor, scale_a: Tensor, b: Tensor, scale_b: Tensor,
                        masked_m: Tensor, out_dtype: Optional[torch.dtype] = None, *,
                        out: Optional[Tensor] = None, accumulate: bool = False,
                        check_offsets: bool = False) -> Tensor:
    """Masked grouped GEMM (decoding): a [G, M_max, K] e4m3, scale_a [G * M_max, kg],
    b [G, N, K], scale_b [G, nb, kg], masked_m [G] int32 (GPU) -> D [G, M_max, N] (bfloat16, or
    float32 with out_dtype=torch.float32) whose rows at or past masked_m[g] are left unwritten
    (with out=, they keep what out held, accumulate or not). out and accumulate as
    gemm_grouped_contiguous's (out [G, M_max, N], one row-major [G * M_max, N] matrix).
    check_offsets=True validates masked_m (0 <= masked_m[g] <= M_max) on the GPU first, as
    gemm_grouped_contiguous's."""
    return _grouped("gemm_grouped_masked", a, scale_a, b, scale_b, masked_m, out_dtype, out,
                    accumulate, check_offsets)


def gemm_weight_grad(dd_t: Tensor, scale_dd_t: Tensor, a_t: Tensor, scale_a_t: Tensor,
                     offsets: Tensor, *, out: Optional[Tensor] = None,
                     accumulate: bool = False,
                     out_dtype: Optional[torch.dtype] = None,
                     check_offsets: bool = False) -> Tensor:
    """Weight gradients dB [G, N, K], dB[g] = dD_g^T . A_g over group g's tokens (k-grouped),
    float32, or bfloat16 (out_dtype=torch.bfloat16 or a bfloat16 out=): each element rounded once
    from its FP32 sum, half the bytes written and no float32 dB to convert. dd_t [N, T_cap] and
    a_t [K, T_cap] with their scales as quantize_tokens_transposed_1x128 returns them; offsets
    [G + 1] int32, the real token offsets. A group without tokens gets zeros (or, with
    accumulate, is left as it is).
    out: a float32 or bfloat16 [G, N, K] tensor (row-major, any row stride) to write
    (accumulate=False), or a float32 one to add to (accumulate=True).
    check_offsets=True validates offsets on the GPU first (offsets[0] == 0, not decreasing, and
    the padded token total, each count rounded up to 128, at most T_cap: a T_cap smaller than
    max_padded_tokens(T, G) truncates the last groups' gradients silently otherwise) and raises
    RuntimeError on a violation, as gemm_grouped_contiguous's."""
    _check_out("gemm_weight_grad", out_dtype, out, accumulate, d="dB")
    if out is None:
        return _ops().gemm_weight_grad(dd_t, scale_dd_t, a_t, scale_a_t, offsets, out_dtype,
                                       check_offsets)
    _ops().gemm_weight_grad_out(dd_t, scale_dd_t, a_t, scale_a_t, offsets, out, accumulate,
                                check_offsets)
    return out


def gemm_per_tensor(a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor, *,
                    fast_accum: bool = False, out_dtype: Optional[torch.dtype] = None,
                    out: Optional[Tensor] = None, accumulate: bool = False) -> Tensor:
    """The per-tensor GEMM (chapter 6's math): D [M, N] = scale_a scale_b A . B^T, a [M, K] and b [N, K]
    e4m3 row-major (unit stride along K; a row stride >= K, a multiple of 16 bytes, and the data
    16-byte aligned: such a column slice of a wider matrix is read in place), scale_a / scale_b
    one-element float32 tensors on the GPU (read there).
    out_dtype: D's dtype, bfloat16 (the default) or float32 (the library's FP32 kernels, D rounded
    once to float32).
    out: write into this [M, N] tensor (bf16 or float32, row-major, any row stride) instead of a
    new one (out_dtype, if given, must be out's dtype); accumulate=True (float32 out only):
    D = scale_a scale_b A . B^T + out (e.g. a weight gradient summed over micro-batches).
    FP32 promotion every 128 K by default; fast_accum=True uses the tensor cores' own
    accumulation only (faster, less accurate over long K: see chapter 6)."""
    _check_out("gemm_per_tensor", out_dtype, out, accumulate)
    if out is None:
        return _ops().gemm_per_tensor(a, b, scale_a, scale_b, fast_accum, out_dtype)
    _ops().gemm_per_tensor_out(a, b, scale_a, scale_b, out, accumulate, fast_accum)
    return out


def gemm_mx(a: Tensor, scale_a: Tensor, b: Tensor, scale_b: Tensor,
            out_dtype: Optional[torch.dtype] = None, *, out: Optional[Tensor] = None,
            accumulate: bool = False, dequantize_bf16: bool = False,
            requantize_block_scaled: bool = False) -> Tensor:
    """MXFP8 GEMM: D [M, N] = sum over 32-K blocks of 2^(ea - 127) 2^(eb - 127) A_blk . B_blk^T;
    a [M, K] and b [N, K] e4m3 (row-major, K a multiple of 32), scale_a / scale_b as
    quantize_mx_1x32 returns them. On Hopper chapter 9's kernel (a promotion per 32 K) runs;
    dequantize_bf16=True runs its second path instead (A and B dequantised to bf16, exactly, into
    a workspace the cached plan owns, (M + N) K 2 bytes, then a bf16 GEMM: 1.6-1.9x faster at
    large M on the H200; chapter 9's README). requantize_block_scaled=True runs its third path,
    NOT EXACT: A and B re-quantised into chapter 7's format (one power-of-two scale per 1 x 128
    group of A and 128 x 128 block of B) in the plan's workspace, then chapter 7's GEMM (0.73-0.88x
    chapter 7's speed on an H100; elements about 2^14 below their group's largest value lose bits:
    docs/fp8_numerics.md). At most one of the two. Their plans are kept per stream, and both paths
    refuse CUDA-graph capture (ValueError): the cache may free a workspace while a graph uses it.
    out_dtype: D's dtype, bfloat16 (the default) or float32 (every path; the Blackwell kernel's
    float D is compiled, never run, as that whole kernel). out: write into this [M, N] tensor (bf16 or
    float32, row-major, any row stride) instead of a new one (out_dtype, if given, must be out's
    dtype); accumulate=True (float32 out only): D = A.B^T + out."""
    _check_out("gemm_mx", out_dtype, out, accumulate)
    if out is None:
        return _ops().gemm_mx(a, scale_a, b, scale_b, dequantize_bf16, requantize_block_scaled,
                              out_dtype)
    _ops().gemm_mx_out(a, scale_a, b, scale_b, out, accumulate, dequantize_bf16,
                       requantize_block_scaled)
    return out


# ============================================ plan cache ==========================================

def plan_cache_stats() -> dict:
    """The GEMM ops' plan cache: hits, misses (plans built), plans held, capacity (per plan type),
    rebinds (hits whose buffers differed from the cached plan's: it was re-pointed at them),
    tile_counter_runs (grouped launches that took the counter schedule's per-stream counter).
    Plans are keyed by everything but the buffers (device, shapes, strides, dtypes, options)."""
    h, m, n, c, r, t = _ops()._plan_cache_stats()
    return {"hits": h, "misses": m, "size": n, "capacity": c, "rebinds": r, "tile_counter_runs": t}


def plan_cache_clear() -> None:
    """Drops every cached plan and zeroes the counters."""
    _ops()._plan_cache_clear()


def set_plan_cache_capacity(capacity: int) -> None:
    """Plans kept per plan type (default 1024; 0 builds a plan on every call)."""
    _ops()._plan_cache_set_capacity(capacity)


def set_max_sms(max_sms: int) -> None:
    """SMs the persistent grid of every GEMM op may use from the next call on, in this process
    (0, the default: all of them), as DeepGEMM's ``set_num_sms``: the other SMs stay free for
    kernels that run beside the GEMM, an expert-parallel all-to-all for one. At least one thread
    block cluster runs (a kernel with 2-CTA clusters given 1 uses 2). Each call reads it once; it
    is part of every GEMM plan's key, so a changed value builds new plans (a CUDA graph keeps the
    grid it captured). The kernel of a dispatch-table shape is then re-chosen for that many SMs
    (the library's rule ``table_sms``: the sweep's times scaled by each kernel's waves). The
    quantisers ignore it. A process setting, not an op: call it outside torch.compile'd functions.
    ValueError for a negative value."""
    _ops()._set_max_sms(int(max_sms))


def get_max_sms() -> int:
    """The value set_max_sms set (0: all SMs)."""
    return int(_ops()._max_sms())


def library_version() -> str:
    """The C++ library's version string (fp8gemm::version())."""
    return _ops()._library_version()


# ===================================== fake (meta) implementations ================================
# Shapes, dtypes and strides of every output, for FakeTensor tracing (torch.compile, torch.export)
# and meta tensors. They must match the CUDA ops exactly, strides included (tests check both).

def _round4(n):
    return (n + 3) // 4 * 4


if available():
    @torch.library.register_fake("fp8gemm::quantize_1x128")
    def _quantize_1x128_fake(x, pow2_scales=False):
        M, K = x.shape
        q = x.new_empty((M, K), dtype=E4M3)
        s = torch.empty_strided((M, _ceil_div(K, 128)), (1, _round4(M)), dtype=torch.float32,
                                device=x.device)
        return q, s

    @torch.library.register_fake("fp8gemm::quantize_128x128")
    def _quantize_128x128_fake(w, pow2_scales=False):
        N, K = w.shape
        return (w.new_empty((N, K), dtype=E4M3),
                w.new_empty((_ceil_div(N, 128), _ceil_div(K, 128)), dtype=torch.float32))

    @torch.library.register_fake("fp8gemm::quantize_128x128_dual")
    def _quantize_128x128_dual_fake(w, pow2_scales=False):
        N, K = w.shape
        nb, kg = _ceil_div(N, 128), _ceil_div(K, 128)
        return (w.new_empty((N, K), dtype=E4M3), w.new_empty((nb, kg), dtype=torch.float32),
                w.new_empty((K, N), dtype=E4M3), w.new_empty((kg, nb), dtype=torch.float32))

    @torch.library.register_fake("fp8gemm::quantize_1x128_dual")
    def _quantize_1x128_dual_fake(x, pow2_scales=False):
        M, K = x.shape
        q, s = _quantize_1x128_fake(x)
        q_t = x.new_empty((K, M), dtype=E4M3)
        s_t = torch.empty_strided((K, _ceil_div(M, 128)), (1, _round4(K)), dtype=torch.float32,
                                  device=x.device)
        return q, s, q_t, s_t

    @torch.library.register_fake("fp8gemm::quantize_tokens_transposed_1x128")
    def _quantize_tokens_fake(x, offsets, t_pad_capacity=None, pow2_scales=False):
        T, C = x.shape
        G = offsets.shape[0] - 1
        cap = t_pad_capacity
        if cap is None:
            cap = (T + 127 * torch.sym_min(G, T)) // 128 * 128
        q_t = x.new_empty((C, cap), dtype=E4M3)
        s_t = torch.empty_strided((C, _ceil_div(cap, 128)), (1, _round4(C)), dtype=torch.float32,
                                  device=x.device)
        return q_t, s_t, offsets.new_empty((G + 1,))

    def _dense_out_dtype(who, out_dtype):
        """out_dtype as the ops take it (refused as they refuse it)."""
        dt = torch.bfloat16 if out_dtype is None else out_dtype
        if dt not in (torch.bfloat16, torch.float32):
            raise ValueError(f"fp8gemm.{who}: out_dtype must be torch.bfloat16 or torch.float32; "
                             f"got {dt}")
        return dt

    @torch.library.register_fake("fp8gemm::gemm_block_scaled")
    def _gemm_block_scaled_fake(a, scale_a, b, scale_b, out_dtype=None):
        dt = _dense_out_dtype("gemm_block_scaled", out_dtype)
        return a.new_empty((a.shape[0], b.shape[0]), dtype=dt)

    @torch.library.register_fake("fp8gemm::gemm_block_scaled_out")
    def _gemm_block_scaled_out_fake(a, scale_a, b, scale_b, out, accumulate=False):
        return None

    @torch.library.register_fake("fp8gemm::gemm_grouped_contiguous")
    def _gemm_grouped_contiguous_fake(a, scale_a, b, scale_b, offsets, check_offsets=False,
                                      out_dtype=None):
        dt = _dense_out_dtype("gemm_grouped_contiguous", out_dtype)
        return a.new_empty((a.shape[0], b.shape[1]), dtype=dt)

    @torch.library.register_fake("fp8gemm::gemm_grouped_masked")
    def _gemm_grouped_masked_fake(a, scale_a, b, scale_b, masked_m, check_offsets=False,
                                  out_dtype=None):
        dt = _dense_out_dtype("gemm_grouped_masked", out_dtype)
        return a.new_empty((a.shape[0], a.shape[1], b.shape[1]), dtype=dt)

    @torch.library.register_fake("fp8gemm::gemm_grouped_contiguous_out")
    def _gemm_grouped_contiguous_out_fake(a, scale_a, b, scale_b, offsets, out, accumulate=False,
                                          check_offsets=False):
        return None

    @torch.library.register_fake("fp8gemm::gemm_grouped_masked_out")
    def _gemm_grouped_masked_out_fake(a, scale_a, b, scale_b, masked_m, out, accumulate=False,
                                      check_offsets=False):
        return None

    @torch.library.register_fake("fp8gemm::gemm_weight_grad")
    def _gemm_weight_grad_fake(dd_t, scale_dd_t, a_t, scale_a_t, offsets, out_dtype=None,
                               check_offsets=False):
        return dd_t.new_empty((offsets.shape[0] - 1, dd_t.shape[0], a_t.shape[0]),
                              dtype=out_dtype if out_dtype is not None else torch.float32)

    @torch.library.register_fake("fp8gemm::gemm_weight_grad_out")
    def _gemm_weight_grad_out_fake(dd_t, scale_dd_t, a_t, scale_a_t, offsets, out,
                                   accumulate=False, check_offsets=False):
        return None

    @torch.library.register_fake("fp8gemm::gemm_per_tensor")
    def _gemm_per_tensor_fake(a, b, scale_a, scale_b, fast_accum=False, out_dtype=None):
        dt = _dense_out_dtype("gemm_per_tensor", out_dtype)
        return a.new_empty((a.shape[0], b.shape[0]), dtype=dt)

    @torch.library.register_fake("fp8gemm::gemm_per_tensor_out")
    def _gemm_per_tensor_out_fake(a, b, scale_a, scale_b, out, accumulate=False, fast_accum=False):
        return None

    @torch.library.register_fake("fp8gemm::transpose_e4m3")
    def _transpose_e4m3_fake(q):
        shape = (q.shape[1], q.shape[0]) if q.dim() == 2 else (q.shape[0], q.shape[2], q.shape[1])
        return q.new_empty(shape)

    @torch.library.register_fake("fp8gemm::quantize_mx_1x32")
    def _quantize_mx_1x32_fake(x, rule="floor_ocp"):
        M, K = x.shape
        n = (_ceil_div(M, 128) * 128) * (_ceil_div(K // 32, 4) * 4) if M and K else 0
        return x.new_empty((M, K), dtype=E4M3), x.new_empty((n,), dtype=torch.uint8)

    @torch.library.register_fake("fp8gemm::requantize_mx_1x128")
    def _requantize_mx_1x128_fake(q, scale):
        M, K = q.shape
        s = torch.empty_strided((M, _ceil_div(K, 128)), (1, _round4(M)), dtype=torch.float32,
                                device=q.device)
        return q.new_empty((M, K)), s

    @torch.library.register_fake("fp8gemm::requantize_mx_128x128")
    def _requantize_mx_128x128_fake(q, scale):
        N, K = q.shape
        return (q.new_empty((N, K)),
                q.new_empty((_ceil_div(N, 128), _ceil_div(K, 128)), dtype=torch.float32))

    @torch.library.register_fake("fp8gemm::gemm_mx")
    def _gemm_mx_fake(a, scale_a, b, scale_b, dequantize_bf16=False,
                      requantize_block_scaled=False, out_dtype=None):
        if dequantize_bf16 and requantize_block_scaled:  # as the op refuses it
            raise ValueError("fp8gemm.gemm_mx: dequantize_bf16=True and requantize_block_scaled="
                             "True are two different paths: set one of them")
        dt = _dense_out_dtype("gemm_mx", out_dtype)
        return a.new_empty((a.shape[0], b.shape[0]), dtype=dt)

    @torch.library.register_fake("fp8gemm::gemm_mx_out")
    def _gemm_mx_out_fake(a, scale_a, b, scale_b, out, accumulate=False, dequantize_bf16=False,
                          requantize_block_scaled=False):
        if dequantize_bf16 and requantize_block_scaled:
            raise ValueError("fp8gemm.gemm_mx_out: dequantize_bf16=True and "
                             "requantize_block_scaled=True are two different paths: set one of "
                             "them")
        return None

    @torch.library.register_fake("fp8gemm::_gemm_block_scaled_loop")
    def _gemm_block_scaled_loop_fake(a, scale_a, b, scale_b, out, iters):
        return None


__all__ = [
    "quantize_1x128", "quantize_128x128", "quantize_128x128_dual", "quantize_1x128_dual",
    "quantize_tokens_transposed_1x128",
    "quantize_per_tensor", "transpose_block_scaled", "transpose_e4m3", "dense_offsets", "max_padded_tokens",
    "dequantize_1x128", "dequantize_128x128", "gemm_block_scaled", "gemm_grouped_contiguous",
    "gemm_grouped_masked", "gemm_weight_grad", "gemm_per_tensor", "quantize_mx_1x32",
    "dequantize_mx_1x32", "requantize_mx_1x128", "requantize_mx_128x128", "mx_scale_index",
    "gemm_mx", "plan_cache_stats",
    "plan_cache_clear", "set_plan_cache_capacity", "set_max_sms", "get_max_sms", "library_version",
    "E4M3", "E4M3_MAX",
]
