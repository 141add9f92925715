"""Tests that run without a GPU: the package imports (with or without _C.so), the ops refuse CPU
tensors with a clear message, the fake implementations give the CUDA ops' shapes, dtypes and
strides (meta tensors, FakeTensor tracing), the layers validate their arguments, and the pure
torch helpers are right. With _C.so absent the op tests skip, saying why."""

import os
import re
import subprocess
import sys

from _testlib import HAVE_TORCH, parametrize, raises, require_ops, skip

if HAVE_TORCH:
    import torch

    import fp8gemm
    from fp8gemm import nn as fnn
    from fp8gemm import ops

HERE = os.path.dirname(os.path.abspath(__file__))


def _need_torch():
    if not HAVE_TORCH:
        skip("torch is not importable")


def test_package_imports():
    _need_torch()
    assert fp8gemm.__version__
    assert isinstance(fp8gemm.available(), bool)
    if fp8gemm.available():
        assert fp8gemm.unavailable_reason() is None
        assert ops.library_version().startswith("0.")
    else:  # the reason names _C.so, and calling an op says the same
        assert "_C.so" in fp8gemm.unavailable_reason()
        with raises(RuntimeError, match="could not be loaded"):
            ops.quantize_1x128(torch.zeros(1, 16, dtype=torch.bfloat16))


def test_import_without_compiled_ops():
    """The pure-Python files alone (no _C.so next to them) import, and say why there are no ops."""
    _need_torch()
    import shutil
    import tempfile
    src = os.path.dirname(fp8gemm.__file__)
    with tempfile.TemporaryDirectory() as d:
        os.mkdir(os.path.join(d, "fp8gemm"))
        for f in ("__init__.py", "ops.py", "nn.py"):
            shutil.copy(os.path.join(src, f), os.path.join(d, "fp8gemm", f))
        code = ("import fp8gemm, torch\n"
                "assert not fp8gemm.available()\n"
                "print(fp8gemm.unavailable_reason())\n"
                "try:\n"
                "    fp8gemm.ops.quantize_1x128(torch.zeros(2, 16, dtype=torch.bfloat16))\n"
                "except RuntimeError as e:\n"
                "    print('refused:', e)\n")
        r = subprocess.run([sys.executable, "-c", code], cwd=d, capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": d})
        assert r.returncode == 0, r.stderr
        assert "_C.so" in r.stdout and "refused:" in r.stdout


def test_set_max_sms_without_gpu():
    """set_max_sms / get_max_sms need no GPU: the value round-trips, a negative one is refused with
    its name and leaves the setting as it was."""
    require_ops()
    assert ops.get_max_sms() == 0
    try:
        ops.set_max_sms(16)
        assert ops.get_max_sms() == 16
        with raises(ValueError, match="set_max_sms: max_sms = -1 must be >= 0"):
            ops.set_max_sms(-1)
        assert ops.get_max_sms() == 16
    finally:
        ops.set_max_sms(0)
    assert ops.get_max_sms() == 0


def test_ops_registered():
    require_ops()
    names = ["quantize_1x128", "quantize_128x128", "quantize_128x128_dual", "quantize_1x128_dual",
             "quantize_tokens_transposed_1x128", "gemm_block_scaled", "gemm_block_scaled_out",
             "gemm_grouped_contiguous", "gemm_grouped_masked", "gemm_grouped_contiguous_out",
             "gemm_grouped_masked_out", "gemm_weight_grad",
             "gemm_weight_grad_out", "gemm_per_tensor", "gemm_per_tensor_out", "transpose_e4m3",
             "quantize_mx_1x32",
             "requantize_mx_1x128", "requantize_mx_128x128", "gemm_mx", "gemm_mx_out"]
    for n in names:
        op = getattr(torch.ops.fp8gemm, n).default
        assert torch.Tag.needs_exact_strides in op.tags, n
    for n in ("gemm_block_scaled_out", "gemm_weight_grad_out", "gemm_per_tensor_out",
              "gemm_grouped_contiguous_out", "gemm_grouped_masked_out", "gemm_mx_out"):
        s = str(getattr(torch.ops.fp8gemm, n).default._schema)
        assert "Tensor(a!) out" in s, n


def _cpu(*shape, dtype=torch.bfloat16):
    return torch.ones(shape, dtype=dtype)


def test_cpu_tensors_refused():
    """CPU tensors reach the op and are refused with the reason, not 'no kernel for CPU'."""
    require_ops()
    e4 = torch.float8_e4m3fn
    cases = [
        (lambda: ops.quantize_1x128(_cpu(4, 256)), r"quantize_1x128: x must be a CUDA tensor"),
        (lambda: ops.quantize_128x128(_cpu(4, 256)), r"quantize_128x128: w must be a CUDA tensor"),
        (lambda: ops.gemm_block_scaled(_cpu(4, 256, dtype=e4), _cpu(4, 2, dtype=torch.float32),
                                       _cpu(8, 256, dtype=e4), _cpu(1, 2, dtype=torch.float32)),
         r"gemm_block_scaled: a must be a CUDA tensor; got a tensor on cpu"),
        (lambda: ops.gemm_per_tensor(_cpu(4, 256, dtype=e4), _cpu(8, 256, dtype=e4),
                                     _cpu(1, dtype=torch.float32), _cpu(1, dtype=torch.float32)),
         r"gemm_per_tensor: a must be a CUDA tensor"),
        (lambda: ops.gemm_grouped_contiguous(
            _cpu(4, 256, dtype=e4), _cpu(4, 2, dtype=torch.float32), _cpu(2, 8, 256, dtype=e4),
            _cpu(2, 1, 2, dtype=torch.float32), _cpu(3, dtype=torch.int32)),
         r"gemm_grouped_contiguous: a must be a CUDA tensor"),
        (lambda: ops.requantize_mx_1x128(_cpu(4, 256, dtype=e4), _cpu(128 * 8, dtype=torch.uint8)),
         r"requantize_mx_1x128: q must be a CUDA tensor"),
        (lambda: ops.requantize_mx_128x128(_cpu(4, 256, dtype=e4),
                                           _cpu(128 * 8, dtype=torch.uint8)),
         r"requantize_mx_128x128: q must be a CUDA tensor"),
        # gemm_mx's two converting paths at once: refused first, whatever the tensors.
        (lambda: ops.gemm_mx(_cpu(4, 256, dtype=e4), _cpu(128 * 8, dtype=torch.uint8),
                             _cpu(8, 256, dtype=e4), _cpu(128 * 8, dtype=torch.uint8),
                             dequantize_bf16=True, requantize_block_scaled=True),
         r"gemm_mx: dequantize_bf16=True and requantize_block_scaled=True are two different paths"),
    ]
    for call, msg in cases:
        with raises(ValueError, match=msg):
            call()


def _meta(shape, dtype=torch.bfloat16):
    return torch.empty(shape, dtype=dtype, device="meta")


@parametrize("M,K", [(1, 16), (300, 1040), (4096, 7168)])
def test_fake_quantize_1x128(M, K):
    require_ops()
    q, s = ops.quantize_1x128(_meta((M, K)))
    assert q.shape == (M, K) and q.dtype == torch.float8_e4m3fn and q.is_contiguous()
    kg = (K + 127) // 128
    assert s.shape == (M, kg) and s.dtype == torch.float32
    assert s.stride() == (1, (M + 3) // 4 * 4)


def test_fake_shapes():
    require_ops()
    e4, f32, i32 = torch.float8_e4m3fn, torch.float32, torch.int32
    q, s = ops.quantize_128x128(_meta((300, 1040)))
    assert q.shape == (300, 1040) and s.shape == (3, 9) and s.is_contiguous()
    q, s, qt, st = ops.quantize_128x128_dual(_meta((300, 1040)))
    assert q.shape == (300, 1040) and s.shape == (3, 9) and qt.shape == (1040, 300)
    assert st.shape == (9, 3) and s.is_contiguous() and st.is_contiguous() and qt.is_contiguous()
    q, s, qt, st = ops.quantize_1x128_dual(_meta((200, 1040)))
    assert qt.shape == (1040, 200) and st.shape == (1040, 2) and st.stride() == (1, 1040)
    qt, st, po = ops.quantize_tokens_transposed_1x128(_meta((1000, 70)), _meta((5,), i32))
    assert qt.shape == (70, ops.max_padded_tokens(1000, 4)) and po.shape == (5,)
    assert st.shape == (70, ops.max_padded_tokens(1000, 4) // 128) and st.stride() == (1, 72)
    d = ops.gemm_block_scaled(_meta((300, 1040), e4), _meta((300, 9), f32), _meta((264, 1040), e4),
                              _meta((3, 9), f32))
    assert d.shape == (300, 264) and d.dtype == torch.bfloat16
    d = ops.gemm_block_scaled(_meta((300, 1040), e4), _meta((300, 9), f32), _meta((264, 1040), e4),
                              _meta((3, 9), f32), torch.float32)
    assert d.dtype == torch.float32
    # out= and an out_dtype that disagrees: refused, not ignored (as gemm_weight_grad does)
    with raises(ValueError, match=r"out_dtype=torch.bfloat16 but out is torch.float32"):
        ops.gemm_block_scaled(_meta((300, 1040), e4), _meta((300, 9), f32),
                              _meta((264, 1040), e4), _meta((3, 9), f32), torch.bfloat16,
                              out=_meta((300, 264), f32))
    d = ops.gemm_grouped_contiguous(_meta((700, 256), e4), _meta((700, 2), f32),
                                    _meta((4, 384, 256), e4), _meta((4, 3, 2), f32),
                                    _meta((5,), i32))
    assert d.shape == (700, 384)
    d = ops.gemm_grouped_masked(_meta((4, 64, 256), e4), _meta((256, 2), f32),
                                _meta((4, 384, 256), e4), _meta((4, 3, 2), f32), _meta((4,), i32))
    assert d.shape == (4, 64, 384)
    # A float32 D for both grouped layouts (session 64), by out_dtype; accumulate without out=
    # and an out_dtype that disagrees with out= refused, as gemm_block_scaled refuses them.
    d = ops.gemm_grouped_contiguous(_meta((700, 256), e4), _meta((700, 2), f32),
                                    _meta((4, 384, 256), e4), _meta((4, 3, 2), f32),
                                    _meta((5,), i32), torch.float32)
    assert d.shape == (700, 384) and d.dtype == torch.float32
    d = ops.gemm_grouped_masked(_meta((4, 64, 256), e4), _meta((256, 2), f32),
                                _meta((4, 384, 256), e4), _meta((4, 3, 2), f32), _meta((4,), i32),
                                torch.float32)
    assert d.shape == (4, 64, 384) and d.dtype == torch.float32
    with raises(ValueError, match=r"gemm_grouped_contiguous: accumulate=True needs out="):
        ops.gemm_grouped_contiguous(_meta((700, 256), e4), _meta((700, 2), f32),
                                    _meta((4, 384, 256), e4), _meta((4, 3, 2), f32),
                                    _meta((5,), i32), accumulate=True)
    with raises(ValueError, match=r"gemm_grouped_masked: out_dtype=torch.bfloat16 but out is "
                                  r"torch.float32"):
        ops.gemm_grouped_masked(_meta((4, 64, 256), e4), _meta((256, 2), f32),
                                _meta((4, 384, 256), e4), _meta((4, 3, 2), f32), _meta((4,), i32),
                                torch.bfloat16, out=_meta((4, 64, 384), f32))
    with raises(ValueError, match=r"out_dtype must be torch.bfloat16 or torch.float32"):
        ops.gemm_grouped_contiguous(_meta((700, 256), e4), _meta((700, 2), f32),
                                    _meta((4, 384, 256), e4), _meta((4, 3, 2), f32),
                                    _meta((5,), i32), torch.float16)
    db = ops.gemm_weight_grad(_meta((384, 1024), e4), _meta((384, 8), f32), _meta((256, 1024), e4),
                              _meta((256, 8), f32), _meta((3,), i32))
    assert db.shape == (2, 384, 256) and db.dtype == torch.float32
    db = ops.gemm_weight_grad(_meta((384, 1024), e4), _meta((384, 8), f32), _meta((256, 1024), e4),
                              _meta((256, 8), f32), _meta((3,), i32), out_dtype=torch.bfloat16)
    assert db.shape == (2, 384, 256) and db.dtype == torch.bfloat16
    d = ops.gemm_per_tensor(_meta((33, 64), e4), _meta((48, 64), e4), _meta((1,), f32),
                            _meta((1,), f32))
    assert d.shape == (33, 48) and d.dtype == torch.bfloat16
    d = ops.gemm_per_tensor(_meta((33, 64), e4), _meta((48, 64), e4), _meta((1,), f32),
                            _meta((1,), f32), out_dtype=torch.float32)
    assert d.shape == (33, 48) and d.dtype == torch.float32
    with raises(ValueError, match=r"gemm_per_tensor: out_dtype=torch.bfloat16 but out is "
                                  r"torch.float32"):
        ops.gemm_per_tensor(_meta((33, 64), e4), _meta((48, 64), e4), _meta((1,), f32),
                            _meta((1,), f32), out_dtype=torch.bfloat16, out=_meta((33, 48), f32))
    with raises(ValueError, match=r"gemm_per_tensor: out_dtype must be torch.bfloat16 or "
                                  r"torch.float32; got torch.float16"):
        ops.gemm_per_tensor(_meta((33, 64), e4), _meta((48, 64), e4), _meta((1,), f32),
                            _meta((1,), f32), out_dtype=torch.float16)
    with raises(ValueError, match=r"gemm_per_tensor: accumulate=True needs out="):
        ops.gemm_per_tensor(_meta((33, 64), e4), _meta((48, 64), e4), _meta((1,), f32),
                            _meta((1,), f32), accumulate=True)
    assert ops.transpose_e4m3(_meta((300, 1040), e4)).shape == (1040, 300)
    assert ops.transpose_e4m3(_meta((3, 272, 1040), e4)).shape == (3, 1040, 272)
    q, sc = ops.quantize_mx_1x32(_meta((300, 1056), torch.bfloat16))
    assert q.shape == (300, 1056) and q.dtype == e4
    assert sc.shape == (384 * 36,) and sc.dtype == torch.uint8  # round_up(300, 128) x round_up(33, 4)
    d = ops.gemm_mx(_meta((300, 1056), e4), _meta((384 * 36,), torch.uint8), _meta((72, 1056), e4),
                    _meta((128 * 36,), torch.uint8), dequantize_bf16=True)
    assert d.shape == (300, 72) and d.dtype == torch.bfloat16
    d = ops.gemm_mx(_meta((300, 1056), e4), _meta((384 * 36,), torch.uint8), _meta((72, 1056), e4),
                    _meta((128 * 36,), torch.uint8), requantize_block_scaled=True)
    assert d.shape == (300, 72) and d.dtype == torch.bfloat16
    # A float32 D (session 64), on every path; accumulate without out= refused.
    for path in ({}, {"dequantize_bf16": True}, {"requantize_block_scaled": True}):
        d = ops.gemm_mx(_meta((300, 1056), e4), _meta((384 * 36,), torch.uint8),
                        _meta((72, 1056), e4), _meta((128 * 36,), torch.uint8), torch.float32,
                        **path)
        assert d.shape == (300, 72) and d.dtype == torch.float32, path
    with raises(ValueError, match=r"gemm_mx: accumulate=True needs out="):
        ops.gemm_mx(_meta((300, 1056), e4), _meta((384 * 36,), torch.uint8),
                    _meta((72, 1056), e4), _meta((128 * 36,), torch.uint8), accumulate=True)
    # The re-quantisers give what quantize_1x128 / quantize_128x128 give: shapes, dtypes, strides.
    q, sc = ops.requantize_mx_1x128(_meta((333, 1056), e4), _meta((384 * 36,), torch.uint8))
    q1, s1 = ops.quantize_1x128(_meta((333, 1056)))
    assert q.shape == q1.shape and q.dtype == e4 and q.stride() == q1.stride()
    assert sc.shape == s1.shape == (333, 9) and sc.stride() == s1.stride() == (1, 336)
    assert sc.dtype == torch.float32
    q, sc = ops.requantize_mx_128x128(_meta((200, 1056), e4), _meta((256 * 36,), torch.uint8))
    q1, s1 = ops.quantize_128x128(_meta((200, 1056)))
    assert q.shape == q1.shape and q.dtype == e4 and q.stride() == q1.stride()
    assert sc.shape == s1.shape == (2, 9) and sc.stride() == s1.stride() and sc.dtype == torch.float32
    with raises(ValueError, match="dequantize_bf16=True and requantize_block_scaled=True are two "
                                  "different paths"):
        ops.gemm_mx(_meta((300, 1056), e4), _meta((384 * 36,), torch.uint8), _meta((72, 1056), e4),
                    _meta((128 * 36,), torch.uint8), dequantize_bf16=True,
                    requantize_block_scaled=True)


def test_fake_tracing():
    """A function of the ops traced with FakeTensors (what torch.compile does first) has the same
    ops in its graph and the eager shapes."""
    require_ops()
    from torch.fx.experimental.proxy_tensor import make_fx

    def f(x, w):
        qa, sa = torch.ops.fp8gemm.quantize_1x128(x)
        qb, sb = torch.ops.fp8gemm.quantize_128x128(w)
        return torch.ops.fp8gemm.gemm_block_scaled(qa, sa, qb, sb)

    gm = make_fx(f, tracing_mode="fake")(_cpu(200, 1040), _cpu(264, 1040))
    targets = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
    assert any("quantize_1x128" in t for t in targets)
    assert any("gemm_block_scaled" in t for t in targets)
    outs = [n for n in gm.graph.nodes if n.op == "output"]
    assert outs


def test_layer_arguments():
    _need_torch()
    with raises(ValueError, match=r"in_features = 100 must be a positive multiple of 16"):
        fnn.Fp8Linear(100, 128)
    with raises(ValueError, match=r"out_features = 8 must be a positive multiple of 16"):
        fnn.Fp8Linear(128, 8)
    with raises(ValueError, match=r"num_experts = 0"):
        fnn.Fp8GroupedExperts(0, 128, 128)
    lin = torch.nn.Linear(64, 32)
    f = fnn.Fp8Linear.from_linear(lin)
    assert f.weight is lin.weight and f.bias is lin.bias
    # The weight cache is opt-in (it cannot see updates through .data or collectives)
    assert not f.cache_weight and not fnn.Fp8Linear(64, 32).cache_weight
    assert not fnn.Fp8GroupedExperts(2, 64, 32).cache_weight
    assert fnn.Fp8Linear.from_linear(lin, cache_weight=True, pow2_scales=True).pow2_scales
    with raises(TypeError):  # a misspelt option is an error, not silently dropped
        fnn.Fp8Linear.from_linear(lin, pow2=True)
    m = fnn.Fp8Linear(64, 32, bias=False, dtype=torch.bfloat16)
    assert m.bias is None and m.weight.dtype == torch.bfloat16 and m.weight.shape == (32, 64)
    with raises(ValueError, match=r"x has 48 features"):
        m(torch.zeros(2, 48, dtype=torch.bfloat16))
    assert "recipe=1x128 x 128x128" in repr(m)


def test_weight_cache_rules():
    """What makes the layers' weight cache miss (nn.py's _WeightCache): another tensor at the
    same address (a replaced Parameter), an in-place update (the version counter), another
    scale rule (pow2_scales); and the cache is bypassed under torch.inference_mode."""
    _need_torch()
    w = torch.nn.Parameter(torch.randn(32, 64))
    c = fnn._WeightCache()
    assert not c.holds(w, False)
    c.fill(w, False, "q", "s", None, None)
    assert c.holds(w, False)
    assert not c.holds(w, True), "pow2_scales changed: the entry's scales follow the other rule"
    twin = w.detach()  # the same storage and address, another tensor
    assert twin.data_ptr() == w.data_ptr() and not c.holds(twin, False)
    with torch.no_grad():
        w.mul_(2.0)  # an optimizer step
    assert not c.holds(w, False)
    c.fill(w, False, "q", "s", None, None)
    c.clear()
    assert not c.holds(w, False)
    # A fused optimizer step (fused=True) updates w without bumping its version counter (torch
    # 2.11); the optimizer steps counted by the cache's step hook, part of the key, make the
    # entry miss anyway (session 57: it was a hit, the old weight's quantisation kept).
    c.fill(w, False, "q", "s", None, None)
    opt = torch.optim.AdamW([w], lr=0.1, fused=True)
    w.grad = torch.randn_like(w)
    before, version = w.detach().clone(), w._version
    opt.step()
    assert not torch.equal(w.detach(), before)
    print(f"fused AdamW step: version {version} -> {w._version}")
    assert not c.holds(w, False), "the entry survived a fused optimizer step"
    # An inference tensor (made under torch.inference_mode) has no version counter: never
    # cached, never looked up (reading its version raised RuntimeError before session 57).
    with torch.inference_mode():
        wi = torch.randn(32, 64)
    c.clear()
    c.fill(wi, False, "q", "s", None, None)
    assert not c.holds(wi, False) and c.key is None
    assert not fnn._bypass_cache()
    with torch.inference_mode():
        assert fnn._bypass_cache()
    # A layer whose cache holds an entry pickles (torch.save): the entry is dropped, not the layer
    import pickle
    layer = fnn.Fp8Linear(64, 32, cache_weight=True)
    layer._cache.fill(layer.weight, False, torch.zeros(1), torch.zeros(1), None, None)
    back = pickle.loads(pickle.dumps(layer))
    assert back.cache_weight and back._cache.key is None and back._cache.q is None
    assert torch.equal(back.weight, layer.weight)


def test_weight_cache_threads():
    """One cache shared by threads (nn.DataParallel's replicas run the forward passes of one
    module's copies on a thread per device, and the copies share its cache object), each thread
    with its own weight: every thread must get its own weight's operands, W and W^T, never
    another's. The quantisers are stand-ins (no GPU) that tag what they return with its source;
    Python's thread switch is forced every microsecond so that the threads interleave inside the
    cache's calls; a fifth thread keeps clearing the cache (invalidate_weight_cache) and reading
    its fields. Control (session 56): the cache before it kept its entry as one tuple (holds()
    then four attribute reads; fill() in two assignments) fails this test."""
    _need_torch()
    import sys
    import threading

    class Tag:  # what a stand-in quantiser returns: its source operand, by identity
        def __init__(self, src):
            self.src = src

    weights = [torch.nn.Parameter(torch.randn(4, 8, dtype=torch.bfloat16)) for _ in range(4)]
    cache = fnn._WeightCache()
    failures = []
    saved = (fnn.ops.quantize_128x128, fnn.ops.transpose_block_scaled, sys.getswitchinterval())

    def work(w):
        try:
            for _ in range(3000):
                q, s, _, _ = fnn._forward_operand(cache, w, False)
                if q.src is not w or s.src is not w:
                    failures.append("W's operand of another weight")
                    return
                q_t, s_t = fnn._transposed_operand(cache, q, s)
                if q_t.src is not q or s_t.src is not s:
                    failures.append("W^T's operand of another weight")
                    return
        except Exception as e:  # an entry torn between two fills
            failures.append(repr(e))

    done = threading.Event()

    def invalidate():
        try:
            while not done.is_set():
                cache.clear()
                _ = (cache.key, cache.q, cache.s, cache.q_t, cache.s_t)
        except Exception as e:
            failures.append(repr(e))

    fnn.ops.quantize_128x128 = lambda w, pow2_scales=False: (Tag(w), Tag(w))
    fnn.ops.transpose_block_scaled = lambda q, s: (Tag(q), Tag(s))
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(w,)) for w in weights]
        clearer = threading.Thread(target=invalidate)
        clearer.start()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        done.set()
        clearer.join()
    finally:
        fnn.ops.quantize_128x128, fnn.ops.transpose_block_scaled = saved[:2]
        sys.setswitchinterval(saved[2])
    assert not failures, failures[:3]


def test_torch_helpers():
    _need_torch()
    assert ops.max_padded_tokens(1000, 4) == (1000 + 127 * 4) // 128 * 128
    assert ops.max_padded_tokens(3, 8) == 3 * 128  # three experts of one token each
    g = torch.Generator().manual_seed(1)
    x = torch.randn(300, 1040, generator=g)
    # dequantisation of a hand-made 1 x 128 quantisation
    s = torch.rand(300, 9, generator=g) + 0.5
    q = (x / s.repeat_interleave(128, 1)[:, :1040]).clamp(-448, 448).to(torch.float8_e4m3fn)
    d = ops.dequantize_1x128(q, s)
    assert torch.equal(d, q.float() * s.repeat_interleave(128, 1)[:, :1040])
    sb = torch.rand(3, 9, generator=g) + 0.5
    d = ops.dequantize_128x128(q[:300], sb)
    assert torch.equal(d[130, 260], q[130, 260].float() * sb[1, 2])
    qt, st = ops.transpose_block_scaled(q, sb)
    assert qt.shape == (1040, 300) and st.shape == (9, 3)
    assert torch.equal(ops.dequantize_128x128(qt, st), ops.dequantize_128x128(q, sb).t())
    qp, sp = ops.quantize_per_tensor(x)
    assert sp.shape == (1,) and qp.dtype == torch.float8_e4m3fn
    assert float((qp.float() * sp - x).abs().max()) <= float(x.abs().max()) * 2 ** -4


def test_readme_example_present():
    """The README's PyTorch section has the example test_readme_example.py runs."""
    from test_readme_example import readme_example
    code = readme_example()
    assert "Fp8Linear" in code and "gemm_block_scaled" in code
    assert len(code.strip().splitlines()) <= 12
    compile(code, "README.md", "exec")


def test_stage_script():
    """stage.sh assembles an importable package from a build folder (FP8GEMM_BUILD_DIR, when the
    environment names one)."""
    _need_torch()
    build = os.environ.get("FP8GEMM_BUILD_DIR")
    if not build:
        skip("FP8GEMM_BUILD_DIR is not set (the build folder to stage from)")
    stage = os.path.join(os.path.dirname(HERE), "stage.sh")
    if not os.path.exists(stage):
        skip("stage.sh is not beside the tests (a staged copy)")
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        r = subprocess.run(["bash", stage, build, d],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        r = subprocess.run([sys.executable, "-c",
                            "import fp8gemm; assert fp8gemm.available(), fp8gemm.unavailable_reason();"
                            "print(fp8gemm.ops.library_version())"],
                           capture_output=True, text=True, cwd=d, env={**os.environ, "PYTHONPATH": d})
        assert r.returncode == 0, r.stderr
        assert re.match(r"\d+\.\d+\.\d+", r.stdout.strip())
        assert os.path.exists(os.path.join(d, "fp8gemm", "commit.txt"))


class _Ctx:
    """Enough of autograd's ctx to call an autograd.Function's forward and backward directly."""

    def __init__(self, needs):
        self.needs_input_grad = needs

    def save_for_backward(self, *tensors):
        self.saved_tensors = tensors


def test_layers_under_fake_tensors():
    """Every Python path of Fp8Linear's and Fp8GroupedExperts' forward and backward (x^T from the
    dual quantiser or from the token quantiser; with and without each gradient; bf16 and float32
    parameters; one launch or one per expert for the weights) on FakeTensors on a 'cuda' device:
    the ops' fake implementations give every shape and dtype, no GPU needed. The autograd engine
    needs a GPU for CUDA tensors, so the Functions are called directly."""
    require_ops()
    from torch._subclasses.fake_tensor import FakeTensorMode
    lin = fnn._Fp8LinearFunction
    with FakeTensorMode():
        for M, dt in ((256, torch.bfloat16), (333, torch.bfloat16), (384, torch.float32)):
            w = torch.empty(384, 1040, dtype=dt, device="cuda")
            b = torch.empty(384, dtype=dt, device="cuda")
            x = torch.empty(M, 1040, dtype=dt, device="cuda")
            for needs in ((True, True, True), (True, False, True), (False, True, False)):
                ctx = _Ctx(needs)
                y = lin.forward(ctx, x, w, b, None, False)
                assert y.shape == (M, 384) and y.dtype == torch.bfloat16
                dx, dw, db, *_ = lin.backward(ctx, torch.empty(M, 384, dtype=torch.bfloat16,
                                                               device="cuda"))
                for want, got, shape in ((needs[0], dx, (M, 1040)), (needs[1], dw, (384, 1040)),
                                         (needs[2], db, (384,))):
                    assert (got is not None) == want
                    if want:
                        assert got.shape == shape and got.dtype == dt
        for N, check in ((384, False), (272, True)):  # 272: the experts' weights one by one
            ctx = _Ctx((True, False, True))
            wg = torch.empty(4, N, 1040, dtype=torch.bfloat16, device="cuda")
            x = torch.empty(1000, 1040, dtype=torch.bfloat16, device="cuda")
            off = torch.empty(5, dtype=torch.int32, device="cuda")
            y = fnn._Fp8GroupedFunction.forward(ctx, x, off, wg, None, False, check)
            dx, doff, dw, *_ = fnn._Fp8GroupedFunction.backward(
                ctx, torch.empty(1000, N, dtype=torch.bfloat16, device="cuda"))
            assert y.shape == (1000, N) and dx.shape == (1000, 1040) and doff is None
            assert dw.shape == (4, N, 1040) and dw.dtype == torch.bfloat16


def test_compile_traces_fullgraph():
    """torch.compile(fullgraph=True, dynamic=True) traces a function of the ops into one graph (a
    recording backend; running it on CPU tensors is then refused, as it should be)."""
    require_ops()
    graphs = []

    def record(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    def f(x, w):
        qa, sa = ops.quantize_1x128(x)
        qb, sb = ops.quantize_128x128(w)
        return torch.relu(ops.gemm_block_scaled(qa, sa, qb, sb)) * 2

    torch._dynamo.reset()
    cf = torch.compile(f, fullgraph=True, backend=record, dynamic=True)
    with raises(ValueError, match="must be a CUDA tensor"):
        cf(_cpu(256, 1040), _cpu(264, 1040))
    assert len(graphs) == 1
    targets = [str(n.target) for n in graphs[0].graph.nodes if n.op == "call_function"]
    assert "fp8gemm.quantize_1x128.default" in targets or any("quantize_1x128" in t for t in targets)
    assert any("gemm_block_scaled" in t for t in targets)
