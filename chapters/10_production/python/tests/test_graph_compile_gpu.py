"""CUDA graphs and torch.compile: the ops captured and replayed with new data (and new expert
counts), torch.compile(fullgraph=True) of functions and layers calling them, torch.library.opcheck
of every op (schema, fake implementation against the real one, autograd registration, AOT
dispatch with dynamic shapes). Skipped without an sm_90a GPU."""

import contextlib

import torch

from _testlib import bits, make_bf16, parametrize, require_gpu
from fp8gemm import nn as fnn
from fp8gemm import ops


def _gen(seed):
    return torch.Generator(device="cuda").manual_seed(seed)


def _offsets(counts):
    c = torch.tensor([0] + list(counts), dtype=torch.int64)
    return torch.cumsum(c, 0).to(torch.int32).cuda()


def _grouped_weights(G, N, K, gen):
    w = make_bf16((G, N, K), gen)
    qs = [ops.quantize_128x128(w[g]) for g in range(G)]
    return torch.stack([q for q, _ in qs]), torch.stack([s for _, s in qs])


def test_cuda_graph_capture_and_replay():
    require_gpu()
    gen = _gen(1)
    M, N, K = 1000, 2112, 7168
    T, Ng, Kg = 1000, 384, 1040
    x, w = make_bf16((M, K), gen), make_bf16((N, K), gen)
    xg, dy = make_bf16((T, Kg), gen), make_bf16((T, Ng), gen)
    qwg, swg = _grouped_weights(4, Ng, Kg, gen)
    off = _offsets([300, 0, 445, 255])

    def step():
        qa, sa = ops.quantize_1x128(x)
        qb, sb = ops.quantize_128x128(w)
        d = ops.gemm_block_scaled(qa, sa, qb, sb)
        qg, sg = ops.quantize_1x128(xg)
        dg = ops.gemm_grouped_contiguous(qg, sg, qwg, swg, off)
        a = ops.quantize_tokens_transposed_1x128(dy, off)
        b = ops.quantize_tokens_transposed_1x128(xg, off)
        dw = ops.gemm_weight_grad(a[0], a[1], b[0], b[1], off)
        return d, dg, dw

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up, as torch.cuda.graph's documentation asks
        for _ in range(2):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = step()
    for trial, counts in enumerate([[250, 250, 250, 250], [0, 1000, 0, 0], [1, 2, 3, 994]]):
        g2 = _gen(100 + trial)
        x.copy_(make_bf16((M, K), g2))
        w.copy_(make_bf16((N, K), g2))
        xg.copy_(make_bf16((T, Kg), g2))
        dy.copy_(make_bf16((T, Ng), g2))
        off.copy_(_offsets(counts))  # other expert counts: the host never reads them
        graph.replay()
        eager = step()
        for c, e in zip(captured, eager):
            assert torch.equal(bits(c), bits(e)), trial


def test_weights_once_recipe_captured_and_compiled():
    """The MXFP8 weights-once recipe (requantize_mx_128x128 once, then per call
    requantize_mx_1x128 and gemm_block_scaled): captured in a CUDA graph and replayed with new MX
    activations, and under torch.compile(fullgraph=True, dynamic M), equal to eager bit for bit."""
    require_gpu()
    gen = _gen(7)
    M, N, K = 333, 264, 1056
    qw, sw = ops.quantize_mx_1x32(make_bf16((N, K), gen), rule="rceil")
    rb, rsb = ops.requantize_mx_128x128(qw, sw)  # once
    qx, sx = ops.quantize_mx_1x32(make_bf16((M, K), gen))

    def step(q, s):
        ra, rsa = ops.requantize_mx_1x128(q, s)
        return ops.gemm_block_scaled(ra, rsa, rb, rsb)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            step(qx, sx)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = step(qx, sx)
    for trial in range(2):
        q2, s2 = ops.quantize_mx_1x32(make_bf16((M, K), _gen(70 + trial)))
        qx.copy_(q2)
        sx.copy_(s2)
        graph.replay()
        assert torch.equal(bits(captured), bits(step(qx, sx))), trial
    torch._dynamo.reset()
    cf = torch.compile(step, fullgraph=True, backend="inductor", dynamic=True)
    for m in (M, 512):
        q, s = ops.quantize_mx_1x32(make_bf16((m, K), gen))
        assert torch.equal(bits(cf(q, s)), bits(step(q, s))), m


def test_cuda_graph_fp8linear_training_step():
    """make_graphed_callables captures Fp8Linear's forward and backward; the weight is quantised
    inside the graph (the layer's cache is bypassed while capturing), so an optimizer step
    between replays is seen."""
    require_gpu()
    gen = _gen(2)
    layer = fnn.Fp8Linear(1024, 512, device="cuda", dtype=torch.bfloat16, cache_weight=True)
    ref = fnn.Fp8Linear(1024, 512, device="cuda", dtype=torch.bfloat16, cache_weight=False)
    ref.load_state_dict(layer.state_dict())
    x = make_bf16((256, 1024), gen).requires_grad_()
    graphed = torch.cuda.make_graphed_callables(layer, (x,))
    for trial in range(3):
        xi = make_bf16((256, 1024), _gen(10 + trial)).requires_grad_()
        xr = xi.detach().clone().requires_grad_()
        dy = make_bf16((256, 512), _gen(20 + trial))
        layer.zero_grad(set_to_none=True)
        ref.zero_grad(set_to_none=True)
        y = graphed(xi)
        y.backward(dy)
        yr = ref(xr)
        yr.backward(dy)
        assert torch.equal(y, yr)
        assert torch.equal(xi.grad, xr.grad)
        assert torch.equal(layer.weight.grad, ref.weight.grad)
        assert torch.allclose(layer.bias.grad, ref.bias.grad, rtol=1e-3, atol=1e-3)
        with torch.no_grad():  # an "optimizer step" on both copies
            for p, q in ((layer.weight, ref.weight), (layer.bias, ref.bias)):
                upd = 0.01 * torch.randn(p.shape, generator=_gen(30 + trial), device="cuda")
                p.add_(upd.to(p.dtype))
                q.add_(upd.to(q.dtype))


def _f(x, w):
    qa, sa = ops.quantize_1x128(x)
    qb, sb = ops.quantize_128x128(w)
    return torch.relu(ops.gemm_block_scaled(qa, sa, qb, sb)) * 2


@parametrize("backend", ["aot_eager", "inductor"])
def test_compile_fullgraph(backend):
    require_gpu()
    torch._dynamo.reset()
    gen = _gen(3)
    cf = torch.compile(_f, fullgraph=True, backend=backend, dynamic=True)
    for M in (256, 333):  # dynamic M: the fake implementations with symbolic sizes
        x, w = make_bf16((M, 1040), gen), make_bf16((264, 1040), gen)
        assert torch.equal(cf(x, w), _f(x, w)), (backend, M)


def test_compile_grouped_and_wgrad():
    require_gpu()
    torch._dynamo.reset()
    gen = _gen(4)
    qwg, swg = _grouped_weights(3, 384, 1040, gen)

    def g(x, dy, off):
        q, s = ops.quantize_1x128(x)
        y = ops.gemm_grouped_contiguous(q, s, qwg, swg, off)
        a = ops.quantize_tokens_transposed_1x128(dy, off)
        b = ops.quantize_tokens_transposed_1x128(x, off)
        return y, ops.gemm_weight_grad(a[0], a[1], b[0], b[1], off)

    cg = torch.compile(g, fullgraph=True, backend="inductor")
    x, dy = make_bf16((700, 1040), gen), make_bf16((700, 384), gen)
    off = _offsets([300, 0, 400])
    for c, e in zip(cg(x, dy, off), g(x, dy, off)):
        assert torch.equal(c, e)


def test_compile_fp8linear():
    """torch.compile(fullgraph=True) of Fp8Linear's forward and backward (the autograd.Function
    traced by dynamo; the weight cache bypassed while compiling)."""
    require_gpu()
    torch._dynamo.reset()
    gen = _gen(5)
    layer = fnn.Fp8Linear(1040, 384, device="cuda", dtype=torch.bfloat16, cache_weight=True)
    eager = fnn.Fp8Linear(1040, 384, device="cuda", dtype=torch.bfloat16)
    eager.load_state_dict(layer.state_dict())
    cl = torch.compile(layer, fullgraph=True)
    x = make_bf16((333, 1040), gen)
    dy = make_bf16((333, 384), gen)
    xc, xe = x.clone().requires_grad_(), x.clone().requires_grad_()
    yc, ye = cl(xc), eager(xe)
    yc.backward(dy)
    ye.backward(dy)
    assert torch.equal(yc, ye)
    assert torch.equal(xc.grad, xe.grad)
    assert torch.equal(layer.weight.grad, eager.weight.grad)
    assert torch.allclose(layer.bias.grad.float(), eager.bias.grad.float(), rtol=1e-2, atol=1e-2)


_FLOAT8 = (torch.float8_e4m3fn, torch.float8_e5m2)


def _allclose_takes_float8() -> bool:
    probe = torch.zeros(2, dtype=torch.float8_e4m3fn, device="cuda")
    try:
        torch.allclose(probe, probe, equal_nan=True)
        return True
    except (NotImplementedError, RuntimeError, TypeError):
        return False


@contextlib.contextmanager
def _schema_check_for_float8():
    """Lets opcheck's test_schema check ops that take float8 tensors.

    test_schema runs the op under torch's SchemaCheckMode, which decides whether each input was
    mutated by comparing it before and after with torch.allclose(before, after, equal_nan=True).
    torch 2.11 has no float8 kernel for that ("mul_cuda" not implemented for 'Float8_e4m3fn'), so
    every op with an e4m3 input fails there whatever it does. While this is active, allclose of
    two float8 tensors compares their bytes: bitwise equality, stricter than allclose (an
    unmutated input is bit-identical; NaN codes compare equal as bytes, as equal_nan asks), and
    everything else goes to torch's allclose. Nothing is patched on a torch whose allclose takes
    float8."""
    if _allclose_takes_float8():
        yield False  # torch handles float8 itself
        return
    original = torch.allclose

    def allclose(a, b, *args, **kwargs):
        if (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.dtype in _FLOAT8
                and b.dtype == a.dtype):
            return a.shape == b.shape and torch.equal(a.view(torch.uint8), b.view(torch.uint8))
        return original(a, b, *args, **kwargs)

    torch.allclose = allclose
    try:
        yield True
    finally:
        torch.allclose = original


def test_schema_check_patch_detects_float8_mutation():
    """The byte comparison above is a real mutation check: one changed code is seen."""
    require_gpu()
    q = torch.randint(0, 120, (64, 64), generator=_gen(8), device="cuda",
                      dtype=torch.uint8).view(torch.float8_e4m3fn)
    r = q.clone()
    with _schema_check_for_float8():
        assert torch.allclose(q, r, equal_nan=True)
        r.view(torch.uint8)[3, 5] += 1
        assert not torch.allclose(q, r, equal_nan=True)


def test_opcheck():
    """Every op through all of opcheck's utilities (schema, autograd registration, fake tensor,
    AOT dispatch with dynamic shapes), test_schema included for the ops with e4m3 inputs (see
    _schema_check_for_float8)."""
    require_gpu()
    from torch.library import opcheck
    gen = _gen(6)
    f = torch.ops.fp8gemm
    x, w = make_bf16((333, 1040), gen), make_bf16((264, 1040), gen)
    qa, sa = ops.quantize_1x128(x)
    qb, sb = ops.quantize_128x128(w)
    off = _offsets([100, 0, 233])
    qg, sg = _grouped_weights(3, 264, 1040, gen)
    dy = make_bf16((333, 264), gen)
    a = ops.quantize_tokens_transposed_1x128(dy, off)
    b = ops.quantize_tokens_transposed_1x128(x, off)
    xm = make_bf16((3 * 64, 1040), gen)
    qm, sm = ops.quantize_1x128(xm)
    pa, psa = ops.quantize_per_tensor(x)
    pb, psb = ops.quantize_per_tensor(w)
    xm32, wm32 = make_bf16((333, 1024), gen), make_bf16((264, 1024), gen)
    mqa, msa = ops.quantize_mx_1x32(xm32)
    mqb, msb = ops.quantize_mx_1x32(wm32, rule="rceil")
    cases = [
        (f.quantize_1x128.default, (x,), {}),
        (f.quantize_1x128.default, (x,), {"pow2_scales": True}),
        (f.quantize_128x128.default, (w,), {}),
        (f.quantize_128x128_dual.default, (w,), {}),
        (f.quantize_1x128_dual.default, (x,), {}),
        (f.quantize_tokens_transposed_1x128.default, (x, off), {}),
        (f.gemm_block_scaled.default, (qa, sa, qb, sb), {}),
        (f.gemm_block_scaled.default, (qa, sa, qb, sb), {"out_dtype": torch.float32}),
        (f.gemm_block_scaled_out.default,
         (qa, sa, qb, sb, torch.zeros(333, 264, device="cuda")), {"accumulate": True}),
        (f.gemm_grouped_contiguous.default, (qa, sa, qg, sg, off), {}),
        (f.gemm_grouped_contiguous.default, (qa, sa, qg, sg, off), {"out_dtype": torch.float32}),
        (f.gemm_grouped_contiguous_out.default,
         (qa, sa, qg, sg, off, torch.zeros(333, 264, device="cuda")), {"accumulate": True}),
        (f.gemm_grouped_masked.default,
         (qm.view(3, 64, 1040), sm, qg, sg, torch.full((3,), 64, device="cuda",
                                                       dtype=torch.int32)), {}),
        (f.gemm_grouped_masked.default,
         (qm.view(3, 64, 1040), sm, qg, sg, torch.full((3,), 64, device="cuda",
                                                       dtype=torch.int32)),
         {"out_dtype": torch.float32}),
        (f.gemm_grouped_masked_out.default,
         (qm.view(3, 64, 1040), sm, qg, sg, torch.full((3,), 64, device="cuda", dtype=torch.int32),
          torch.zeros(3, 64, 264, device="cuda")), {"accumulate": True}),
        (f.gemm_weight_grad.default, (a[0], a[1], b[0], b[1], off), {}),
        (f.gemm_weight_grad_out.default,
         (a[0], a[1], b[0], b[1], off, torch.zeros(3, 264, 1040, device="cuda")), {}),
        (f.gemm_per_tensor.default, (pa, pb, psa, psb), {}),
        (f.gemm_per_tensor.default, (pa, pb, psa, psb), {"out_dtype": torch.float32}),
        (f.gemm_per_tensor_out.default,
         (pa, pb, psa, psb, torch.zeros(333, 264, device="cuda")), {"accumulate": True}),
        (f.transpose_e4m3.default, (qb,), {}),
        (f.transpose_e4m3.default, (qg,), {}),
        (f.quantize_mx_1x32.default, (xm32,), {}),
        (f.quantize_mx_1x32.default, (wm32,), {"rule": "rceil"}),
        (f.gemm_mx.default, (mqa, msa, mqb, msb), {}),
        (f.gemm_mx.default, (mqa, msa, mqb, msb), {"dequantize_bf16": True}),
        (f.gemm_mx.default, (mqa, msa, mqb, msb), {"requantize_block_scaled": True}),
        (f.gemm_mx.default, (mqa, msa, mqb, msb), {"out_dtype": torch.float32}),
        (f.gemm_mx_out.default, (mqa, msa, mqb, msb, torch.zeros(333, 264, device="cuda")),
         {"accumulate": True}),
        (f.requantize_mx_1x128.default, (mqa, msa), {}),
        (f.requantize_mx_128x128.default, (mqb, msb), {}),
    ]
    # (masked_m = M_max everywhere: rows past masked_m are left unwritten, and opcheck compares
    # whole outputs.)
    with _schema_check_for_float8():
        for op, args, kwargs in cases:
            opcheck(op, args, kwargs)
