"""Fp8Linear and Fp8GroupedExperts on an sm_90a GPU.

Two checks per gradient:
  tight  against a float64 computation on the operands exactly as the layer quantises them
         (the ops' quantisers are checked bit for bit elsewhere): the project's GEMM tolerance
         2^-8 + 2.5e-7 K (bf16 rounding of the result, FP32 accumulation), so a wrong transpose,
         scale or operand cannot hide in the FP8 noise;
  loose  against bf16 autograd (torch.nn.Linear, or a loop over the experts) on the same weights:
         the stated tolerance of the FP8 recipe, relative Frobenius error <= 0.06 for y, dX and dW
         on N(0, 1) data (e4m3 keeps 3 mantissa bits: ~2.6% rms error per operand, ~3.7% per
         product; measured by chapter 8's end-to-end test: 3.7e-2).
Plus determinism, float32 master weights, inputs with leading dimensions, the weight cache and its
invalidation. Skipped without an sm_90a GPU."""

import torch

from _testlib import parametrize, raises, rel_error, require_gpu, tolerance
from fp8gemm import nn as fnn
from fp8gemm import ops

FP8_VS_BF16 = 0.06  # the stated tolerance against bf16 autograd (see above)


def _gen(seed):
    return torch.Generator(device="cuda").manual_seed(seed)


def _randn(shape, gen, dtype=torch.bfloat16):
    return torch.randn(shape, generator=gen, device="cuda").to(dtype)


def _vary_blocks_(w, seed):
    """Multiplies w ([N, K] or [G, N, K]) in place by a power of two per 128 x 128 block (and
    expert), 2^-3 .. 2^3, exactly. The default initialisation (uniform, +-1/sqrt(K)) gives every
    full block the same amax, hence the same scale bit for bit, so a scale applied to the wrong
    block or expert could not change a result; with these, every block's scale differs."""
    gen = _gen(seed)
    *lead, N, K = w.shape
    e = torch.randint(-3, 4, (*lead, -(-N // 128), -(-K // 128)), generator=gen, device="cuda")
    f = torch.exp2(e.float()).repeat_interleave(128, -2).repeat_interleave(128, -1)
    with torch.no_grad():
        w.mul_(f[..., :N, :K].to(w.dtype))


def _pair(K, N, bias, dtype=torch.bfloat16, seed=0):
    torch.manual_seed(seed)
    lin = torch.nn.Linear(K, N, bias=bias, device="cuda", dtype=dtype)
    _vary_blocks_(lin.weight, seed + 1000)
    f8 = fnn.Fp8Linear(K, N, bias=bias, device="cuda", dtype=dtype)
    f8.load_state_dict(lin.state_dict())
    return lin, f8


def _tight_references(x2, w, dy2, bias):
    """y, dX, dW, db in float64 from the operands as Fp8Linear quantises them."""
    M = x2.shape[0]
    qx, sx = ops.quantize_1x128(x2)
    qw, sw = ops.quantize_128x128(w.to(torch.bfloat16))
    W = ops.dequantize_128x128(qw, sw).double()
    y = ops.dequantize_1x128(qx, sx).double() @ W.t()
    if bias is not None:
        y = y + bias.double()
    qdy, sdy = ops.quantize_1x128(dy2)
    dx = ops.dequantize_1x128(qdy, sdy).double() @ W  # W^T's blocks are W's, transposed
    off = ops.dense_offsets(M, "cuda")
    a = ops.quantize_tokens_transposed_1x128(dy2, off)
    b = ops.quantize_tokens_transposed_1x128(x2, off)
    dw = ops.dequantize_1x128(a[0], a[1]).double() @ ops.dequantize_1x128(b[0], b[1]).double().t()
    db = dy2.double().sum(0)
    return y, dx, dw, db


@parametrize("M,K,N,bias", [(333, 1040, 384, True), (512, 1024, 2112, False), (128, 7168, 256, True)])
def test_fp8linear_gradients(M, K, N, bias):
    require_gpu()
    gen = _gen(M + K + N)
    lin, f8 = _pair(K, N, bias, seed=M)
    x = _randn((M, K), gen)
    dy = _randn((M, N), gen)
    xl, xf = x.clone().requires_grad_(), x.clone().requires_grad_()
    yl, yf = lin(xl), f8(xf)
    yl.backward(dy)
    yf.backward(dy)
    assert yf.dtype == torch.bfloat16 and yf.shape == (M, N)
    # tight: the FP8 computation itself
    y64, dx64, dw64, db64 = _tight_references(x, f8.weight.detach(), dy, f8.bias)
    assert rel_error(yf, y64) <= tolerance(K)
    assert rel_error(xf.grad, dx64) <= tolerance(N)
    assert rel_error(f8.weight.grad, dw64) <= tolerance(M)
    if bias:
        assert rel_error(f8.bias.grad, db64) <= 2 ** -8
    # loose: against bf16 autograd
    errs = {"y": rel_error(yf, yl), "dx": rel_error(xf.grad, xl.grad),
            "dw": rel_error(f8.weight.grad, lin.weight.grad)}
    print(f"Fp8Linear M={M} K={K} N={N} vs bf16 autograd: " +
          ", ".join(f"{k} {v:.4f}" for k, v in errs.items()))
    for k, v in errs.items():
        assert v <= FP8_VS_BF16, (k, v)
    if bias:
        assert rel_error(f8.bias.grad, lin.bias.grad) <= 2 ** -7


def test_fp8linear_leading_dims_and_fp32_master_weights():
    require_gpu()
    gen = _gen(7)
    lin, f8 = _pair(1024, 512, True, dtype=torch.float32, seed=7)
    x = _randn((4, 96, 1024), gen, torch.float32)  # 384 tokens, float32 in
    xl, xf = x.clone().requires_grad_(), x.clone().requires_grad_()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        yl = lin(xl)
    yf = f8(xf)
    assert yf.shape == (4, 96, 512) and yf.dtype == torch.bfloat16
    dy = _randn((4, 96, 512), gen)
    yl.backward(dy)
    yf.backward(dy)
    assert xf.grad.dtype == torch.float32 and f8.weight.grad.dtype == torch.float32
    for a, b in ((yf, yl), (xf.grad, xl.grad), (f8.weight.grad, lin.weight.grad)):
        assert rel_error(a, b) <= FP8_VS_BF16
    # tight, as for bf16 weights (autograd would cast a bf16 gradient to float32 silently, so the
    # dtype alone proves nothing): dW is the kernel's FP32 sums, not rounded to bf16 on the way
    x2, dy2 = x.reshape(-1, 1024).bfloat16(), dy.reshape(-1, 512)
    y64, dx64, dw64, db64 = _tight_references(x2, f8.weight.detach(), dy2, f8.bias.detach())
    assert rel_error(yf.reshape(-1, 512), y64) <= tolerance(1024)
    assert rel_error(xf.grad.reshape(-1, 1024), dx64) <= tolerance(512)
    assert rel_error(f8.weight.grad, dw64) <= tolerance(384)
    assert (f8.weight.grad != f8.weight.grad.bfloat16().float()).any(), "dW rounded to bf16"
    assert f8.bias.grad.dtype == torch.float32
    assert rel_error(f8.bias.grad, db64) <= 1e-5  # summed in FP32 from bf16 dY


def test_fp8linear_frozen_weight_and_no_input_grad():
    require_gpu()
    gen = _gen(8)
    _, f8 = _pair(1024, 256, True, seed=8)
    f8.weight.requires_grad_(False)
    x = _randn((200, 1024), gen).requires_grad_()
    f8(x).float().sum().backward()
    assert x.grad is not None and f8.weight.grad is None and f8.bias.grad is not None
    f8.weight.requires_grad_(True)
    x2 = _randn((200, 1024), gen)  # no input gradient wanted
    f8(x2).float().sum().backward()
    assert f8.weight.grad is not None


def test_fp8linear_weight_grad_only_matches_full_backward():
    """x without a gradient (a first layer) at M % 128 == 0: dW from dY^T alone
    (quantize_tokens_transposed_1x128) is bit for bit the full backward's dW (the dual
    quantiser's second half)."""
    require_gpu()
    gen = _gen(9)
    _, f8 = _pair(1024, 384, False, seed=9)
    x = _randn((256, 1024), gen)
    dy = _randn((256, 384), gen)
    f8(x).backward(dy)  # only dW
    only_dw = f8.weight.grad.clone()
    f8.weight.grad = None
    f8(x.clone().requires_grad_()).backward(dy)  # dX and dW
    assert torch.equal(f8.weight.grad, only_dw)


def test_fp8linear_determinism():
    require_gpu()
    gen = _gen(9)
    _, f8 = _pair(2048, 1024, True, seed=9)
    x, dy = _randn((1000, 2048), gen), _randn((1000, 1024), gen)
    outs = []
    for _ in range(2):
        f8.zero_grad(set_to_none=True)
        xi = x.clone().requires_grad_()
        y = f8(xi)
        y.backward(dy)
        outs.append((y, xi.grad, f8.weight.grad.clone(), f8.bias.grad.clone()))
    for a, b in zip(*outs):
        assert torch.equal(a, b)


def test_fp8linear_weight_cache():
    require_gpu()
    gen = _gen(10)
    _, f8 = _pair(1024, 512, False, seed=10)
    assert f8._cache.q is None and not f8.cache_weight  # off by default
    f8.cache_weight = True
    fresh = fnn.Fp8Linear(1024, 512, bias=False, device="cuda", dtype=torch.bfloat16,
                          cache_weight=False)
    x = _randn((256, 1024), gen)
    y1 = f8(x)
    q1 = f8._cache.q
    y2 = f8(x)
    assert f8._cache.q is q1, "the unchanged weight was quantised again"
    assert torch.equal(y1, y2)
    opt = torch.optim.SGD(f8.parameters(), lr=0.1)
    f8(x.clone().requires_grad_()).float().square().mean().backward()
    opt.step()  # in place: bumps the weight's version counter
    y3 = f8(x)
    assert f8._cache.q is not q1, "the cache survived an optimizer step"
    fresh.load_state_dict(f8.state_dict())
    assert torch.equal(y3, fresh(x))
    with torch.no_grad():
        f8.weight.copy_(fresh.weight * 0.5)
    assert torch.equal(f8(x), fnn.Fp8Linear.from_linear(f8, cache_weight=False)(x))
    # pow2_scales changed after a pass: the other rule's quantisation, not the cached one
    q2 = f8._cache.q
    f8.pow2_scales = True
    assert torch.equal(f8(x), fnn.Fp8Linear.from_linear(f8, cache_weight=False,
                                                        pow2_scales=True)(x))
    assert f8._cache.q is not q2
    f8.pow2_scales = False
    # A replaced Parameter (a new tensor, whatever its address and version): quantised afresh
    f8.weight = torch.nn.Parameter(fresh.weight.detach().clone() * 0.25)
    assert torch.equal(f8(x), fnn.Fp8Linear.from_linear(f8, cache_weight=False)(x))
    # torch.inference_mode bypasses the cache (its tensors could not be saved for backward):
    # a training pass afterwards still works, from a cache filled outside inference mode
    f8.invalidate_weight_cache()
    with torch.inference_mode():
        y_inf = f8(x)
    assert f8._cache.q is None
    xi = x.clone().requires_grad_()
    y = f8(xi)
    y.float().sum().backward()
    assert torch.equal(y.detach(), y_inf) and xi.grad is not None


def test_weight_cache_fused_optimizer_and_streams():
    """Session 57. (1) A fused optimizer step (fused=True updates the weight without bumping its
    version counter) makes the cache miss: the next forward pass uses the new weight (before,
    the cache kept the old weight's quantisation for the whole run). (2) An entry filled on one
    stream and read at once on another: the reading stream waits for it (the entry's event).
    The fill sits behind a GPU sleep of about 0.1 s on its stream; without the wait the second
    stream's GEMM would read codes not yet written."""
    require_gpu()
    gen = _gen(57)
    _, f8 = _pair(1024, 512, False, seed=57)
    f8.cache_weight = True
    x = _randn((256, 1024), gen)
    y0 = f8(x)
    opt = torch.optim.AdamW(f8.parameters(), lr=1e-2, fused=True)
    f8(x.clone().requires_grad_()).float().square().mean().backward()
    version = f8.weight._version
    opt.step()
    print(f"fused AdamW step on the GPU: weight version {version} -> {f8.weight._version}")
    y1 = f8(x)
    assert not torch.equal(y1, y0)
    assert torch.equal(y1, fnn.Fp8Linear.from_linear(f8, cache_weight=False)(x)), \
        "the cache kept the weight of before the fused optimizer step"
    f8.invalidate_weight_cache()
    expect = fnn.Fp8Linear.from_linear(f8, cache_weight=False)(x)
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    torch.cuda.synchronize()
    with torch.no_grad():
        with torch.cuda.stream(s1):
            torch.cuda._sleep(200_000_000)
            f8(x)  # fills the cache on s1, behind the sleep
        assert f8._cache.q is not None
        with torch.cuda.stream(s2):
            y2 = f8(x)  # a hit on s2
    torch.cuda.synchronize()
    assert torch.equal(y2, expect), "a cache entry read on another stream before it was written"


def test_grouped_experts_weight_cache():
    """Fp8GroupedExperts with cache_weight=True: the stacked weight quantised once while it is
    unchanged, W^T kept by the first backward pass, an optimizer step a miss; every result bit for
    bit a cache-off twin's."""
    require_gpu()
    gen = _gen(13)
    G, K, N = 3, 256, 384
    ex = fnn.Fp8GroupedExperts(G, K, N, device="cuda", dtype=torch.bfloat16, cache_weight=True)
    twin = fnn.Fp8GroupedExperts(G, K, N, device="cuda", dtype=torch.bfloat16)
    twin.load_state_dict(ex.state_dict())
    off = torch.tensor([0, 100, 100, 229], dtype=torch.int32, device="cuda")
    x = _randn((229, K), gen)
    dy = _randn((229, N), gen)

    def step(layer):
        xi = x.clone().requires_grad_()
        layer.zero_grad(set_to_none=True)
        y = layer(xi, off)
        y.backward(dy)
        return y.detach(), xi.grad, layer.weight.grad.clone()

    a = step(ex)
    q1, qt1 = ex._cache.q, ex._cache.q_t
    assert q1 is not None and qt1 is not None, "forward filled W, the backward pass W^T"
    b = step(ex)
    assert ex._cache.q is q1 and ex._cache.q_t is qt1, "the unchanged weight was quantised again"
    for u, v in zip(a, step(twin)):
        assert torch.equal(u, v)
    for u, v in zip(a, b):
        assert torch.equal(u, v)
    torch.optim.SGD(ex.parameters(), lr=0.5).step()  # in place: a new version
    twin.load_state_dict(ex.state_dict())
    c = step(ex)
    assert ex._cache.q is not q1, "the cache survived an optimizer step"
    for u, v in zip(c, step(twin)):
        assert torch.equal(u, v)


def test_fp8linear_double_backward_refused():
    """The fp8gemm ops have no derivatives: a second-order gradient through the layers raises
    (once_differentiable) instead of silently coming out as zero."""
    require_gpu()
    gen = _gen(12)
    _, f8 = _pair(256, 128, True, seed=12)
    x = _randn((64, 256), gen).requires_grad_()
    (gx,) = torch.autograd.grad(f8(x).float().square().sum(), x, create_graph=True)
    with raises(RuntimeError, match="once_differentiable"):
        gx.float().sum().backward()
    ex = fnn.Fp8GroupedExperts(2, 256, 128, device="cuda", dtype=torch.bfloat16)
    off = torch.tensor([0, 30, 64], dtype=torch.int32, device="cuda")
    x2 = _randn((64, 256), gen).requires_grad_()
    (gx2,) = torch.autograd.grad(ex(x2, off).float().square().sum(), x2, create_graph=True)
    with raises(RuntimeError, match="once_differentiable"):
        gx2.float().sum().backward()


def test_fp8linear_transposed_weight_paths_agree():
    """W^T's operand made three ways gives the same dX bit for bit: by the forward pass's
    quantize_128x128_dual (x needs a gradient), by the transpose in the backward pass (the cache
    filled by a no_grad forward, without W^T), and with the cache off (the dual, saved in ctx)."""
    require_gpu()
    gen = _gen(11)
    _, f8 = _pair(1024, 512, False, seed=11)
    f8.cache_weight = True
    x = _randn((256, 1024), gen)
    dy = _randn((256, 512), gen)

    def dx_of(layer, warm_no_grad):
        layer.invalidate_weight_cache()
        if warm_no_grad:
            with torch.no_grad():
                layer(x)
            assert layer._cache.q is not None and layer._cache.q_t is None
        xi = x.clone().requires_grad_()
        layer(xi).backward(dy)
        return xi.grad

    a = dx_of(f8, False)
    assert f8._cache.q_t is not None, "the forward pass with x.requires_grad made W^T"
    b = dx_of(f8, True)
    assert f8._cache.q_t is not None, "the backward pass filled the cache's W^T"
    c = dx_of(fnn.Fp8Linear.from_linear(f8, cache_weight=False), False)
    assert torch.equal(a, b) and torch.equal(a, c)


def _moe_case(G, T, K, N, counts, seed):
    gen = _gen(seed)
    torch.manual_seed(seed)
    ex = fnn.Fp8GroupedExperts(G, K, N, device="cuda", dtype=torch.bfloat16)
    _vary_blocks_(ex.weight, seed + 1000)  # every expert's and block's scale its own
    off = torch.zeros(G + 1, dtype=torch.int64)
    off[1:] = torch.cumsum(torch.tensor(counts), 0)
    assert int(off[-1]) == T
    return ex, _randn((T, K), gen), _randn((T, N), gen), off.to(torch.int32).cuda()


@parametrize("G,T,K,N,counts", [(4, 1000, 1040, 384, [300, 0, 445, 255]),
                                (8, 4096, 2048, 512, [700, 129, 1, 0, 1024, 1000, 642, 600]),
                                (3, 500, 1040, 272, [100, 250, 150])])  # 272: one launch per expert
def test_grouped_experts(G, T, K, N, counts):
    require_gpu()
    ex, x, dy, off = _moe_case(G, T, K, N, counts, seed=G + T)
    xf = x.clone().requires_grad_()
    y = ex(xf, off)
    y.backward(dy)
    assert y.shape == (T, N) and y.dtype == torch.bfloat16
    # bf16 autograd reference: a loop over the experts
    w = ex.weight.detach().clone().requires_grad_()
    xl = x.clone().requires_grad_()
    o = off.tolist()
    yl = torch.cat([xl[o[g]:o[g + 1]] @ w[g].t() for g in range(G)])
    yl.backward(dy)
    assert rel_error(y, yl) <= FP8_VS_BF16
    assert rel_error(xf.grad, xl.grad) <= FP8_VS_BF16
    for g in range(G):
        if o[g + 1] == o[g]:
            assert torch.count_nonzero(ex.weight.grad[g]) == 0, "an expert without tokens"
        else:
            assert rel_error(ex.weight.grad[g], w.grad[g]) <= FP8_VS_BF16, g
    # tight: y, dX and dW against float64 on the operands exactly as the layer quantises them
    # (forward: x 1 x 128, W[g] 128 x 128; dX: dy 1 x 128 against W[g]'s blocks; dW: dy and x
    # quantised along the tokens per expert, quantize_tokens_transposed_1x128), so a wrong
    # transpose, scale or group boundary cannot hide in the 6 % that the bf16 comparison allows
    qx, sx = ops.quantize_1x128(x)
    X = ops.dequantize_1x128(qx, sx).double()
    qdy, sdy = ops.quantize_1x128(dy)
    DY = ops.dequantize_1x128(qdy, sdy).double()
    dyt, xt = ops.quantize_tokens_transposed_1x128(dy, off), ops.quantize_tokens_transposed_1x128(x, off)
    DYT = ops.dequantize_1x128(dyt[0], dyt[1]).double()  # [N, T_cap]: group g at columns P_g ..
    XT = ops.dequantize_1x128(xt[0], xt[1]).double()     # [K, T_cap]
    P = dyt[2].tolist()
    assert P == xt[2].tolist()
    for g in range(G):
        n = o[g + 1] - o[g]
        if n == 0:
            continue
        qw, sw = ops.quantize_128x128(ex.weight.detach()[g])
        W = ops.dequantize_128x128(qw, sw).double()
        rows = slice(o[g], o[g + 1])
        assert rel_error(y[rows], X[rows] @ W.t()) <= tolerance(K), ("y", g)
        assert rel_error(xf.grad[rows], DY[rows] @ W) <= tolerance(N), ("dx", g)
        cols = slice(P[g], P[g] + n)
        assert rel_error(ex.weight.grad[g], DYT[:, cols] @ XT[:, cols].t()) <= tolerance(n), ("dw", g)
    # determinism
    ex.zero_grad(set_to_none=True)
    x2 = x.clone().requires_grad_()
    y2 = ex(x2, off)
    y2.backward(dy)
    assert torch.equal(y2, y) and torch.equal(x2.grad, xf.grad)
