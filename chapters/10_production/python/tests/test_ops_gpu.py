"""The ops on an sm_90a GPU: each against a reference (the quantisers bit for bit against the
recipe in torch; the GEMMs against a float64 GEMM of the dequantised operands), shapes that are
not multiples of the tiles, fresh random data per test (never zeros), misuse refused with clear
messages (and no CUDA error left behind), determinism, the plan cache. Skipped without one."""

import re

import torch

import fp8gemm
from _testlib import (bits, e4m3_reference, make_bf16, parametrize, raises, rel_error, require_gpu,
                      scale_reference, tolerance)
from fp8gemm import ops

E4 = torch.float8_e4m3fn


def _gen(seed):
    return torch.Generator(device="cuda").manual_seed(seed)


def _ceil(a, b):
    return (a + b - 1) // b


# ============================================ quantisers ==========================================

def _ref_1x128(x, scale_of=scale_reference):
    """(q, scale [M, kg]) of bf16 x [M, K] by the recipe: scale = scale_of(amax) per 1 x 128 group
    (scale_reference: amax / 448, the project's IEEE float32 quotient, 1 for an all-zero group;
    _pow2_scale_reference for pow2_scales), q = e4m3(x / scale)."""
    M, K = x.shape
    kg = _ceil(K, 128)
    xp = torch.zeros(M, kg * 128, device=x.device, dtype=torch.float32)
    xp[:, :K] = x.float()
    amax = xp.view(M, kg, 128).abs().amax(-1)
    scale = scale_of(amax)
    q = e4m3_reference(xp, scale.repeat_interleave(128, 1))[:, :K]
    return q, scale


def _ref_128x128(w, scale_of=scale_reference):
    N, K = w.shape
    nb, kg = _ceil(N, 128), _ceil(K, 128)
    wp = torch.zeros(nb * 128, kg * 128, device=w.device, dtype=torch.float32)
    wp[:N, :K] = w.float()
    amax = wp.view(nb, 128, kg, 128).abs().amax(dim=(1, 3))
    scale = scale_of(amax)
    full = scale.repeat_interleave(128, 0).repeat_interleave(128, 1)
    return e4m3_reference(wp, full)[:N, :K], scale


@parametrize("M,K", [(1, 16), (7, 300), (200, 1040), (513, 7168)])
def test_quantize_1x128_bitwise(M, K):
    require_gpu()
    x = make_bf16((M, K), _gen(M * 7 + K))
    q, s = ops.quantize_1x128(x)
    q_ref, s_ref = _ref_1x128(x)
    assert q.shape == (M, K) and q.dtype == E4 and q.is_contiguous()
    assert s.shape == (M, _ceil(K, 128)) and s.stride() == (1, _ceil(M, 4) * 4)
    assert torch.equal(bits(s), bits(s_ref))
    assert torch.equal(bits(q), bits(q_ref))


def test_quantize_1x128_strided_input_and_pow2():
    require_gpu()
    big = make_bf16((300, 1100), _gen(3))
    x = big[:, 20:1060]  # row stride 1100, not a multiple of 8: the scalar path
    q, s = ops.quantize_1x128(x)
    q_ref, s_ref = _ref_1x128(x.contiguous())
    assert torch.equal(bits(q), bits(q_ref)) and torch.equal(bits(s), bits(s_ref))
    q2, s2 = ops.quantize_1x128(x, pow2_scales=True)
    m, e = torch.frexp(s2)
    assert torch.all(m == 0.5), "pow2 scales must be powers of two"
    assert torch.all(s2 >= s_ref) and torch.all(s2 < 2 * s_ref)
    kg = s2.shape[1]
    expect = e4m3_reference(x.float(), s2.repeat_interleave(128, 1)[:, :x.shape[1]])
    assert kg == 9 and torch.equal(bits(q2), bits(expect))


@parametrize("N,K", [(1, 16), (130, 300), (264, 1040), (2112, 7168)])
def test_quantize_128x128_bitwise(N, K):
    require_gpu()
    w = make_bf16((N, K), _gen(N + K))
    q, s = ops.quantize_128x128(w)
    q_ref, s_ref = _ref_128x128(w)
    assert s.shape == (_ceil(N, 128), _ceil(K, 128)) and s.is_contiguous()
    assert torch.equal(bits(s), bits(s_ref))
    assert torch.equal(bits(q), bits(q_ref))


@parametrize("N,K", [(1, 16), (130, 300), (264, 1040), (2112, 7168), (7168, 2112)])
def test_quantize_128x128_dual(N, K):
    """W and W^T from one read: (q, s) equal quantize_128x128's, (q_t, s_t) equal
    transpose_block_scaled's, bit for bit (partial blocks both ways; a strided w takes the
    scalar path, pow2 scales)."""
    require_gpu()
    w = make_bf16((N, K), _gen(3 * N + K))
    for src, pow2 in ((w, False), (w, True)):
        q, s, qt, st = ops.quantize_128x128_dual(src, pow2_scales=pow2)
        q1, s1 = ops.quantize_128x128(src, pow2_scales=pow2)
        qt1, st1 = ops.transpose_block_scaled(q1, s1)
        assert qt.shape == (K, N) and st.shape == (_ceil(K, 128), _ceil(N, 128))
        assert qt.is_contiguous() and st.is_contiguous()
        assert torch.equal(bits(q), bits(q1)) and torch.equal(bits(s), bits(s1))
        assert torch.equal(bits(qt), bits(qt1)) and torch.equal(bits(st), bits(st1))
    if K > 16:
        big = make_bf16((N, K + 6), _gen(N + 7))
        ws = big[:, 3:K + 3]  # row stride K + 6, an odd offset: the scalar paths
        q, s, qt, st = ops.quantize_128x128_dual(ws)
        q_ref, s_ref = _ref_128x128(ws.contiguous())
        assert torch.equal(bits(q), bits(q_ref)) and torch.equal(bits(s), bits(s_ref))
        assert torch.equal(bits(qt), bits(q_ref.t().contiguous()))
        assert torch.equal(bits(st), bits(s_ref.t().contiguous()))


@parametrize("M,K", [(200, 1040), (384, 256)])
def test_quantize_dual(M, K):
    require_gpu()
    x = make_bf16((M, K), _gen(M + 5 * K))
    q, s, qt, st = ops.quantize_1x128_dual(x)
    q1, s1 = ops.quantize_1x128(x)
    assert torch.equal(bits(q), bits(q1)) and torch.equal(bits(s), bits(s1))
    qt_ref, st_ref = _ref_1x128(x.t().contiguous())
    assert qt.shape == (K, M) and st.shape == (K, _ceil(M, 128))
    assert st.stride() == (1, _ceil(K, 4) * 4)
    assert torch.equal(bits(qt), bits(qt_ref)) and torch.equal(bits(st), bits(st_ref))


def _pow2_scale_reference(amax):
    """scale_from_amax's power-of-two rule (common/quantize.hpp): 2^ceil(log2(amax / 448)) from
    amax's exponent and mantissa (amax = f 2^e2, f in [0.5, 1): e2 - 9, + 1 where f > 0.875), at
    least 2^-149; 1 for amax = 0."""
    f, e2 = torch.frexp(amax)
    e = (e2 - 9 + (f > 0.875).to(e2.dtype)).clamp(min=-149)
    s = torch.ldexp(torch.ones_like(amax), e)
    return torch.where(amax == 0, torch.ones_like(amax), s)


@parametrize("M,K", [(200, 1040), (384, 256)])
def test_quantize_pow2_dual_and_tokens(M, K):
    """pow2_scales=True on the fused quantisers against the definition (until session 44 only the
    single 1 x 128 quantiser was; the 128 x 128 dual only against the library's own 128 x 128):
    both halves of quantize_1x128_dual, quantize_tokens_transposed_1x128 and quantize_128x128."""
    require_gpu()
    x = make_bf16((M, K), _gen(M + 7 * K))

    q, s, qt, st = ops.quantize_1x128_dual(x, pow2_scales=True)
    for got_q, got_s, src in ((q, s, x), (qt, st, x.t().contiguous())):
        q_ref, s_ref = _ref_1x128(src, _pow2_scale_reference)
        assert torch.all(torch.frexp(got_s)[0] == 0.5), "pow2 scales must be powers of two"
        assert torch.equal(bits(got_s), bits(s_ref)) and torch.equal(bits(got_q), bits(q_ref))
    # the tokens quantiser with one group of all M tokens: x^T's quantisation along the tokens
    q2, s2, _ = ops.quantize_tokens_transposed_1x128(x, ops.dense_offsets(M, "cuda"),
                                                     pow2_scales=True)
    kgm = _ceil(M, 128)
    assert torch.equal(bits(q2[:, :M]), bits(qt)) and torch.equal(bits(s2[:, :kgm]), bits(st))
    # 128 x 128 blocks
    w = make_bf16((M, K), _gen(M + 9 * K))
    qw, sw = ops.quantize_128x128(w, pow2_scales=True)
    qw_ref, sw_ref = _ref_128x128(w, _pow2_scale_reference)
    assert torch.equal(bits(sw), bits(sw_ref)) and torch.equal(bits(qw), bits(qw_ref))


def _random_offsets(T, G, gen, empty=(1,)):
    """G + 1 int32 offsets of T tokens, groups in `empty` without tokens, no count a multiple of
    128 (in general)."""
    w = torch.rand(G, generator=gen, device="cuda") + 0.2
    for g in empty:
        if g < G:
            w[g] = 0
    counts = torch.floor(w / w.sum() * T).to(torch.int64)
    counts[int(torch.argmax(w))] += T - int(counts.sum())
    off = torch.zeros(G + 1, dtype=torch.int64, device="cuda")
    off[1:] = torch.cumsum(counts, 0)
    return off.to(torch.int32)


def _ref_tokens_transposed(x, offsets, cap):
    """q_t, scale_t, padded offsets by the definition: x^T with each group's tokens at padded
    columns, quantised 1 x 128 along the columns; blocks past P_G: scale 0, codes 0."""
    T, C = x.shape
    off = offsets.tolist()
    G = len(off) - 1
    xp = torch.zeros(C, cap, device=x.device, dtype=torch.float32)
    P = [0]
    for g in range(G):
        n = off[g + 1] - off[g]
        xp[:, P[g]:P[g] + n] = x[off[g]:off[g + 1]].float().t()
        P.append(P[g] + _ceil(n, 128) * 128)
    blocks = cap // 128
    amax = xp.view(C, blocks, 128).abs().amax(-1)
    scale = scale_reference(amax)
    scale[:, P[G] // 128:] = 0
    q = e4m3_reference(xp, scale.clamp(min=1e-30).repeat_interleave(128, 1))
    q.view(torch.uint8)[:, P[G]:] = 0
    return q, scale, torch.tensor(P, dtype=torch.int32, device=x.device)


@parametrize("T,C,G", [(1000, 70, 4), (300, 256, 1), (129, 128, 3)])
def test_quantize_tokens_transposed(T, C, G):
    require_gpu()
    gen = _gen(T + C + G)
    x = make_bf16((T, C), gen)
    offsets = _random_offsets(T, G, gen)
    qt, st, po = ops.quantize_tokens_transposed_1x128(x, offsets)
    cap = ops.max_padded_tokens(T, G)
    assert qt.shape == (C, cap) and st.shape == (C, cap // 128)
    q_ref, s_ref, p_ref = _ref_tokens_transposed(x, offsets, cap)
    assert torch.equal(po, p_ref)
    assert torch.equal(bits(st), bits(s_ref))
    assert torch.equal(bits(qt), bits(q_ref))


@parametrize("shape", [(16, 16), (144, 1040), (2112, 7168), (3, 272, 1040), (130, 300),
                       (4, 100, 48)])
def test_transpose_e4m3(shape):
    """The tiled kernel (rows, cols multiples of 16) and torch's copy (others), bit for bit."""
    require_gpu()
    g = _gen(sum(shape))
    q = torch.randint(0, 256, shape, generator=g, device="cuda", dtype=torch.uint8).view(E4)
    t = ops.transpose_e4m3(q)
    assert t.is_contiguous() and t.shape == q.transpose(-2, -1).shape
    assert torch.equal(bits(t), bits(q.transpose(-2, -1).contiguous()))
    nc = q.transpose(-2, -1)  # a non-contiguous input takes torch's copy
    assert torch.equal(bits(ops.transpose_e4m3(nc)), bits(q))


# ============================================== GEMMs =============================================

def _block_scaled_operands(M, N, K, seed):
    gen = _gen(seed)
    x = make_bf16((M, K), gen)
    w = make_bf16((N, K), gen)
    qa, sa = ops.quantize_1x128(x)
    qb, sb = ops.quantize_128x128(w)
    return qa, sa, qb, sb


def _block_scaled_ref(qa, sa, qb, sb):
    return ops.dequantize_1x128(qa, sa).double() @ ops.dequantize_128x128(qb, sb).double().t()


def _assert_block_scaled_right(d, qa, sa, qb, sb):
    """d is the block-scaled GEMM of these operands within the project's tolerance of float64: for
    a result the other checks of a test only compare with the same op's other results."""
    assert torch.isfinite(d).all()
    err, tol = rel_error(d, _block_scaled_ref(qa, sa, qb, sb)), tolerance(qa.shape[-1])
    assert err <= tol, (err, tol)


def _nan_like(d):
    """An output that starts as NaN, not as whatever torch.empty's memory held (often zeros, so
    two outputs no op wrote would compare equal)."""
    return torch.full_like(d, float("nan"))


# Not multiples of the tiles: M, N odd or off by a few rows; K with a partial last 128-block.
SHAPES = [(1, 16, 16), (7, 40, 144), (200, 264, 640), (333, 1000, 1040), (129, 2112, 7168),
          (1000, 260, 4112)]


@parametrize("M,N,K", SHAPES)
def test_gemm_block_scaled_vs_float64(M, N, K):
    require_gpu()
    qa, sa, qb, sb = _block_scaled_operands(M, N, K, M + N + K)
    ref = _block_scaled_ref(qa, sa, qb, sb)
    d = ops.gemm_block_scaled(qa, sa, qb, sb)
    assert d.shape == (M, N) and d.dtype == torch.bfloat16
    assert torch.isfinite(d).all()
    assert rel_error(d, ref) <= tolerance(K), (rel_error(d, ref), tolerance(K))
    d32 = ops.gemm_block_scaled(qa, sa, qb, sb, torch.float32)
    assert d32.dtype == torch.float32
    assert rel_error(d32, ref) <= 1e-3, rel_error(d32, ref)  # no bf16 rounding: much tighter


def test_gemm_block_scaled_out_and_accumulate():
    require_gpu()
    M, N, K = 300, 264, 1040
    qa, sa, qb, sb = _block_scaled_operands(M, N, K, 11)
    ref = _block_scaled_ref(qa, sa, qb, sb)
    # a D that is a column slice of a wider matrix: row stride 300 (TMA-store incompatible)
    big = torch.full((M, 300), float("nan"), device="cuda", dtype=torch.float32)
    out = big[:, 10:10 + N]
    # C random and as large as the product (a C of ones would be within 0.4 % of the result)
    c = torch.randn(M, N, generator=_gen(12), device="cuda") * ref.float().std()
    out.copy_(c)
    ops.gemm_block_scaled(qa, sa, qb, sb, out=out, accumulate=True)
    assert rel_error(out, ref + c.double()) <= 1e-3
    assert torch.isnan(big[:, :10]).all() and torch.isnan(big[:, 10 + N:]).all()
    ob = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
    ops.gemm_block_scaled(qa, sa, qb, sb, out=ob)
    assert torch.equal(ob, ops.gemm_block_scaled(qa, sa, qb, sb))
    assert rel_error(ob, ref) <= tolerance(K)


def test_gemm_block_scaled_other_scale_layouts():
    """k-major (contiguous [M, kg]) scale_a and padded scale_b give the same result as the native
    layouts (the op copies scale_a into its layout; scale_b is read in place)."""
    require_gpu()
    M, N, K = 250, 384, 1040
    qa, sa, qb, sb = _block_scaled_operands(M, N, K, 12)
    d = ops.gemm_block_scaled(qa, sa, qb, sb)
    sa_k = sa.contiguous()  # strides (kg, 1)
    pad = torch.zeros(sb.shape[0], 12, device="cuda")
    pad[:, :sb.shape[1]] = sb
    sb_pad = pad[:, :sb.shape[1]]  # row stride 12 (cuBLASLt's padded layout)
    assert torch.equal(ops.gemm_block_scaled(qa, sa_k, qb, sb_pad), d)
    sb_t = sb.t().contiguous().t()  # column-major: copied
    assert torch.equal(ops.gemm_block_scaled(qa, sa, qb, sb_t), d)


def test_gemm_per_tensor():
    require_gpu()
    gen = _gen(21)
    M, N, K = 333, 264, 1040
    x = torch.randn(M, K, generator=gen, device="cuda")
    w = torch.randn(N, K, generator=gen, device="cuda")
    qa, sa = ops.quantize_per_tensor(x)
    qb, sb = ops.quantize_per_tensor(w)
    ref = (qa.double() @ qb.double().t()) * (sa.double() * sb.double())
    d = ops.gemm_per_tensor(qa, qb, sa, sb)
    assert d.dtype == torch.bfloat16 and rel_error(d, ref) <= tolerance(K)
    dfast = ops.gemm_per_tensor(qa, qb, sa, sb, fast_accum=True)
    assert rel_error(dfast, ref) <= 4 * tolerance(K)  # random normal data hides its bias


def test_gemm_per_tensor_float32_out_and_accumulate():
    """float32 D (the library's FP32 kernels): against float64 well inside the bf16 tolerance,
    rounded to bf16 within one bf16 ulp of the bf16 op's D; accumulate=True adds into out= (also
    a strided one, whose other columns stay as they were); the refusals."""
    require_gpu()
    gen = _gen(58)
    M, N, K = 333, 264, 1040
    qa, sa = ops.quantize_per_tensor(torch.randn(M, K, generator=gen, device="cuda"))
    qb, sb = ops.quantize_per_tensor(torch.randn(N, K, generator=gen, device="cuda"))
    ref = (qa.double() @ qb.double().t()) * (sa.double() * sb.double())
    for fast in (False, True):
        d32 = ops.gemm_per_tensor(qa, qb, sa, sb, fast_accum=fast, out_dtype=torch.float32)
        assert d32.dtype == torch.float32 and d32.shape == (M, N)
        # promoted: the tensor cores' sums inside each 128-K block only (no bf16 rounding)
        assert rel_error(d32, ref) <= (5e-4 if not fast else 4 * tolerance(K)), fast
        d16 = ops.gemm_per_tensor(qa, qb, sa, sb, fast_accum=fast)
        assert rel_error(d32.bfloat16(), d16.float()) <= 2 ** -8, fast
        # accumulate into a float32 out, and into a column slice of a wider one; out's earlier
        # values as large as the product (a skipped add would be ~0.7 off)
        base = torch.randn(M, N, generator=gen, device="cuda") * ref.float().std()
        acc = base.clone()
        ops.gemm_per_tensor(qa, qb, sa, sb, fast_accum=fast, out=acc, accumulate=True)
        assert rel_error(acc, ref + base.double()) <= (5e-4 if not fast else 4 * tolerance(K))
        wide = torch.full((M, N + 5), -7.0, device="cuda")
        wide[:, :N] = base
        view = wide[:, :N]
        ops.gemm_per_tensor(qa, qb, sa, sb, fast_accum=fast, out=view, accumulate=True)
        assert torch.equal(view, acc), fast
        assert (wide[:, N:] == -7.0).all()
        # out= without accumulate overwrites
        over = torch.full((M, N), float("nan"), device="cuda")
        ops.gemm_per_tensor(qa, qb, sa, sb, fast_accum=fast, out=over)
        assert torch.equal(over, d32), fast
    with raises(ValueError, match=r"accumulate=True needs a torch.float32 out"):
        ops.gemm_per_tensor(qa, qb, sa, sb, out=torch.empty(M, N, dtype=torch.bfloat16,
                                                             device="cuda"), accumulate=True)
    with raises(ValueError, match=r"out_dtype must be torch.bfloat16 or torch.float32"):
        ops.gemm_per_tensor(qa, qb, sa, sb, out_dtype=torch.float16)
    with raises(ValueError, match=r"out must be torch.bfloat16 or torch.float32; got "
                                  r"torch.float16"):
        ops.gemm_per_tensor(qa, qb, sa, sb, out=torch.empty(M, N, dtype=torch.float16,
                                                             device="cuda"))


def _strided(q, extra):
    """q [..., R, C] e4m3 as a view whose rows are C + extra apart (a column slice of a wider
    buffer), the other columns holding the e4m3 NaN code 0x7F: a GEMM that read them would turn
    its D NaN."""
    buf = torch.full(q.shape[:-1] + (q.shape[-1] + extra,), 0x7F, dtype=torch.uint8,
                     device=q.device).view(E4)
    view = buf[..., :q.shape[-1]]
    view.copy_(q)
    assert view.stride(-2) == q.shape[-1] + extra and not view.is_contiguous()
    return view


def test_strided_operands_every_gemm():
    """Every GEMM op given A and B (the weight gradient: dD^T and A^T) as column slices of wider
    buffers gives bit for bit what it gives on the contiguous operands (the same kernel: the
    leading dimensions do not enter the choice). The per-tensor GEMM took packed operands only
    until session 57."""
    require_gpu()
    gen = _gen(57)
    M, N, K = 333, 264, 1040
    # per-tensor, both accumulation modes
    qa, sa = ops.quantize_per_tensor(torch.randn(M, K, generator=gen, device="cuda"))
    qb, sb = ops.quantize_per_tensor(torch.randn(N, K, generator=gen, device="cuda"))
    a_s, b_s = _strided(qa, 16), _strided(qb, 48)
    for fast in (False, True):
        d = ops.gemm_per_tensor(qa, qb, sa, sb, fast_accum=fast)
        assert torch.isfinite(d).all()
        assert torch.equal(bits(ops.gemm_per_tensor(a_s, b_s, sa, sb, fast_accum=fast)), bits(d)), fast
        # a bf16 out= whose rows are wider (session 58): its other columns untouched
        wide = torch.full((M, N + 3), -7.0, device="cuda", dtype=torch.bfloat16)
        ops.gemm_per_tensor(a_s, b_s, sa, sb, fast_accum=fast, out=wide[:, :N])
        assert torch.equal(bits(wide[:, :N]), bits(d)), fast
        assert (wide[:, N:] == -7.0).all()
    # block-scaled, bf16 and float32 D
    qa, sa, qb, sb = _block_scaled_operands(M, N, K, 58)
    a_s, b_s = _strided(qa, 32), _strided(qb, 16)
    for dt in (torch.bfloat16, torch.float32):
        d = ops.gemm_block_scaled(qa, sa, qb, sb, dt)
        assert torch.isfinite(d).all()
        assert torch.equal(bits(ops.gemm_block_scaled(a_s, sa, b_s, sb, dt)), bits(d)), dt
    # grouped, contiguous (B [G, N, K] with rows K + 32 apart) and masked (A [G, M_max, K] too)
    G, T = 4, 1000
    x = make_bf16((T, K), gen)
    qx, sx = ops.quantize_1x128(x)
    qw, sw = _grouped_weights(G, N, K, gen)
    offsets = _random_offsets(T, G, gen, empty=(1,))
    d = ops.gemm_grouped_contiguous(qx, sx, qw, sw, offsets)
    assert torch.isfinite(d).all()
    got = ops.gemm_grouped_contiguous(_strided(qx, 16), sx, _strided(qw, 32), sw, offsets)
    assert torch.equal(bits(got), bits(d))
    M_max = 250
    qm, sm = ops.quantize_1x128(make_bf16((G * M_max, K), gen))
    qm = qm.view(G, M_max, K)
    masked_m = torch.tensor([250, 0, 77, 129], dtype=torch.int32, device="cuda")
    d = ops.gemm_grouped_masked(qm, sm, qw, sw, masked_m)
    got = ops.gemm_grouped_masked(_strided(qm, 48), sm, _strided(qw, 16), sw, masked_m)
    for g, m in enumerate(masked_m.tolist()):  # rows past masked_m[g] are not written
        assert torch.isfinite(d[g, :m]).all()
        assert torch.equal(bits(got[g, :m]), bits(d[g, :m])), g
    # the weight gradient: dD^T [N, cap] and A^T [K, cap] with rows cap + 16 / cap + 32 apart
    dy, xx = make_bf16((T, N), gen), make_bf16((T, K), gen)
    q_dyt, s_dyt, _ = ops.quantize_tokens_transposed_1x128(dy, offsets)
    q_xt, s_xt, _ = ops.quantize_tokens_transposed_1x128(xx, offsets)
    db = ops.gemm_weight_grad(q_dyt, s_dyt, q_xt, s_xt, offsets)
    assert torch.isfinite(db).all()
    got = ops.gemm_weight_grad(_strided(q_dyt, 16), s_dyt, _strided(q_xt, 32), s_xt, offsets)
    assert torch.equal(bits(got), bits(db))


def _grouped_weights(G, N, K, gen):
    w = make_bf16((G, N, K), gen)
    q, s = [], []
    for g in range(G):
        qg, sg = ops.quantize_128x128(w[g])
        q.append(qg)
        s.append(sg)
    return torch.stack(q), torch.stack(s)


@parametrize("G,T,N,K", [(4, 1000, 384, 1040), (3, 129, 200, 256), (8, 4096, 512, 2048)])
def test_gemm_grouped_contiguous(G, T, N, K):
    require_gpu()
    gen = _gen(G * T + N + K)
    x = make_bf16((T, K), gen)
    qa, sa = ops.quantize_1x128(x)
    qb, sb = _grouped_weights(G, N, K, gen)
    offsets = _random_offsets(T, G, gen, empty=(1,))
    d = ops.gemm_grouped_contiguous(qa, sa, qb, sb, offsets)
    assert d.shape == (T, N) and d.dtype == torch.bfloat16
    A = ops.dequantize_1x128(qa, sa).double()
    off = offsets.tolist()
    for g in range(G):
        if off[g + 1] == off[g]:
            continue
        ref = A[off[g]:off[g + 1]] @ ops.dequantize_128x128(qb[g], sb[g]).double().t()
        assert rel_error(d[off[g]:off[g + 1]], ref) <= tolerance(K), g


@parametrize("M_max,counts,N,K", [(200, [200, 0, 77, 129], 384, 1040),
                                  (1024, [1024, 517], 264, 2048),
                                  (1024, [300, 1024], 264, 4096)])
def test_gemm_grouped_masked(M_max, counts, N, K):
    """The masked op against float64; the second and third cases take the M_max >= 1024,
    K <= 4096 kernel (3 stages, 4 staging buffers; session 35 up to K = 2048, session 37 up to
    4096)."""
    require_gpu()
    G = len(counts)
    gen = _gen(31)
    x = make_bf16((G, M_max, K), gen)
    qa, sa = ops.quantize_1x128(x.view(G * M_max, K))
    qa = qa.view(G, M_max, K)
    qb, sb = _grouped_weights(G, N, K, gen)
    masked_m = torch.tensor(counts, dtype=torch.int32, device="cuda")
    d = ops.gemm_grouped_masked(qa, sa, qb, sb, masked_m)
    assert d.shape == (G, M_max, N)
    A = ops.dequantize_1x128(qa.view(G * M_max, K), sa).double().view(G, M_max, K)
    for g, m in enumerate(masked_m.tolist()):
        if m == 0:
            continue
        ref = A[g, :m] @ ops.dequantize_128x128(qb[g], sb[g]).double().t()
        assert rel_error(d[g, :m], ref) <= tolerance(K), g


@parametrize("masked", [False, True])
def test_gemm_grouped_float32(masked):
    """A float32 D for the grouped forward (session 64): out_dtype=torch.float32 against float64
    within 5e-4 per group (no bf16 rounding: the bf16 op's error is ~1.7e-3), out= with
    accumulate=True adds into it, the rows of no group (masked: past masked_m[g]) keep out's values
    bit for bit; the float32 D rounded to bf16 is within one bf16 ulp of the bf16 op's D; a bf16
    out with accumulate=True refused."""
    require_gpu()
    G, N, K = 4, 264, 1040
    gen = _gen(64 + int(masked))
    qb, sb = _grouped_weights(G, N, K, gen)
    counts = [0, 129, 1, 300]
    Bd = [ops.dequantize_128x128(qb[g], sb[g]).double() for g in range(G)]
    if masked:
        M_max = 300
        qa, sa = ops.quantize_1x128(make_bf16((G * M_max, K), gen))
        A = ops.dequantize_1x128(qa, sa).double().view(G, M_max, K)
        qa = qa.view(G, M_max, K)
        groups = torch.tensor(counts, dtype=torch.int32, device="cuda")
        run, shape = ops.gemm_grouped_masked, (G, M_max, N)

        def rows(t, g):  # group g's rows of A or D
            return t[g, :counts[g]]
    else:
        T = sum(counts)
        qa, sa = ops.quantize_1x128(make_bf16((T, K), gen))
        A = ops.dequantize_1x128(qa, sa).double()
        groups = torch.tensor([0] + [sum(counts[:g + 1]) for g in range(G)], dtype=torch.int32,
                              device="cuda")
        run, shape = ops.gemm_grouped_contiguous, (T, N)

        def rows(t, g):
            return t[sum(counts[:g]):sum(counts[:g + 1])]

    d = run(qa, sa, qb, sb, groups, torch.float32)
    assert d.shape == shape and d.dtype == torch.float32
    d16 = run(qa, sa, qb, sb, groups)
    # out's earlier values as large as the product (its real rows): a skipped add would show
    scale = torch.cat([rows(d, g).flatten() for g in range(G) if counts[g] > 0]).std()
    before = torch.randn(shape, generator=gen, device="cuda", dtype=torch.float32) * scale
    acc = before.clone()
    assert run(qa, sa, qb, sb, groups, out=acc, accumulate=True) is acc
    checked = 0
    for g in range(G):
        if counts[g] == 0:
            continue
        ref = rows(A, g) @ Bd[g].t()
        assert rel_error(rows(d, g), ref) <= 5e-4, g
        assert rel_error(rows(acc, g), ref + rows(before, g).double()) <= 5e-4, g
        one_ulp = torch.maximum(rows(d16, g).float().abs(), rows(d, g).abs()) * 2.0 ** -7
        assert ((rows(d, g).bfloat16().float() - rows(d16, g).float()).abs() <= one_ulp).all(), g
        checked += 1
    assert checked == 3
    if masked:  # rows past masked_m[g]: out's values, untouched
        for g, m in enumerate(counts):
            assert torch.equal(acc[g, m:].view(torch.int32), before[g, m:].view(torch.int32)), g
    else:
        # An out= whose rows are 5 floats wider (ldd odd: from registers, one float at a time),
        # without accumulate: D's columns as the new-tensor call's, the other columns untouched.
        wide = torch.randn((shape[0], N + 5), generator=gen, device="cuda")
        kept = wide[:, N:].clone()
        run(qa, sa, qb, sb, groups, out=wide[:, :N])
        assert rel_error(wide[:, :N], d.double()) <= 1e-6  # (by TMA there, from registers here)
        assert torch.equal(wide[:, N:], kept)
    with raises(ValueError, match=r"accumulate=True needs a torch.float32 out"):
        run(qa, sa, qb, sb, groups, out=torch.zeros(shape, device="cuda", dtype=torch.bfloat16),
            accumulate=True)


def test_gemm_grouped_every_kernel():
    """Every compiled grouped forward kernel by name (_gemm_grouped_kernel: the benchmark's
    same-run comparison), contiguous and masked, on groups whose row tiles are odd and even in
    number (a 2 x 1 cluster's phantom CTA), N not a multiple of any tile width: each group against
    float64; an unknown name refused with the list of compiled kernels."""
    require_gpu()
    names = torch.ops.fp8gemm._grouped_kernel_names().split(",")
    assert len(names) >= 2 and any("_c2x1_" in n for n in names)
    # K = 1536: the staged-loop kernels (_loop12) take whole rounds of 3 x 128 or 4 x 128 K
    G, N, K = 4, 200, 1536
    gen = _gen(41)
    qb, sb = _grouped_weights(G, N, K, gen)
    counts = [1, 129, 0, 300]  # row tiles of 128: 1, 2, 0, 3
    T = sum(counts)
    x = make_bf16((T, K), gen)
    qa, sa = ops.quantize_1x128(x)
    ends = [sum(counts[:g + 1]) for g in range(G)]
    offsets = torch.tensor([0] + ends, dtype=torch.int32, device="cuda")
    A = ops.dequantize_1x128(qa, sa).double()
    Bd = [ops.dequantize_128x128(qb[g], sb[g]).double() for g in range(G)]
    M_max = 300
    xm = make_bf16((G * M_max, K), gen)
    qam, sam = ops.quantize_1x128(xm)
    Am = ops.dequantize_1x128(qam, sam).double().view(G, M_max, K)
    masked_m = torch.tensor(counts, dtype=torch.int32, device="cuda")
    for name in names:
        d = torch.ops.fp8gemm._gemm_grouped_kernel(qa, sa, qb, sb, offsets, False, name)
        for g in range(G):
            b, e = sum(counts[:g]), sum(counts[:g + 1])
            if e > b:
                assert rel_error(d[b:e], A[b:e] @ Bd[g].t()) <= tolerance(K), (name, g)
        dm = torch.ops.fp8gemm._gemm_grouped_kernel(qam.view(G, M_max, K), sam, qb, sb, masked_m, True,
                                                     name)
        for g, m in enumerate(counts):
            if m:
                assert rel_error(dm[g, :m], Am[g, :m] @ Bd[g].t()) <= tolerance(K), (name, g)
    with raises(ValueError, match="not a grouped forward kernel; compiled: " + re.escape(names[0])):
        torch.ops.fp8gemm._gemm_grouped_kernel(qa, sa, qb, sb, offsets, False, "no_such_kernel")


@parametrize("G,K,low,high", [(16, 1024, 0, 600), (4, 4096, 1100, 1900)])
def test_gemm_grouped_counter_schedule(G, K, low, high):
    """A contiguous call with fewer than 1024 rows per group on average, or fewer than 2048 at
    K >= 4096 (session 35), runs the counter kernel (GroupedOptions::counter_schedule; the counter
    is the op's, one per stream): each tile is computed as the static 128 x 256 kernel computes
    it, so the result is that kernel's bit for bit, on two streams at once and on repeated calls
    (a shared or left-over counter would leave rows of torch.empty's memory). The op counts its
    counter-schedule launches (plan_cache_stats' tile_counter_runs): all six calls must be ones,
    else this would compare the static kernel with itself."""
    require_gpu()
    N = 512
    gen = _gen(44)
    qb, sb = _grouped_weights(G, N, K, gen)
    counts = [int(c) for c in torch.randint(low, high, (G,), generator=gen, device="cuda").tolist()]
    if low == 0:
        counts[3] = 0
    T = sum(counts)
    qa, sa = ops.quantize_1x128(make_bf16((T, K), gen))
    offsets = torch.tensor([0] + [sum(counts[:g + 1]) for g in range(G)], dtype=torch.int32,
                           device="cuda")
    static = torch.ops.fp8gemm._gemm_grouped_kernel(qa, sa, qb, sb, offsets, False,
                                                    "128x256_s4_c1x1_promoted_tma_b1")
    counter_runs = ops.plan_cache_stats()["tile_counter_runs"]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    outs = []
    for _ in range(3):
        outs.append(ops.gemm_grouped_contiguous(qa, sa, qb, sb, offsets))
        with torch.cuda.stream(side):
            outs.append(ops.gemm_grouped_contiguous(qa, sa, qb, sb, offsets))
    torch.cuda.synchronize()
    assert ops.plan_cache_stats()["tile_counter_runs"] - counter_runs == 6
    # The masked layout never takes the counter schedule (its default is the static kernel).
    qm, sm = ops.quantize_1x128(make_bf16((G * 16, K), gen))
    ops.gemm_grouped_masked(qm.view(G, 16, K), sm, qb, sb,
                            torch.full((G,), 16, dtype=torch.int32, device="cuda"))
    assert ops.plan_cache_stats()["tile_counter_runs"] - counter_runs == 6
    for d in outs:
        assert torch.equal(d.view(torch.int16), static.view(torch.int16))
    A = ops.dequantize_1x128(qa, sa).double()
    for g in range(G):
        b, e = sum(counts[:g]), sum(counts[:g + 1])
        if e > b:
            ref = A[b:e] @ ops.dequantize_128x128(qb[g], sb[g]).double().t()
            assert rel_error(outs[-1][b:e], ref) <= tolerance(K), g


def test_grouped_workspace_kernel_plan_per_stream():
    """A comparison kernel whose plan owns a workspace (_dyn: a tile counter; _sk, _skr: partial
    tiles and flags) gets one cached plan per stream (two streams never share a workspace); every
    other kernel's plan serves all streams. Both streams' results, launched without waiting for
    each other, against float64."""
    require_gpu()
    names = torch.ops.fp8gemm._grouped_kernel_names().split(",")
    own = [n for n in names if n.endswith("_dyn")] + [n for n in names if n.endswith(("_sk", "_skr"))]
    plain = [n for n in names if not n.endswith(("_dyn", "_sk", "_skr"))]
    assert own and plain
    G, N, K = 4, 264, 1024
    gen = _gen(43)
    qb, sb = _grouped_weights(G, N, K, gen)
    counts = [300, 0, 129, 517]
    T = sum(counts)
    qa, sa = ops.quantize_1x128(make_bf16((T, K), gen))
    offsets = torch.tensor([0] + [sum(counts[:g + 1]) for g in range(G)], dtype=torch.int32,
                           device="cuda")
    A = ops.dequantize_1x128(qa, sa).double()
    Bd = [ops.dequantize_128x128(qb[g], sb[g]).double() for g in range(G)]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    for name, plans_per_stream in ((own[0], 2), (plain[0], 1)):
        ops.plan_cache_clear()
        main = torch.ops.fp8gemm._gemm_grouped_kernel(qa, sa, qb, sb, offsets, False, name)
        with torch.cuda.stream(side):
            other = torch.ops.fp8gemm._gemm_grouped_kernel(qa, sa, qb, sb, offsets, False, name)
        again = torch.ops.fp8gemm._gemm_grouped_kernel(qa, sa, qb, sb, offsets, False, name)
        st = ops.plan_cache_stats()
        assert st["misses"] == plans_per_stream and st["hits"] == 3 - plans_per_stream, (name, st)
        torch.cuda.synchronize()
        for d in (main, other, again):
            for g in range(G):
                b, e = sum(counts[:g]), sum(counts[:g + 1])
                if e > b:
                    assert rel_error(d[b:e], A[b:e] @ Bd[g].t()) <= tolerance(K), (name, g)


@parametrize("G,T,N,K", [(1, 300, 264, 1040), (1, 512, 384, 256), (4, 1000, 256, 384)])
def test_gemm_weight_grad(G, T, N, K):
    require_gpu()
    gen = _gen(G + T + N + K)
    dy = make_bf16((T, N), gen)
    x = make_bf16((T, K), gen)
    offsets = _random_offsets(T, G, gen, empty=(2,)) if G > 1 else ops.dense_offsets(T, "cuda")
    q_dyt, s_dyt, po = ops.quantize_tokens_transposed_1x128(dy, offsets)
    q_xt, s_xt, _ = ops.quantize_tokens_transposed_1x128(x, offsets)
    db = ops.gemm_weight_grad(q_dyt, s_dyt, q_xt, s_xt, offsets)
    assert db.shape == (G, N, K) and db.dtype == torch.float32
    DY = ops.dequantize_1x128(q_dyt, s_dyt).double()
    X = ops.dequantize_1x128(q_xt, s_xt).double()
    P = po.tolist()
    for g in range(G):
        ref = DY[:, P[g]:P[g + 1]] @ X[:, P[g]:P[g + 1]].t()
        if P[g + 1] == P[g]:
            assert torch.count_nonzero(db[g]) == 0
            continue
        assert rel_error(db[g], ref) <= 1e-3, (g, rel_error(db[g], ref))
    # accumulate into a given float32 out
    acc = torch.ones(G, N, K, device="cuda")
    ops.gemm_weight_grad(q_dyt, s_dyt, q_xt, s_xt, offsets, out=acc, accumulate=True)
    off = offsets.tolist()
    for g in range(G):
        expect = db[g] + 1 if off[g + 1] > off[g] else torch.ones_like(db[g])
        assert rel_error(acc[g], expect) <= 1e-6
    # bfloat16 dB: the same FP32 sums rounded once (round to nearest even, as .to() rounds), so
    # bit for bit the float32 result converted; by out_dtype and by a given bfloat16 out.
    db16 = ops.gemm_weight_grad(q_dyt, s_dyt, q_xt, s_xt, offsets, out_dtype=torch.bfloat16)
    assert db16.dtype == torch.bfloat16 and db16.shape == (G, N, K)
    assert torch.equal(db16, db.to(torch.bfloat16))
    out16 = torch.full((G, N, K), float("nan"), device="cuda", dtype=torch.bfloat16)
    ops.gemm_weight_grad(q_dyt, s_dyt, q_xt, s_xt, offsets, out=out16)
    assert torch.equal(out16, db16)
    refused = torch.full((G, N, K), float("nan"), device="cuda", dtype=torch.bfloat16)
    with raises(ValueError, match="accumulate=True needs a float32 out"):
        ops.gemm_weight_grad(q_dyt, s_dyt, q_xt, s_xt, offsets, out=refused, accumulate=True)
    torch.cuda.synchronize()
    assert torch.isnan(refused).all(), "a refused call wrote its out"
    with raises(ValueError, match="out_dtype must be torch.float32 or torch.bfloat16"):
        ops.gemm_weight_grad(q_dyt, s_dyt, q_xt, s_xt, offsets, out_dtype=torch.float16)


def test_weight_grad_from_dual_quantiser():
    """With M % 128 == 0, quantize_1x128_dual's x^T is the one-group token layout (what Fp8Linear
    uses to skip a second quantisation of x)."""
    require_gpu()
    T, N, K = 512, 264, 384
    gen = _gen(41)
    dy, x = make_bf16((T, N), gen), make_bf16((T, K), gen)
    off = ops.dense_offsets(T, "cuda")
    a = ops.quantize_tokens_transposed_1x128(x, off)
    b = ops.quantize_1x128_dual(x)
    assert torch.equal(bits(a[0]), bits(b[2])) and torch.equal(bits(a[1]), bits(b[3]))
    q_dyt, s_dyt, _ = ops.quantize_tokens_transposed_1x128(dy, off)
    d1 = ops.gemm_weight_grad(q_dyt, s_dyt, a[0], a[1], off)
    d2 = ops.gemm_weight_grad(q_dyt, s_dyt, b[2], b[3], off)
    assert torch.equal(d1, d2)


def test_check_offsets():
    """check_offsets=True (chapter 8's checking modes through the ops): valid offsets give the
    default call's D bit for bit; broken ones raise RuntimeError naming the entry and the rule and
    leave the output unwritten; a capturing stream refuses the mode (ValueError). The layer's
    option reaches its forward and backward GEMMs."""
    require_gpu()
    G, T, N, K = 4, 1000, 256, 512
    gen = _gen(90)
    qa, sa = ops.quantize_1x128(make_bf16((T, K), gen))
    qb, sb = _grouped_weights(G, N, K, gen)
    off = _random_offsets(T, G, gen, empty=(1,))
    d = ops.gemm_grouped_contiguous(qa, sa, qb, sb, off)
    assert torch.equal(d, ops.gemm_grouped_contiguous(qa, sa, qb, sb, off, check_offsets=True))
    bad = off.clone()
    bad[2], bad[3] = off[3], off[2] - 1  # decreasing at 3 (and group 2 made larger)
    with raises(RuntimeError, match=r"offsets\[3\] = \d+ is less than offsets\[2\]"):
        ops.gemm_grouped_contiguous(qa, sa, qb, sb, bad, check_offsets=True)
    short = off.clone()
    short[G] = T - 5  # the last group stops 5 rows short: those rows would stay unwritten
    with raises(RuntimeError, match=rf"offsets\[{G}\] = {T - 5} must equal rows = {T}"):
        ops.gemm_grouped_contiguous(qa, sa, qb, sb, short, check_offsets=True)
    # masked_m above M_max
    M_max = 256
    qm, sm = ops.quantize_1x128(make_bf16((G * M_max, K), gen))
    qm = qm.view(G, M_max, K)
    mm = torch.tensor([10, 0, M_max + 1, 3], dtype=torch.int32, device="cuda")
    with raises(RuntimeError, match=rf"masked_m\[2\] = {M_max + 1} exceeds M_max = {M_max}"):
        ops.gemm_grouped_masked(qm, sm, qb, sb, mm, check_offsets=True)
    mm[2] = M_max
    d0 = ops.gemm_grouped_masked(qm, sm, qb, sb, mm)
    d1 = ops.gemm_grouped_masked(qm, sm, qb, sb, mm, check_offsets=True)
    for g, m in enumerate(mm.tolist()):  # the rows each group writes
        assert torch.equal(d0[g, :m], d1[g, :m]), g
    # the weight gradient: the token capacity T instead of max_padded_tokens(T, G) truncates the
    # last groups silently without the check
    dy, x = make_bf16((T, N), gen), make_bf16((T, K), gen)
    q_dyt, s_dyt, _ = ops.quantize_tokens_transposed_1x128(dy, off)
    q_xt, s_xt, _ = ops.quantize_tokens_transposed_1x128(x, off)
    db = ops.gemm_weight_grad(q_dyt, s_dyt, q_xt, s_xt, off)
    assert torch.equal(db, ops.gemm_weight_grad(q_dyt, s_dyt, q_xt, s_xt, off, check_offsets=True))
    # counts 300, 0, 300, 400: padded 384 + 0 + 384 + 512 = 1280 columns, more than round_up(T, 128)
    ow = torch.tensor([0, 300, 300, 600, 1000], dtype=torch.int32, device="cuda")
    cap = _ceil(T, 128) * 128
    q_dyt_w, s_dyt_w, _ = ops.quantize_tokens_transposed_1x128(dy, ow)  # T_cap 1408: whole
    q_xt_w, s_xt_w, _ = ops.quantize_tokens_transposed_1x128(x, ow)
    q_dyt_c, s_dyt_c = q_dyt_w[:, :cap], s_dyt_w[:, :cap // 128]  # the first cap columns
    q_xt_c, s_xt_c = q_xt_w[:, :cap], s_xt_w[:, :cap // 128]
    with raises(RuntimeError, match=rf"P_G = 1280 .* exceeds token_capacity = {cap}"):
        ops.gemm_weight_grad(q_dyt_c, s_dyt_c, q_xt_c, s_xt_c, ow, check_offsets=True)
    out = torch.full((G, N, K), float("nan"), device="cuda")
    with raises(RuntimeError, match=r"offsets\[3\] = \d+ is less than offsets\[2\]"):
        ops.gemm_weight_grad(q_dyt, s_dyt, q_xt, s_xt, bad, out=out, check_offsets=True)
    torch.cuda.synchronize()
    assert torch.isnan(out).all(), "a refused call wrote its out"
    # a CUDA graph cannot hold the check's copy and synchronisation
    graph = torch.cuda.CUDAGraph()
    with raises(ValueError, match=r"the stream is capturing a CUDA graph"):
        with torch.cuda.graph(graph):
            ops.gemm_grouped_contiguous(qa, sa, qb, sb, off, check_offsets=True)
    # the layer: forward and backward with valid offsets, then a broken one refused
    layer = fp8gemm.nn.Fp8GroupedExperts(G, K, N, device="cuda", dtype=torch.bfloat16,
                                         check_offsets=True)
    xx = make_bf16((T, K), gen).requires_grad_(True)
    layer(xx, off).float().square().mean().backward()
    assert xx.grad is not None and layer.weight.grad is not None
    with raises(RuntimeError, match=rf"offsets\[{G}\] = {T - 5} must equal rows = {T}"):
        layer(xx, short)


def _gpu_ms(fn, reps=5):
    """Median GPU time of fn() in ms, by CUDA events, after one warm-up call."""
    fn()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def test_set_max_sms_every_gemm():
    """set_max_sms(n) reaches every GEMM op's plan: each op is right against float64 with 2 SMs,
    builds a new plan (the count is in the key), and a large block-scaled GEMM on 2 SMs takes
    many times as long as on all of them (132 on the H200: about 60x; asserted >= 8x, so that a
    setting that never reached the kernel fails). Restored to 0 (all SMs) after."""
    require_gpu()
    gen = _gen(61)
    assert ops.get_max_sms() == 0
    try:
        qa, sa, qb, sb = _block_scaled_operands(4096, 4096, 4096, 62)
        full = _gpu_ms(lambda: ops.gemm_block_scaled(qa, sa, qb, sb))
        ops.set_max_sms(2)
        assert ops.get_max_sms() == 2
        misses = ops.plan_cache_stats()["misses"]
        d = ops.gemm_block_scaled(qa, sa, qb, sb)
        assert ops.plan_cache_stats()["misses"] == misses + 1  # a plan of its own
        # Every 97th row (a strided view: dequantize_1x128 is plain torch) against float64.
        ref_rows = ops.dequantize_1x128(qa[::97], sa[::97]).double() @ \
            ops.dequantize_128x128(qb, sb).double().t()
        assert rel_error(d[::97], ref_rows) <= tolerance(4096)
        few = _gpu_ms(lambda: ops.gemm_block_scaled(qa, sa, qb, sb), reps=3)
        assert few >= 8 * full, (few, full)
        # The other GEMM ops, small shapes, against float64.
        qa, sa, qb, sb = _block_scaled_operands(333, 264, 1040, 63)
        assert rel_error(ops.gemm_block_scaled(qa, sa, qb, sb),
                         _block_scaled_ref(qa, sa, qb, sb)) <= tolerance(1040)
        x = torch.randn(333, 1040, generator=gen, device="cuda")
        w = torch.randn(264, 1040, generator=gen, device="cuda")
        pa, psa = ops.quantize_per_tensor(x)
        pb, psb = ops.quantize_per_tensor(w)
        ref = (pa.double() @ pb.double().t()) * (psa.double() * psb.double())
        assert rel_error(ops.gemm_per_tensor(pa, pb, psa, psb), ref) <= tolerance(1040)
        G, T, N, K = 4, 1000, 384, 1040
        qx, sx = ops.quantize_1x128(make_bf16((T, K), gen))
        gq, gs = _grouped_weights(G, N, K, gen)
        offsets = _random_offsets(T, G, gen, empty=(1,))
        dg = ops.gemm_grouped_contiguous(qx, sx, gq, gs, offsets)
        A = ops.dequantize_1x128(qx, sx).double()
        off = offsets.tolist()
        for g in range(G):
            if off[g + 1] > off[g]:
                ref = A[off[g]:off[g + 1]] @ ops.dequantize_128x128(gq[g], gs[g]).double().t()
                assert rel_error(dg[off[g]:off[g + 1]], ref) <= tolerance(K), g
        dy = make_bf16((T, N), gen)
        q_dyt, s_dyt, po = ops.quantize_tokens_transposed_1x128(dy, offsets)
        q_xt, s_xt, _ = ops.quantize_tokens_transposed_1x128(make_bf16((T, K), gen), offsets)
        db = ops.gemm_weight_grad(q_dyt, s_dyt, q_xt, s_xt, offsets)
        DY = ops.dequantize_1x128(q_dyt, s_dyt).double()
        X = ops.dequantize_1x128(q_xt, s_xt).double()
        P = po.tolist()
        for g in range(G):
            if P[g + 1] > P[g]:
                ref = DY[:, P[g]:P[g + 1]] @ X[:, P[g]:P[g + 1]].t()
                assert rel_error(db[g], ref) <= 1e-3, g
        mqa, msa = ops.quantize_mx_1x32(make_bf16((333, 1056), gen))
        mqb, msb = ops.quantize_mx_1x32(make_bf16((264, 1056), gen))
        ref = ops.dequantize_mx_1x32(mqa, msa).double() @ ops.dequantize_mx_1x32(mqb, msb).double().t()
        for path in ({}, {"dequantize_bf16": True}, {"requantize_block_scaled": True}):
            assert rel_error(ops.gemm_mx(mqa, msa, mqb, msb, **path), ref) <= \
                tolerance(1056), path
        with raises(ValueError, match="max_sms = -1 must be >= 0"):
            ops.set_max_sms(-1)
        assert ops.get_max_sms() == 2  # a refused value changes nothing
    finally:
        ops.set_max_sms(0)
    assert ops.get_max_sms() == 0


def test_determinism():
    require_gpu()
    qa, sa, qb, sb = _block_scaled_operands(1000, 2112, 7168, 51)
    d1 = ops.gemm_block_scaled(qa, sa, qb, sb)
    for _ in range(3):
        # Into a NaN-filled out each time: a fresh output could reuse d1's freed twin's memory,
        # which already holds the right bits.
        o = torch.full_like(d1, float("nan"))
        ops.gemm_block_scaled(qa, sa, qb, sb, out=o)
        assert torch.equal(o, d1)
    gen = _gen(52)
    T, N, K = 1000, 384, 1040
    dy, x = make_bf16((T, N), gen), make_bf16((T, K), gen)
    off = _random_offsets(T, 4, gen)
    a = ops.quantize_tokens_transposed_1x128(dy, off)
    b = ops.quantize_tokens_transposed_1x128(x, off)
    w1 = ops.gemm_weight_grad(a[0], a[1], b[0], b[1], off)
    assert torch.equal(ops.gemm_weight_grad(a[0], a[1], b[0], b[1], off), w1)


def test_plan_cache():
    """Plans are keyed by everything but the buffers (device, shapes, strides, dtypes, options):
    new tensors of the same call hit the cache and re-point the cached plan (a rebind); the
    result is bit for bit what a plan built for those tensors gives."""
    require_gpu()
    qa, sa, qb, sb = _block_scaled_operands(256, 512, 1024, 61)
    out = torch.full((256, 512), float("nan"), device="cuda", dtype=torch.bfloat16)
    ops.plan_cache_clear()
    ops.gemm_block_scaled(qa, sa, qb, sb, out=out)
    _assert_block_scaled_right(out, qa, sa, qb, sb)
    s1 = ops.plan_cache_stats()
    assert s1["misses"] == 1 and s1["hits"] == 0 and s1["size"] == 1 and s1["rebinds"] == 0
    ops.gemm_block_scaled(qa, sa, qb, sb, out=out)
    s2 = ops.plan_cache_stats()
    assert s2["hits"] == 1 and s2["misses"] == 1 and s2["rebinds"] == 0
    # other operands and another output of the same call: a hit, the plan re-pointed
    qa2, sa2, qb2, sb2 = _block_scaled_operands(256, 512, 1024, 62)
    out2 = _nan_like(out)
    ops.gemm_block_scaled(qa2, sa2, qb2, sb2, out=out2)
    _assert_block_scaled_right(out2, qa2, sa2, qb2, sb2)
    s3 = ops.plan_cache_stats()
    assert s3["hits"] == 2 and s3["misses"] == 1 and s3["rebinds"] == 1 and s3["size"] == 1
    # back to the first buffers: re-pointed again, the first result again
    again = _nan_like(out)
    ops.gemm_block_scaled(qa, sa, qb, sb, out=again)
    assert torch.equal(again, out) and ops.plan_cache_stats()["rebinds"] == 2
    ops.set_plan_cache_capacity(0)  # no caching: every call builds its plan, same result
    try:
        d0 = ops.gemm_block_scaled(qa, sa, qb, sb)
        assert ops.plan_cache_stats()["size"] == 0
        assert torch.equal(d0, out)
        assert torch.equal(ops.gemm_block_scaled(qa2, sa2, qb2, sb2), out2)
    finally:
        ops.set_plan_cache_capacity(1024)
    # the allocating op: one plan for the shape whatever D the allocator hands out (all four
    # outputs alive at once, so four different D)
    ops.plan_cache_clear()
    ds = [ops.gemm_block_scaled(qa, sa, qb, sb) for _ in range(4)]
    s4 = ops.plan_cache_stats()
    assert s4["misses"] == 1 and s4["hits"] == 3 and s4["rebinds"] == 3 and s4["size"] == 1, s4
    for d in ds:
        assert torch.equal(d, out)


def _fresh(call):
    """call() with the plan cache off: a plan built for exactly these tensors."""
    ops.set_plan_cache_capacity(0)
    try:
        return call()
    finally:
        ops.set_plan_cache_capacity(1024)


def test_plan_cache_rebind_every_gemm():
    """Every GEMM op: a second set of tensors of the same call (every buffer new, offsets and
    masked_m included) hits the first call's plan, re-points it, and gives bit for bit the result
    of a plan built for it; then the first set again gives the first result."""
    require_gpu()
    G, T, N, K = 4, 1000, 384, 1040

    def contiguous(seed):
        g = _gen(seed)
        qa, sa = ops.quantize_1x128(make_bf16((T, K), g))
        qb, sb = _grouped_weights(G, N, K, g)
        return qa, sa, qb, sb, _random_offsets(T, G, g, empty=(1,))

    def masked(seed):
        g = _gen(seed)
        qa, sa = ops.quantize_1x128(make_bf16((G * 200, K), g))
        qb, sb = _grouped_weights(G, N, K, g)
        m = torch.randint(0, 201, (G,), generator=g, device="cuda", dtype=torch.int32)
        return qa.view(G, 200, K), sa, qb, sb, m

    def wgrad(seed):
        g = _gen(seed)
        off = _random_offsets(T, G, g, empty=(2,))
        a = ops.quantize_tokens_transposed_1x128(make_bf16((T, N), g), off)
        b = ops.quantize_tokens_transposed_1x128(make_bf16((T, K), g), off)
        return a[0], a[1], b[0], b[1], off

    def per_tensor(seed):
        g = _gen(seed)
        qa, sa = ops.quantize_per_tensor(torch.randn(T, K, generator=g, device="cuda"))
        qb, sb = ops.quantize_per_tensor(torch.randn(N, K, generator=g, device="cuda"))
        return qa, qb, sa, sb

    cases = [("contiguous", ops.gemm_grouped_contiguous, contiguous),
             ("masked", ops.gemm_grouped_masked, masked),
             ("weight_grad", ops.gemm_weight_grad, wgrad),
             ("per_tensor", ops.gemm_per_tensor, per_tensor)]
    def written(name, d, args):
        """What the op writes: a masked call leaves the rows past masked_m[g] as they were."""
        if name != "masked":
            return d
        return torch.cat([d[g, :m] for g, m in enumerate(args[4].tolist())])

    for name, op, make in cases:
        first, second = make(64), make(65)
        ops.plan_cache_clear()
        d1 = written(name, op(*first), first)
        d2 = written(name, op(*second), second)
        s = ops.plan_cache_stats()
        assert s["misses"] == 1 and s["hits"] == 1 and s["rebinds"] == 1, (name, s)
        assert torch.equal(d2, written(name, _fresh(lambda: op(*second)), second)), name
        assert torch.equal(written(name, op(*first), first), d1), name
        assert torch.equal(d1, written(name, _fresh(lambda: op(*first)), first)), name


def _off_by_8(q):
    """A copy of the e4m3 tensor q (contiguous) whose data starts 8 bytes past a 16-byte boundary:
    an operand TMA cannot read, which the library refuses."""
    raw = torch.empty(q.numel() + 16, device=q.device, dtype=torch.uint8)
    raw[8:8 + q.numel()].view(q.shape).copy_(q.view(torch.uint8))
    return raw[8:8 + q.numel()].view(q.shape).view(E4)


def test_plan_cache_rebind_refusals():
    """A cached plan re-pointed at a buffer it cannot use refuses with the library's message
    (ValueError naming the argument), stays cached and unchanged; a D that only another kernel
    can write (not 16-byte aligned: no TMA store) gets its own plan."""
    require_gpu()
    M, N, K = 256, 512, 1024
    qa, sa, qb, sb = _block_scaled_operands(M, N, K, 66)
    ref = _block_scaled_ref(qa, sa, qb, sb)
    ops.plan_cache_clear()
    d = ops.gemm_block_scaled(qa, sa, qb, sb)
    # A 8 bytes off a 16-byte boundary: the same key (shape, strides), refused by the rebind
    a_off = _off_by_8(qa)
    with raises(ValueError, match=r"gemm_block_scaled: .*A = 0x[0-9a-f]+ must be 16-byte aligned"):
        ops.gemm_block_scaled(a_off, sa, qb, sb)
    s = ops.plan_cache_stats()
    assert s["size"] == 1 and s["misses"] == 1 and s["rebinds"] == 0, s
    assert torch.equal(ops.gemm_block_scaled(qa, sa, qb, sb), d)  # the plan works as before
    # D 2 bytes off a 16-byte boundary: another key (the D alignment bit), its own plan
    buf = torch.full((M * N + 8,), float("nan"), device="cuda", dtype=torch.bfloat16)
    out = buf[1:1 + M * N].view(M, N)
    ops.gemm_block_scaled(qa, sa, qb, sb, out=out)
    assert ops.plan_cache_stats()["size"] == 2
    assert rel_error(out, ref) <= tolerance(K)
    assert torch.isnan(buf[0]) and torch.isnan(buf[1 + M * N:]).all()
    torch.cuda.synchronize()


def test_threads():
    """The ops from 4 Python threads at once, each on its own stream with its own outputs (one
    cached plan re-pointed under its lock, and the allocating op): every result bit for bit the
    single-threaded one."""
    import threading
    require_gpu()
    M, N, K = 512, 1024, 2048
    qa, sa, qb, sb = _block_scaled_operands(M, N, K, 67)
    ref = ops.gemm_block_scaled(qa, sa, qb, sb)
    _assert_block_scaled_right(ref, qa, sa, qb, sb)
    n_threads, calls = 4, 8
    outs = [[_nan_like(ref) for _ in range(calls)] for _ in range(n_threads)]
    # The NaN fills ran on the current stream; the threads' streams do not wait for it (torch's
    # side streams are non-blocking), so the fills must be done before the threads start.
    torch.cuda.synchronize()
    allocated = [[None] * calls for _ in range(n_threads)]
    streams = [torch.cuda.Stream() for _ in range(n_threads)]
    errors = []
    barrier = threading.Barrier(n_threads)

    def work(t):
        try:
            with torch.cuda.stream(streams[t]):
                barrier.wait()
                for i in range(calls):
                    ops.gemm_block_scaled(qa, sa, qb, sb, out=outs[t][i])
                    allocated[t][i] = ops.gemm_block_scaled(qa, sa, qb, sb)
            streams[t].synchronize()
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(f"thread {t}: {e!r}")

    threads = [threading.Thread(target=work, args=(t,)) for t in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    for t in range(n_threads):
        for i in range(calls):
            assert torch.equal(outs[t][i], ref), (t, i)
            assert torch.equal(allocated[t][i], ref), (t, i)


def test_streams():
    """The op runs on the current stream (a side stream, then waited for)."""
    require_gpu()
    qa, sa, qb, sb = _block_scaled_operands(512, 1024, 2048, 71)
    d_ref = ops.gemm_block_scaled(qa, sa, qb, sb)
    _assert_block_scaled_right(d_ref, qa, sa, qb, sb)
    # On s: a long GPU sleep, then qa's data copied into a NaN-filled a2, then the op on a2. An op
    # launched on another stream than s would not wait for the copy and would read the NaNs.
    a2 = torch.empty_like(qa)
    a2.view(torch.uint8).fill_(0x7F)  # e4m3fn NaN
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())  # after the fill: s's copy lands on the NaNs
    with torch.cuda.stream(s):
        torch.cuda._sleep(50_000_000)  # cycles: tens of milliseconds
        a2.copy_(qa)
        d = ops.gemm_block_scaled(a2, sa, qb, sb)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    assert torch.equal(d, d_ref)


# ============================================== misuse ============================================

# ============================================== MXFP8 =============================================

def _ref_mx_codes(x, rule):
    """UE8M0 codes [M, K / 32] of bf16 x by the recipe (common/mx.hpp): amax = m 2^e (frexp,
    m in [0.5, 1)), floor_ocp: floor(log2 amax) - 8 + 127 = e + 118; rceil adds 1 when amax's
    significand 2m exceeds 1.75 (exactly ceil(log2(amax / 448)) for bf16 amax); clamped at 0; an
    all-zero block 127."""
    M, K = x.shape
    amax = x.float().view(M, K // 32, 32).abs().amax(-1)
    m, e = torch.frexp(amax)
    code = e.long() + 118 + ((m > 0.875).long() if rule == "rceil" else 0)
    code = code.clamp(min=0)
    return torch.where(amax == 0, torch.full_like(code, 127), code)


@parametrize("M,K,rule", [(1, 32, "floor_ocp"), (200, 1056, "floor_ocp"), (300, 512, "rceil"),
                          (129, 7168, "rceil")])
def test_quantize_mx_1x32_bitwise(M, K, rule):
    require_gpu()
    x = make_bf16((M, K), _gen(M + K))
    q, s = ops.quantize_mx_1x32(x, rule=rule)
    assert q.shape == (M, K) and q.dtype == E4
    assert s.shape == (_ceil(M, 128) * 128 * _ceil(K // 32, 4) * 4,) and s.dtype == torch.uint8
    codes = _ref_mx_codes(x, rule)
    idx = ops.mx_scale_index(M, K, x.device)
    assert torch.equal(s.long()[idx], codes)
    pad = torch.ones(s.numel(), dtype=torch.bool, device=s.device)
    pad[idx.flatten()] = False
    assert int(s[pad].long().sum()) == 0  # the padding is written 0
    scale = torch.exp2(codes.double() - 127).repeat_interleave(32, dim=1)
    q_ref = (x.double() / scale).clamp(-448, 448).float().to(E4)
    assert torch.equal(bits(q), bits(q_ref))


# Not multiples of the tiles; K multiples of 32, one not of 128.
MX_SHAPES = [(7, 40, 64), (200, 264, 640), (333, 1000, 1056), (129, 2112, 7168), (1000, 260, 4096)]


@parametrize("M,N,K", MX_SHAPES)
def test_gemm_mx_vs_float64(M, N, K):
    """The three Hopper paths against float64 on the dequantised operands, then again on other
    operands of the same shape (the cached plans re-bound). The re-quantising path is not exact,
    but on such data (N(0, 1), MX-quantised) it adds ~1e-7 to the error (chapter 9's README), far
    inside the tolerance."""
    require_gpu()
    for seed in (M + N + K, M + N + K + 1):
        gen = _gen(seed)
        qa, sa = ops.quantize_mx_1x32(make_bf16((M, K), gen))
        qb, sb = ops.quantize_mx_1x32(make_bf16((N, K), gen), rule="rceil")
        ref = ops.dequantize_mx_1x32(qa, sa).double() @ ops.dequantize_mx_1x32(qb, sb).double().t()
        for path in ({}, {"dequantize_bf16": True}, {"requantize_block_scaled": True}):
            d = ops.gemm_mx(qa, sa, qb, sb, **path)
            assert d.shape == (M, N) and d.dtype == torch.bfloat16
            assert torch.isfinite(d).all()
            assert rel_error(d, ref) <= tolerance(K), (path, rel_error(d, ref), tolerance(K))


def test_gemm_mx_float32():
    """A float32 D (session 64) on the three Hopper paths: within 5e-4 of float64 (the bf16 D's
    rounding alone is ~1e-3; the re-quantising path loses ~1e-7 on such data), out= with
    accumulate=True adds into it; an out= whose rows are wider keeps its other columns; the
    float32 D rounded to bf16 within one bf16 ulp of the bf16 op's D; a bf16 out with
    accumulate=True refused."""
    require_gpu()
    M, N, K = 300, 264, 1056
    gen = _gen(640)
    qa, sa = ops.quantize_mx_1x32(make_bf16((M, K), gen))
    qb, sb = ops.quantize_mx_1x32(make_bf16((N, K), gen), rule="rceil")
    ref = ops.dequantize_mx_1x32(qa, sa).double() @ ops.dequantize_mx_1x32(qb, sb).double().t()
    for path in ({}, {"dequantize_bf16": True}, {"requantize_block_scaled": True}):
        d = ops.gemm_mx(qa, sa, qb, sb, torch.float32, **path)
        assert d.shape == (M, N) and d.dtype == torch.float32
        assert rel_error(d, ref) <= 5e-4, (path, rel_error(d, ref))
        d16 = ops.gemm_mx(qa, sa, qb, sb, **path)
        one_ulp = torch.maximum(d16.float().abs(), d.abs()) * 2.0 ** -7
        assert ((d.bfloat16().float() - d16.float()).abs() <= one_ulp).all(), path
        # D's earlier values as large as the product: a skipped add would be ~0.7 off
        wide = torch.randn((M, N + 5), generator=gen, device="cuda") * ref.float().std()
        before = wide.clone()
        assert ops.gemm_mx(qa, sa, qb, sb, out=wide[:, :N], accumulate=True, **path) is not None
        assert rel_error(wide[:, :N], ref + before[:, :N].double()) <= 5e-4, path
        assert torch.equal(wide[:, N:], before[:, N:]), path
    with raises(ValueError, match=r"accumulate=True needs a torch.float32 out"):
        ops.gemm_mx(qa, sa, qb, sb, out=torch.zeros((M, N), device="cuda", dtype=torch.bfloat16),
                    accumulate=True)


def test_gemm_mx_requantize_path_is_taken():
    """requantize_block_scaled=True reaches chapter 9's re-quantising path (the tolerance above is
    met by all three paths, so it cannot tell): on data whose 1 x 32 blocks within a 1 x 128 group
    lie 2^16 apart exactly where the other operand's do the opposite (block 0 of every group of A
    loud, blocks 1-3 of B: chapter 9's README, "Data made to defeat the rule"; the CPU study's
    0.38 on such N(0, 1) data), the re-quantised product is far from the MX product, while the
    two exact paths match it."""
    require_gpu()
    M, N, K = 256, 264, 1024
    gen = _gen(93)
    block = torch.arange(K, device="cuda") // 32 % 4
    x = make_bf16((M, K), gen, spread=0.0).float()
    w = make_bf16((N, K), gen, spread=0.0).float()
    x = torch.where(block == 0, x * 65536.0, x).to(torch.bfloat16)
    w = torch.where(block != 0, w * 65536.0, w).to(torch.bfloat16)
    qa, sa = ops.quantize_mx_1x32(x, rule="rceil")
    qb, sb = ops.quantize_mx_1x32(w, rule="rceil")
    ref = ops.dequantize_mx_1x32(qa, sa).double() @ ops.dequantize_mx_1x32(qb, sb).double().t()
    for path in ({}, {"dequantize_bf16": True}):
        assert rel_error(ops.gemm_mx(qa, sa, qb, sb, **path), ref) <= tolerance(K), path
    err = rel_error(ops.gemm_mx(qa, sa, qb, sb, requantize_block_scaled=True), ref)
    assert err > 0.1, err


def _random_mx_operand(rows, K, gen, ld=None):
    """A random MXFP8 operand as requantize_mx's tests in C++ make them (tests/test_mx_gpu.cu):
    codes anywhere but NaN, blocks all zeros (+0 and -0) with probability 1/16, block exponents
    127 +- 12 (shifts into e4m3's subnormals and past them), and where there are enough groups,
    each in a 1 x 128 group of its own: a NaN code, a NaN element, a zero block above its group's
    exponent, a block 40 binades below the rest of its group (flushed), code 254, and a group
    whose only non-zero block has code 0 (scale 2^-127). q is a [rows, K] view of a [rows, ld]
    buffer whose columns past K hold NaN codes (ld > K: strided rows); the scale padding holds
    code 255 (NaN): a kernel that read either would show it."""
    ld = ld or K
    cb, kg = K // 32, _ceil(K, 128)
    raw = torch.randint(0, 256, (rows, ld), generator=gen, device="cuda", dtype=torch.int32)
    raw = torch.where(raw & 0x7F == 0x7F, raw & 0xF0, raw)  # no NaN codes yet
    raw[:, K:] = 0x7F
    zero = torch.randint(0, 16, (rows, cb), generator=gen, device="cuda") == 0
    zero = zero.repeat_interleave(32, dim=1)
    raw[:, :K] = torch.where(zero, raw[:, :K] & 0x80, raw[:, :K])
    codes = torch.randint(127 - 12, 127 + 13, (rows, cb), generator=gen, device="cuda")
    if rows * kg >= 6:
        # Six distinct 1 x 128 groups (row, group), a block of each.
        picks = torch.randperm(rows * kg, generator=gen, device="cuda")[:6].tolist()
        rc = [(i // kg, min(cb - 1, i % kg * 4)) for i in picks]
        codes[rc[0]] = 255                                   # NaN code
        raw[rc[1][0], rc[1][1] * 32 + 5] = 0x7F              # NaN element
        r, b = rc[2]
        raw[r, b * 32:b * 32 + 32] &= 0x80                   # zero block above its exponent
        codes[r, b] = 127 + 40
        for (r, b), code in ((rc[3], 127 - 40), (rc[4], 254)):   # flushed; code 254
            raw[r, b * 32] = 0x38                            # 1.0: non-zero for sure
            codes[r, b] = code
        r, b = rc[5]                                         # a group's only non-zero block, code 0
        for j in range(b, min(cb, b + 4)):
            raw[r, j * 32:j * 32 + 32] &= 0x80
        raw[r, b * 32] = 0x38
        codes[r, b] = 0
    q = raw.to(torch.uint8).view(E4)[:, :K]
    s = torch.full((_ceil(rows, 128) * 128 * _ceil(cb, 4) * 4,), 255, dtype=torch.uint8,
                   device="cuda")
    s[ops.mx_scale_index(rows, K, q.device)] = codes.to(torch.uint8)
    return q, s


def _requant_reference(q, s, weights):
    """The re-quantisation rule (common/mx.hpp) in plain torch: a group's exponent E is the
    largest scale code among its 1 x 32 blocks that hold a non-zero code (none: 127); each code
    becomes e4m3(value * 2^(code - E)), rounded to nearest even (exact in float32: the values are
    e4m3's, the factors powers of two); the scale is 2^(E - 127); a group holding a NaN code or
    element is NaN throughout (codes 0x7F, scale NaN). Groups: 1 x 128 (weights False) or
    128 x 128 (True)."""
    rows, K = q.shape
    cb, kg = K // 32, _ceil(K, 128)
    codes = s.long()[ops.mx_scale_index(rows, K, q.device)]        # [rows, cb]
    raw = q.contiguous().view(torch.uint8).long().view(rows, cb, 32)
    nonzero = ((raw & 0x7F) != 0).any(dim=2)                        # NaN elements count, as 0x7F
    nan = (codes == 255) | ((raw & 0x7F) == 0x7F).any(dim=2)
    cand = torch.where(nonzero & (codes != 255), codes, torch.full_like(codes, -1))
    pad_b = kg * 4 - cb                                             # blocks to whole groups
    cand = torch.nn.functional.pad(cand, (0, pad_b), value=-1).view(rows, kg, 4).amax(dim=2)
    nan = torch.nn.functional.pad(nan, (0, pad_b), value=False).view(rows, kg, 4).any(dim=2)
    if weights:                                                     # [rows, kg] -> [nb, kg]
        nb = _ceil(rows, 128)
        cand = torch.nn.functional.pad(cand, (0, 0, 0, nb * 128 - rows), value=-1)
        cand = cand.view(nb, 128, kg).amax(dim=1)
        nan = torch.nn.functional.pad(nan, (0, 0, 0, nb * 128 - rows), value=False)
        nan = nan.view(nb, 128, kg).any(dim=1)
        E_rows = cand.repeat_interleave(128, dim=0)[:rows]
        nan_rows = nan.repeat_interleave(128, dim=0)[:rows]
    else:
        E_rows, nan_rows = cand, nan
    E = torch.where(cand < 0, torch.full_like(cand, 127), cand)
    E_el = torch.where(E_rows < 0, torch.full_like(E_rows, 127), E_rows)
    E_el = E_el.repeat_interleave(128, dim=1)[:, :K]
    # code - E <= 0 for every block with a non-zero code; a zero block above E keeps its zeros
    # (2^(code - E) could be inf there, and 0 inf NaN).
    up = codes.repeat_interleave(32, dim=1) - E_el
    v = torch.where(up > 0, q.float(), q.float() * torch.exp2(up.float()))
    out = v.to(E4).view(torch.uint8)
    out = torch.where(nan_rows.repeat_interleave(128, dim=1)[:, :K], torch.full_like(out, 0x7F), out)
    scale = torch.where(nan, torch.full_like(E, 0, dtype=torch.float64) + float("nan"),
                        torch.exp2(E.double() - 127)).float()
    return out.view(E4), scale


@parametrize("rows,K,ld", [(1, 32, None), (200, 1056, None), (333, 544, 576), (129, 7168, None),
                           (256, 4096, None), (130, 864, 880)])
def test_requantize_mx_bitwise(rows, K, ld):
    """requantize_mx_1x128 / _128x128 against the rule written in torch, bit for bit (codes and
    scale bits, NaN groups included), on operands made to reach every branch, strided rows too,
    ragged last groups of 1 and 3 blocks; their outputs laid out as quantize_1x128's /
    quantize_128x128's."""
    require_gpu()
    gen = _gen(rows * 7 + K)
    q, s = _random_mx_operand(rows, K, gen, ld)
    if rows * _ceil(K, 128) >= 6:  # the special cases are there: the test is not vacuous
        _, sa = _requant_reference(q, s, False)
        assert bool((sa == 2.0 ** -127).any()) and bool((sa == 2.0 ** 127).any())
        assert int(torch.isnan(sa).sum()) == 2  # the NaN code's group and the NaN element's
    for weights, fn, like in ((False, ops.requantize_mx_1x128, ops.quantize_1x128),
                              (True, ops.requantize_mx_128x128, ops.quantize_128x128)):
        out, scale = fn(q, s)
        want_q, want_s = _requant_reference(q, s, weights)
        _, like_s = like(make_bf16((rows, K), gen))
        assert out.dtype == E4 and out.shape == (rows, K) and out.is_contiguous()
        assert scale.dtype == torch.float32 and scale.shape == like_s.shape
        assert scale.stride() == like_s.stride(), (weights, scale.stride(), like_s.stride())
        assert torch.equal(bits(out), bits(want_q)), weights
        assert torch.equal(scale.contiguous().view(torch.int32), want_s.contiguous().view(torch.int32)), weights
        if rows * K >= 64 * 32:  # elements moved
            assert not torch.equal(bits(out), bits(q.contiguous())), weights


def test_requantize_mx_empty():
    """No rows: empty outputs laid out as the quantisers', nothing launched."""
    require_gpu()
    q = torch.empty((0, 256), dtype=E4, device="cuda")
    s = torch.empty((0,), dtype=torch.uint8, device="cuda")
    for fn, like in ((ops.requantize_mx_1x128, ops.quantize_1x128),
                     (ops.requantize_mx_128x128, ops.quantize_128x128)):
        out, scale = fn(q, s)
        lq, ls = like(torch.empty((0, 256), dtype=torch.bfloat16, device="cuda"))
        assert out.shape == lq.shape and out.dtype == E4
        assert scale.shape == ls.shape and scale.stride() == ls.stride()
    torch.cuda.synchronize()


@parametrize("M,N,K", [(333, 264, 1056), (129, 2112, 7168)])
def test_requantize_mx_weights_once(M, N, K):
    """The weights-once recipe (chapter 9's README): B re-quantised once by requantize_mx_128x128,
    A by requantize_mx_1x128, then gemm_block_scaled: within the tolerance of the float64 product
    of the re-quantised operands, and of the MX product on such data (N(0, 1), MX-quantised), as
    gemm_mx(..., requantize_block_scaled=True) is; with new activations the same weights again."""
    require_gpu()
    gen = _gen(M + N + K + 5)
    qb, sb = ops.quantize_mx_1x32(make_bf16((N, K), gen), rule="rceil")
    rb, rsb = ops.requantize_mx_128x128(qb, sb)  # once
    for _ in range(2):
        qa, sa = ops.quantize_mx_1x32(make_bf16((M, K), gen))
        ra, rsa = ops.requantize_mx_1x128(qa, sa)
        d = ops.gemm_block_scaled(ra, rsa, rb, rsb)
        deq_a = ra.double() * rsa.double().repeat_interleave(128, dim=1)[:, :K]
        deq_b = rb.double() * rsb.double().repeat_interleave(128, dim=0)[:N].repeat_interleave(
            128, dim=1)[:, :K]
        assert rel_error(d, deq_a @ deq_b.t()) <= tolerance(K)
        mx = ops.dequantize_mx_1x32(qa, sa).double() @ ops.dequantize_mx_1x32(qb, sb).double().t()
        assert rel_error(d, mx) <= tolerance(K)
        path = ops.gemm_mx(qa, sa, qb, sb, requantize_block_scaled=True)
        assert rel_error(d, path.double()) <= tolerance(K)


def test_requantize_mx_misuse():
    require_gpu()
    gen = _gen(94)
    q, s = _random_mx_operand(256, 1024, gen)
    cases = [
        (lambda: ops.requantize_mx_1x128(q[:, :1000], s), r"requantize_mx_1x128: q has shape "
                                                            r"\[256, 1000\]: K = 1000 must be a "
                                                            r"multiple of 32"),
        (lambda: ops.requantize_mx_128x128(q.view(torch.uint8), s),
         r"requantize_mx_128x128: q must be torch.float8_e4m3fn"),
        (lambda: ops.requantize_mx_1x128(q, s[:100]), r"scale has 100 bytes; M = 256, K = 1024 need"),
        (lambda: ops.requantize_mx_128x128(q, s[:100]), r"scale has 100 bytes; N = 256, K = 1024 need"),
        (lambda: ops.requantize_mx_1x128(q, s.cpu()), r"scale must be a CUDA tensor"),
        (lambda: ops.requantize_mx_1x128(q, s.float()), r"scale must be torch.uint8"),
        (lambda: ops.requantize_mx_1x128(q.t(), s), r"q must be row-major"),
        # The library's rule: 16-byte rows (what the GEMMs that read the result need too).
        (lambda: ops.requantize_mx_1x128(torch.zeros(64, 1056 + 8, dtype=torch.uint8,
                                                     device="cuda").view(E4)[:, :1056],
                                         torch.zeros(128 * 36, dtype=torch.uint8, device="cuda")),
         r"ldq = 1064 and ldo = 1056 must be multiples of 16"),
    ]
    for call, msg in cases:
        with raises(ValueError, match=msg):
            call()
    out, scale = ops.requantize_mx_1x128(q, s)  # nothing launched, no CUDA error left behind
    torch.cuda.synchronize()
    assert out.shape == (256, 1024)


def test_gemm_mx_misuse():
    require_gpu()
    M, N, K = 256, 384, 1024
    gen = _gen(91)
    x, w = make_bf16((M, K), gen), make_bf16((N, K), gen)
    qa, sa = ops.quantize_mx_1x32(x)
    qb, sb = ops.quantize_mx_1x32(w)
    cases = [
        (lambda: ops.quantize_mx_1x32(x[:, :1000]), r"K = 1000 must be a multiple of 32"),
        (lambda: ops.quantize_mx_1x32(x, rule="round"), r"rule = 'round' must be 'floor_ocp'"),
        (lambda: ops.quantize_mx_1x32(x.float()), r"x must be torch.bfloat16"),
        (lambda: ops.gemm_mx(qa, sa[:100], qb, sb), r"scale_a has 100 bytes; M = 256, K = 1024 need"),
        (lambda: ops.gemm_mx(qa, sa.float(), qb, sb), r"scale_a must be torch.uint8"),
        (lambda: ops.gemm_mx(qa, sa, qb, sb.cpu()), r"scale_b must be a CUDA tensor"),
        (lambda: ops.gemm_mx(qa[:, :1000], sa, qb[:, :1000], sb), r"K = 1000 must be a multiple of 32"),
        (lambda: ops.gemm_mx(qa, sa, qb[:, :512], sb), r"b has shape \[384, 512\]: dimension 1 must be 1024"),
        (lambda: ops.gemm_mx(qa, sa, qb, sb, dequantize_bf16=True, requantize_block_scaled=True),
         r"dequantize_bf16=True and requantize_block_scaled=True are two different paths"),
    ]
    for call, msg in cases:
        with raises(ValueError, match=msg):
            call()
    d = ops.gemm_mx(qa, sa, qb, sb)  # nothing launched, no CUDA error left behind
    torch.cuda.synchronize()
    assert torch.isfinite(d).all()


def test_gemm_mx_converting_paths_per_stream_and_not_captured():
    """The dequantize_bf16 and requantize_block_scaled paths' plans own a workspace every run
    writes: two streams get a plan each (both results right when they run at once), and a
    CUDA-graph capture is refused (the plan cache could free the workspace under the graph); the
    default path captures."""
    require_gpu()
    M, N, K = 512, 640, 2048
    gen = _gen(92)
    qa, sa = ops.quantize_mx_1x32(make_bf16((M, K), gen))
    qb, sb = ops.quantize_mx_1x32(make_bf16((N, K), gen))
    qc, sc = ops.quantize_mx_1x32(make_bf16((M, K), gen))
    ref_a = ops.gemm_mx(qa, sa, qb, sb)
    ref_c = ops.gemm_mx(qc, sc, qb, sb)
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    torch.cuda.synchronize()
    for path in ({"dequantize_bf16": True}, {"requantize_block_scaled": True}):
        # From an empty cache: one plan per stream (2 built, 2 held), hit by every later call. A
        # plan shared by the streams would be 1 built and 1 held. (Rebinds cannot tell: each call
        # writes a new output tensor, so every hit re-points its plan anyway.)
        fp8gemm.ops.plan_cache_clear()
        for _ in range(20):
            with torch.cuda.stream(s1):
                d1 = ops.gemm_mx(qa, sa, qb, sb, **path)
            with torch.cuda.stream(s2):
                d2 = ops.gemm_mx(qc, sc, qb, sb, **path)
        torch.cuda.synchronize()
        stats = fp8gemm.ops.plan_cache_stats()
        assert rel_error(d1, ref_a.double()) <= tolerance(K), path
        assert rel_error(d2, ref_c.double()) <= tolerance(K), path
        assert (stats["misses"], stats["size"], stats["hits"]) == (2, 2, 38), (path, stats)
        graph = torch.cuda.CUDAGraph()
        with raises(ValueError, match=rf"{next(iter(path))}=True cannot be captured in a CUDA graph"):
            with torch.cuda.graph(graph):
                ops.gemm_mx(qa, sa, qb, sb, **path)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        d3 = ops.gemm_mx(qa, sa, qb, sb)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(d3, ref_a)
    # New data in the captured inputs, and an eager call of the same shape on other tensors in
    # between (it re-points the cached plan): the replay reads the graph's own inputs, anew.
    qa.copy_(qc)
    sa.copy_(sc)
    d3.fill_(float("nan"))
    d4 = ops.gemm_mx(qc, sc, qb, sb)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(d3, ref_c) and torch.equal(d4, ref_c)


def test_misuse_messages():
    require_gpu()
    M, N, K = 256, 384, 1024
    qa, sa, qb, sb = _block_scaled_operands(M, N, K, 81)
    bf = torch.zeros(M, K, device="cuda", dtype=torch.bfloat16)
    g = ops.gemm_block_scaled
    cases = [
        (lambda: g(bf, sa, qb, sb), r"gemm_block_scaled: a must be torch.float8_e4m3fn; got torch.bfloat16"),
        (lambda: g(qa, sa.cpu(), qb, sb), r"scale_a must be a CUDA tensor; got a tensor on cpu"),
        (lambda: g(qa, sa, qb[:, :512], sb), r"b has shape \[384, 512\]: dimension 1 must be 1024"),
        (lambda: g(qa, sa[:100], qb, sb), r"scale_a has shape \[100, 8\]: dimension 0 must be 256"),
        (lambda: g(qa, sa, qb, sb[:, :3]), r"scale_b has shape \[3, 3\]: dimension 1 must be 8"),
        (lambda: g(qa.t().contiguous().t(), sa, qb, sb), r"a must be row-major"),
        (lambda: g(qa, sa, qb, sb, torch.float16), r"out_dtype must be torch.bfloat16 or torch.float32"),
        (lambda: g(qa, sa, qb, sb, out=torch.empty(M, N, device="cuda", dtype=torch.bfloat16),
                   accumulate=True), r"accumulate=True needs a torch.float32 out"),
        (lambda: g(qa, sa, qb, sb, out=torch.empty(M, N + 1, device="cuda")),
         r"out has shape \[256, 385\]: dimension 1 must be 384"),
        (lambda: ops.quantize_1x128(bf.float()), r"quantize_1x128: x must be torch.bfloat16; got torch.float32"),
        (lambda: ops.quantize_1x128(bf[0]), r"x must be 2-D \[M, K\]; got shape \[1024\]"),
        (lambda: ops.quantize_128x128(bf.t()), r"w must be row-major"),
        (lambda: ops.gemm_per_tensor(qa, qb, sa, sb), r"scale_a must be a one-element torch.float32"),
    ]
    # a row stride that is not a multiple of 16 bytes: refused by the library's rule, named
    wide = torch.zeros(M, K + 8, device="cuda", dtype=torch.uint8).view(E4)
    cases.append((lambda: g(wide[:, :K], sa, qb, sb), r"lda"))
    # K not a multiple of 16
    q100, s100 = ops.quantize_1x128(torch.ones(M, 100, device="cuda", dtype=torch.bfloat16))
    w100, t100 = ops.quantize_128x128(torch.ones(N, 100, device="cuda", dtype=torch.bfloat16))
    cases.append((lambda: g(q100, s100, w100, t100), r"K = 100"))
    if torch.cuda.device_count() > 1:
        cases.append((lambda: g(qa, sa, qb.to("cuda:1"), sb), r"b is on cuda:1 but"))
    for call, msg in cases:
        with raises(ValueError, match=msg):
            call()
    # grouped and weight-gradient arguments
    qg, sg = _grouped_weights(2, N, K, _gen(82))
    off64 = torch.tensor([0, 100, M], device="cuda")
    with raises(ValueError, match=r"offsets must be torch.int32; got torch.int64"):
        ops.gemm_grouped_contiguous(qa, sa, qg, sg, off64)
    with raises(ValueError, match=r"offsets has shape \[2\]: dimension 0 must be 3"):
        ops.gemm_grouped_contiguous(qa, sa, qg, sg, off64[:2].int())
    with raises(ValueError, match=r"scale_b must be 3-D"):
        ops.gemm_grouped_contiguous(qa, sa, qg, sg[0], off64.int())
    with raises(ValueError, match=r"accumulate=True needs out="):
        ops.gemm_weight_grad(qa, sa, qa, sa, off64.int(), accumulate=True)
    # nothing was launched and no CUDA error is left behind: a valid call still works
    d = g(qa, sa, qb, sb)
    torch.cuda.synchronize()
    assert torch.isfinite(d).all()


def _gpu_activity(call):
    """(the exception call() raised or None, the names of the kernels, copies and fills the GPU
    ran meanwhile), by torch.profiler's CUDA activity (CUPTI)."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    raised = None
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        try:
            call()
        except Exception as e:  # noqa: BLE001 (the caller checks what was raised)
            raised = e
        torch.cuda.synchronize()
    return raised, [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]


def test_refused_calls_enqueue_nothing():
    """A refused call has run nothing on the GPU (ops.py: "ValueError ... before any GPU work"),
    also where a scale tensor needs a copy into the kernels' layout: since session 51 that copy
    waits until the library has accepted the call. Refused by the library itself (A or dd_t 8 bytes
    off a 16-byte boundary), on a plan cache miss (a new plan) and on a hit (the cached plan's
    re-pointing), and by the op's own checks. The controls, the same calls made valid, show that
    the profiler sees the copy and the GEMM (so this test can fail)."""
    require_gpu()
    M, N, K = 256, 384, 1024
    qa, sa, qb, sb = _block_scaled_operands(M, N, K, 93)
    sa_k = sa.contiguous()  # strides (kg, 1): the op copies it into its (1, ld) layout
    assert sa_k.stride() != sa.stride()
    a_off = _off_by_8(qa)  # TMA cannot read it: the library refuses it
    misaligned_a = r"A = 0x[0-9a-f]+ must be 16-byte aligned"

    def control(call, least):
        raised, ran = _gpu_activity(call)
        assert raised is None and len(ran) >= least, (raised, ran)
        assert any("copy" in n.lower() for n in ran), ran  # the scale copy is seen

    def refused(what, call, msg, cache=None):
        """call() raises ValueError matching msg and runs nothing on the GPU; cache: "hit" or
        "miss", how the plan cache served it (a refused rebind leaves rebinds unchanged)."""
        before = ops.plan_cache_stats()
        raised, ran = _gpu_activity(call)
        assert isinstance(raised, ValueError) and re.search(msg, str(raised)), (what, raised)
        assert ran == [], (what, ran)
        after = ops.plan_cache_stats()
        if cache is not None:
            hits, misses = after["hits"] - before["hits"], after["misses"] - before["misses"]
            assert (hits, misses) == ((1, 0) if cache == "hit" else (0, 1)), (what, before, after)
            assert after["rebinds"] == before["rebinds"], (what, before, after)

    g = ops.gemm_block_scaled
    ops.plan_cache_clear()
    control(lambda: g(qa, sa_k, qb, sb), 2)  # the scale copy, the GEMM; the plan is cached
    refused("A refused by the cached plan's rebind", lambda: g(a_off, sa_k, qb, sb), misaligned_a,
            "hit")
    ops.plan_cache_clear()
    refused("A refused by a new plan", lambda: g(a_off, sa_k, qb, sb), misaligned_a, "miss")
    bad_out = torch.empty(M, N + 1, device="cuda", dtype=torch.bfloat16)
    refused("scale_b refused by the op", lambda: g(qa, sa_k, qb, sb[:, :3]), r"scale_b has shape")
    refused("out refused by the op", lambda: g(qa, sa_k, qb, sb, out=bad_out), r"out has shape")
    # grouped (contiguous): the same, the plan made by the control
    G = 2
    qg, sg = _grouped_weights(G, N, K, _gen(94))
    offsets = torch.tensor([0, 100, M], device="cuda", dtype=torch.int32)
    gc = ops.gemm_grouped_contiguous
    control(lambda: gc(qa, sa_k, qg, sg, offsets), 2)
    refused("grouped: A refused by the cached plan's rebind", lambda: gc(a_off, sa_k, qg, sg, offsets),
            misaligned_a, "hit")
    ops.plan_cache_clear()
    refused("grouped: A refused by a new plan", lambda: gc(a_off, sa_k, qg, sg, offsets),
            misaligned_a, "miss")
    refused("grouped: scale_b refused by the op", lambda: gc(qa, sa_k, qg, sg[:, :, :3], offsets),
            r"scale_b has shape")
    # the weight gradient: both scales to copy (k-major)
    T, Nw, Kw = 256, 256, 384
    gen = _gen(95)
    off = ops.dense_offsets(T, "cuda")
    q_dyt, s_dyt, _ = ops.quantize_tokens_transposed_1x128(make_bf16((T, Nw), gen), off)
    q_xt, s_xt, _ = ops.quantize_tokens_transposed_1x128(make_bf16((T, Kw), gen), off)
    s_dyt_k, s_xt_k = s_dyt.contiguous(), s_xt.contiguous()
    assert s_dyt_k.stride() != s_dyt.stride() and s_xt_k.stride() != s_xt.stride()
    w = ops.gemm_weight_grad
    control(lambda: w(q_dyt, s_dyt_k, q_xt, s_xt_k, off), 3)  # two copies, the GEMM
    dyt_off = _off_by_8(q_dyt)
    # (the library names dd_t as its engine's A, and says so: "[in the engine's terms: A = dD_t")
    refused("wgrad: dd_t refused by the cached plan's rebind",
            lambda: w(dyt_off, s_dyt_k, q_xt, s_xt_k, off), misaligned_a + r".*A = dD_t", "hit")
    bad_db = torch.empty(1, Nw, Kw + 1, device="cuda")
    refused("wgrad: out refused by the op", lambda: w(q_dyt, s_dyt_k, q_xt, s_xt_k, off, out=bad_db),
            r"out has shape")
    # and the ops still work after all that
    assert torch.equal(g(qa, sa_k, qb, sb), g(qa, sa, qb, sb))


def _loaded_cudart():
    """ctypes handle of the libcudart this process loaded (torch's, which the ops share: their CUDA
    error state is the one the ops check)."""
    import ctypes
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if "libcudart.so" in line}
    assert paths, "no libcudart loaded"
    rt = ctypes.CDLL(sorted(paths)[0])
    rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
    rt.cudaGetLastError.argtypes = []
    return rt


def _with_pending_error(call):
    """Runs call() with an earlier, non-sticky CUDA error pending (a failed cudaMalloc of 2^62
    bytes: cudaErrorMemoryAllocation); returns (that error, the message of the RuntimeError call()
    raised or None, the error still pending afterwards, which this clears)."""
    import ctypes
    rt = _loaded_cudart()
    torch.cuda.synchronize()
    assert rt.cudaGetLastError() == 0
    p = ctypes.c_void_p()
    error = rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(1 << 62))
    assert error == 2, error  # cudaErrorMemoryAllocation
    message = None
    try:
        call()
    except RuntimeError as e:
        message = str(e)
    finally:
        left = rt.cudaGetLastError()  # also clears it
    return error, message, left


def test_pending_cuda_error_before_the_ops_own_gpu_work():
    """An earlier CUDA error still pending (a failed cudaMalloc of 2^62 bytes: not sticky) when a
    GEMM op would copy a scale tensor: the op raises RuntimeError saying the error is from an
    earlier call, launches nothing (out untouched) and leaves the error pending for its owner,
    as the library's plans do (docs/contract.md); torch's copy kernel would have taken it for its
    own."""
    require_gpu()
    M, N, K = 256, 384, 1024
    qa, sa, qb, sb = _block_scaled_operands(M, N, K, 96)
    sa_k = sa.contiguous()  # a scale to copy
    out = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
    ops.gemm_block_scaled(qa, sa_k, qb, sb, out=torch.empty_like(out))  # plan cached, allocator warm
    error, message, left = _with_pending_error(
        lambda: ops.gemm_block_scaled(qa, sa_k, qb, sb, out=out))
    # The state first, so that a message worded otherwise still has them checked (session 52's
    # H100 run stopped at the message: the test expected another op name).
    assert message is not None, "the op did not raise with an earlier error pending"
    assert left == error, left
    torch.cuda.synchronize()
    assert torch.isnan(out).all(), "a refused call wrote its out"
    # out= runs the op's _out overload (torch.library), whose name the message carries.
    assert re.search(r"gemm_block_scaled_out: before its GPU work: not launched: a CUDA error "
                     r"from an earlier call is pending: cudaErrorMemoryAllocation", message), message
    ops.gemm_block_scaled(qa, sa_k, qb, sb, out=out)  # and the op works again
    torch.cuda.synchronize()
    assert torch.equal(out, ops.gemm_block_scaled(qa, sa, qb, sb))


def test_pending_cuda_error_before_transpose_e4m3():
    """An earlier CUDA error still pending when transpose_e4m3 would launch its kernel: the op
    raises RuntimeError saying the error is from an earlier call and leaves the error pending for
    its owner (session 70; before, its launch check reported the error as its own
    launch's failure and cleared it)."""
    require_gpu()
    q = torch.randn(256, 512, device="cuda").to(torch.float8_e4m3fn)
    ops.transpose_e4m3(q)  # warm (the allocator too)
    error, message, left = _with_pending_error(lambda: ops.transpose_e4m3(q))
    assert message is not None, "the op did not raise with an earlier error pending"
    assert left == error, left
    assert "from an earlier call" in message, message
    assert "transpose_e4m3" in message, message
    torch.cuda.synchronize()
    assert torch.equal(ops.transpose_e4m3(q).view(torch.uint8), q.t().contiguous().view(torch.uint8))


def test_version():
    require_gpu()
    assert ops.library_version() == fp8gemm.ops.library_version()
