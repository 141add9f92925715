"""Layers that compute in FP8 with fp8gemm's block-scaled GEMMs (DeepSeek-V3's recipe) and take
bf16 activations, quantising inside:

  Fp8Linear           drop-in for torch.nn.Linear (with or without bias)
  Fp8GroupedExperts   G experts' linear maps over tokens sorted by expert (a mixture-of-experts
                      layer's up or down projection), one grouped launch per GEMM

Forward  y = x . W^T (+ b): x quantised 1 x 128 along the features (quantize_1x128), W 128 x 128
         (quantize_128x128); bf16 y.
Backward dX = dY . W: dY quantised 1 x 128 along N; W^T's 128 x 128 blocks are W's blocks
         transposed, so W^T is the e4m3 codes and the scale grid of the forward pass transposed
         (exact; for Fp8Linear written by the forward pass's quantiser, for Fp8GroupedExperts
         transposed in the backward pass; no second quantisation of W).
         dW = dY^T . X: both operands quantised 1 x 128 ALONG THE TOKENS (the reduction dimension
         of this product), as DeepSeek-V3 does, by the k-grouped weight-gradient GEMM (one group
         for Fp8Linear); FP32 sums, written by the kernel in the weight's dtype (bf16 rounded
         once).
Every GEMM promotes its FP32 partial sums every 128 K (the numerically safe mode; there is no
other in these layers).

Accepted: any number of tokens (Fp8Linear flattens x's leading dimensions; Fp8GroupedExperts
takes a 2-D x of tokens sorted by expert); in_features and
out_features multiples of 16 (the GEMMs' K rule: in_features is K of the forward pass,
out_features of the input gradient's). x of another float dtype is cast to bf16 first, and the
input gradient is returned in x's dtype; weights may be bf16 or float32 (cast to bf16 before
quantising; float32 master weights then get their float32 gradient without a rounding to bf16).

Fp8Linear makes W^T's operand with W's, by one kernel (quantize_128x128_dual: one read of W), in
every forward pass where x needs a gradient, and kept for the backward pass (with cache_weight=False
that holds N x K bytes of codes per layer from the forward to the backward pass).

Weight-quantisation cache (opt-in: cache_weight=True; off by default since session 55): W's e4m3
codes and scales (and W^T's, made with them, or in the first backward pass after a no_grad forward)
are kept while the weight is unchanged, so that several forward passes between optimizer steps
(gradient accumulation, evaluation) quantise W once. "Unchanged" is judged by the weight tensor
itself (the same Python object), its storage address, shape, dtype, the layer's pow2_scales and
the tensor's version counter, which every in-place update through autograd's view of the tensor
increments (``with torch.no_grad(): w.copy_(...)``), and the number of torch.optim steps taken
(a global optimizer step hook counts them: fused steps, ``fused=True``, update the parameters
without bumping their version counters). Writes that bypass both are NOT seen (an optimizer
step replayed from a CUDA graph runs no hook), and with the cache on the layer would silently keep computing with the old
weight: writes through ``weight.data`` (``w.data.copy_(...)``, custom optimizers that update
``p.data``), a new tensor assigned to ``weight.data`` (it may get the old storage's address back
from the caching allocator: FSDP-style ``p.data = ...`` every step), apex's fused optimizers, NCCL collectives into the parameter (DDP's initial broadcast,
ZeRO / distributed-optimizer all-gathers of the parameter buffer). Such code must call
``invalidate_weight_cache()`` after each update, or leave the cache off (the default, which
quantises W in every forward pass: the "training step" the benchmark times). The cache is
bypassed while torch.compile traces, while a CUDA graph is being captured (a captured graph must
quantise the weight it replays with), under torch.inference_mode (its tensors could not be
saved for a later backward pass) and for weights that are inference tensors. An entry read on
another CUDA stream than the one that made it is waited for there (an event) and kept alive for
that stream's work (record_stream).
"""

from __future__ import annotations

import math
import threading
import weakref
from typing import NamedTuple, Optional

import torch
from torch.autograd.function import once_differentiable

from . import ops

Tensor = torch.Tensor
BF16 = torch.bfloat16


def _bf16(t: Tensor) -> Tensor:
    return t if t.dtype == BF16 else t.to(BF16)


def _bypass_cache() -> bool:
    """Caching is off while compiling or capturing (both must see the quantisation happen) and
    under torch.inference_mode (inference tensors in the cache could not be saved for backward by
    a later training pass)."""
    if torch.compiler.is_compiling() or torch.is_inference_mode_enabled():
        return True
    return torch.cuda.is_available() and torch.cuda.is_current_stream_capturing()


# Taken by every write of a _WeightCache's entry (see the class); reads take none.
_CACHE_LOCK = threading.Lock()

# torch.optim steps taken so far, counted by a global optimizer step post-hook that the first
# weight cache registers: part of every cache key. A fused step (torch.optim's fused=True:
# AdamW, Adam, SGD, Adagrad) updates the parameters without bumping their version counter
# (torch 2.11, session 57), so the version alone would keep an updated weight's old
# quantisation. (A step replayed from a CUDA graph runs no hook: see the module's docstring.)
_OPTIMIZER_STEPS = [0]
_STEP_HOOK: list = []


def _count_optimizer_step(optimizer, args, kwargs) -> None:
    _OPTIMIZER_STEPS[0] += 1  # only its change matters: a lost increment of two at once is fine


def _ensure_step_hook() -> None:
    if not _STEP_HOOK:
        from torch.optim.optimizer import register_optimizer_step_post_hook
        with _CACHE_LOCK:
            if not _STEP_HOOK:
                _STEP_HOOK.append(register_optimizer_step_post_hook(_count_optimizer_step))


def _used_on_current_stream(made_on, ready, tensors) -> None:
    """Tensors made on stream `made_on` (their last kernel before event `ready`), about to be read
    on the current stream: if that is another one, it waits for them, and the caching allocator
    is told (record_stream) not to reuse their memory before its work is done."""
    if made_on is None:
        return
    cur = torch.cuda.current_stream(made_on.device)
    if cur == made_on:
        return
    if ready is not None:
        cur.wait_event(ready)
    for t in tensors:
        if t is not None:
            t.record_stream(cur)


class _CacheEntry(NamedTuple):
    key: tuple
    ref: "weakref.ref"  # a weak reference to the weight the entry was made from
    q: Tensor
    s: Tensor
    q_t: Optional[Tensor]
    s_t: Optional[Tensor]
    stream: Optional["torch.cuda.Stream"] = None  # where the tensors were made (CUDA)
    ready: Optional["torch.cuda.Event"] = None    # recorded there after the last of them


def _made_here(t):
    """(stream, event) for an entry whose tensors, t the last of them, were just made on the
    current stream; (None, None) where t is no CUDA tensor (the CPU tests' stand-ins)."""
    if not isinstance(t, torch.Tensor) or not t.is_cuda:
        return None, None
    stream = torch.cuda.current_stream(t.device)
    ready = torch.cuda.Event()
    ready.record(stream)
    return stream, ready


class _WeightCache:
    """W quantised 128 x 128 (and W^T, made on demand) for one weight tensor, version and scale
    rule (pow2_scales).

    The entry is one immutable tuple, replaced whole (fill, with_transposed, clear) and read as
    one snapshot (lookup, entry_of): a layer shared by several threads (nn.DataParallel runs the
    replicas' forward passes on one thread per device, and the replicas share the module's
    cache object) never pairs the key of one fill with the tensors of another. Reads take no
    lock (reading an attribute is atomic); the writes take _CACHE_LOCK, so that
    with_transposed's test-and-replace cannot bring back an entry that clear() (a layer's
    invalidate_weight_cache) or another fill removed meanwhile. Such threads still replace each
    other's entry (each replica has its own weight tensor), so the cache only helps a
    single-device layer."""

    _entry: Optional[_CacheEntry] = None  # (also what an unpickled cache starts from)

    def __init__(self):
        self._entry = None
        _ensure_step_hook()

    @staticmethod
    def _key(w: Tensor, pow2: bool):
        return (w.data_ptr(), tuple(w.shape), w.dtype, w.device, w._version, bool(pow2),
                _OPTIMIZER_STEPS[0])

    def lookup(self, w: Tensor, pow2: bool) -> Optional[_CacheEntry]:
        """The entry if it was made from this very tensor (not another one that reuses a freed
        address: a replaced Parameter, a replica) in its current version, with this scale rule,
        and no optimizer step since; its tensors ready for the current stream. Never for an
        inference tensor (made under torch.inference_mode: it has no version counter)."""
        if w.is_inference():
            return None
        e = self._entry
        if e is not None and e.ref() is w and e.key == self._key(w, pow2):
            _used_on_current_stream(e.stream, e.ready, (e.q, e.s, e.q_t, e.s_t))
            return e
        return None

    def holds(self, w: Tensor, pow2: bool) -> bool:
        return self.lookup(w, pow2) is not None

    def fill(self, w: Tensor, pow2: bool, q, s, q_t, s_t):
        if w.is_inference():
            return
        e = _CacheEntry(self._key(w, pow2), weakref.ref(w), q, s, q_t, s_t, *_made_here(q))
        with _CACHE_LOCK:
            self._entry = e

    def entry_of(self, q: Tensor) -> Optional[_CacheEntry]:
        """The entry whose codes are q (the forward pass's operand), if it is still the cache's;
        its tensors ready for the current stream."""
        e = self._entry
        if e is not None and e.q is q:
            _used_on_current_stream(e.stream, e.ready, (e.q, e.s, e.q_t, e.s_t))
            return e
        return None

    def with_transposed(self, e: _CacheEntry, q_t: Tensor, s_t: Tensor):
        """Adds W^T's operand to entry e, unless another fill replaced e meanwhile. The current
        stream waited for e's tensors (entry_of), so an event recorded here covers all four."""
        stream, ready = _made_here(q_t)
        filled = e._replace(q_t=q_t, s_t=s_t, stream=stream, ready=ready)
        with _CACHE_LOCK:
            if self._entry is e:
                self._entry = filled

    def clear(self):
        with _CACHE_LOCK:
            self._entry = None

    def _field(self, i: int):
        e = self._entry  # one read: a concurrent clear() cannot empty it between test and use
        return e[i] if e is not None else None

    # The entry's fields, for tests and inspection (None when empty).
    key = property(lambda self: self._field(0))
    q = property(lambda self: self._field(2))
    s = property(lambda self: self._field(3))
    q_t = property(lambda self: self._field(4))
    s_t = property(lambda self: self._field(5))

    # A weak reference cannot be pickled: torch.save / pickle of a layer keep an empty cache.
    def __getstate__(self):
        return {}

    def __setstate__(self, state):
        self.clear()
        _ensure_step_hook()


def _forward_operand(cache: Optional[_WeightCache], w: Tensor, pow2: bool,
                     want_t: bool = False):
    """(q, s, q_t, s_t): W quantised 128 x 128 ([N, K] or stacked [G, N, K]) and, for a 2-D W
    with want_t (the input gradient will be needed), W^T's operand from the same launch
    (quantize_128x128_dual: one read of W instead of a quantisation and a transpose); q_t, s_t
    None otherwise. From the cache when W has not changed since it was filled (cache None: no
    caching; a cache filled without W^T gets it in the backward pass, _transposed_operand)."""
    e = cache.lookup(w, pow2) if cache is not None else None
    if e is not None:
        return e.q, e.s, e.q_t, e.s_t
    q_t = s_t = None
    if w.dim() == 2 and want_t:
        q, s, q_t, s_t = ops.quantize_128x128_dual(_bf16(w), pow2_scales=pow2)
    elif w.dim() == 2:
        q, s = ops.quantize_128x128(_bf16(w), pow2_scales=pow2)
    else:
        q, s = _quantize_stacked_128x128(w, pow2)
    if cache is not None:
        cache.fill(w, pow2, q, s, q_t, s_t)
    return q, s, q_t, s_t


def _transposed_operand(cache: Optional[_WeightCache], q: Tensor, s: Tensor):
    """W^T's (q, s) from W's: the codes and the block grid transposed (exact), kept beside q in
    the cache entry that holds q (the entry q came from: its key is q's weight and scale rule)."""
    e = cache.entry_of(q) if cache is not None and not _bypass_cache() else None
    if e is None:
        return ops.transpose_block_scaled(q, s)
    if e.q_t is None:
        q_t, s_t = ops.transpose_block_scaled(q, s)
        cache.with_transposed(e, q_t, s_t)
        return q_t, s_t
    return e.q_t, e.s_t


# [0, M] int32 per (M, device): the one-group offsets of a dense weight gradient, made once
# instead of by two small kernels (arange, multiply) in every backward pass. Bounded (a program
# with many distinct token counts refills it); bypassed while compiling or capturing, where the
# offsets must be made inside the graph.
_DENSE_OFFSETS: dict = {}
_DENSE_OFFSETS_MAX = 64


def _dense_offsets(M: int, like: Tensor) -> Tensor:
    """[0, M] int32 on like's device; cached for plain CUDA tensors outside any tracing (a
    FakeTensor, a proxy or a dispatch mode gets a fresh one, as the graph being built needs)."""
    device = like.device
    if (_bypass_cache() or type(like) is not torch.Tensor or not like.is_cuda
            or torch.utils._python_dispatch._get_current_dispatch_mode() is not None):
        return ops.dense_offsets(M, device)
    key = (M, device)
    hit = _DENSE_OFFSETS.get(key)
    if hit is None:
        if len(_DENSE_OFFSETS) >= _DENSE_OFFSETS_MAX:
            _DENSE_OFFSETS.clear()
        t = ops.dense_offsets(M, device)
        made_on = torch.cuda.current_stream(device)
        # Made on this stream, read later from any stream: wait for it once, here.
        made_on.synchronize()
        _DENSE_OFFSETS[key] = (t, made_on)
        return t
    t, made_on = hit
    # Read on another stream: the allocator must not reuse it (after a clear()) before that
    # stream's work is done. (Complete since made: no wait needed.)
    _used_on_current_stream(made_on, None, (t,))
    return t


def _quantize_stacked_128x128(w: Tensor, pow2: bool):
    """w [G, N, K] -> (q [G, N, K], s [G, nb, kg]): each group's own 128 x 128 blocks."""
    G, N, K = w.shape
    wb = _bf16(w)
    if N % 128 == 0:  # the groups' blocks tile the stacked [G N, K] matrix: one launch
        q, s = ops.quantize_128x128(wb.reshape(G * N, K), pow2_scales=pow2)
        return q.view(G, N, K), s.view(G, N // 128, s.shape[1])
    qs = [ops.quantize_128x128(wb[g], pow2_scales=pow2) for g in range(G)]
    return torch.stack([q for q, _ in qs]), torch.stack([s for _, s in qs])


# ============================================= Fp8Linear ==========================================

class _Fp8LinearFunction(torch.autograd.Function):
    """y [M, N] = x [M, K] . W [N, K]^T (+ b) in FP8; the backward pass in FP8 too."""

    @staticmethod
    def forward(ctx, x: Tensor, weight: Tensor, bias: Optional[Tensor],
                cache: Optional[_WeightCache], pow2: bool):
        M, K = x.shape
        xb = _bf16(x).contiguous()
        want_dgrad, want_wgrad = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        # W^T is made here, with W, when dX will be needed: kept for the backward pass (by the
        # cache too, when it is on, so that costs no extra memory then).
        q_w, s_w, q_wt, s_wt = _forward_operand(cache, weight, pow2, want_t=want_dgrad)
        # The weight gradient reduces over the tokens: it wants x^T in 1 x 128 groups along them.
        # With M % 128 == 0 the fused quantiser writes x and x^T from one read (and x^T is then
        # exactly the one-group token layout); otherwise bf16 x is kept and quantised later.
        dual = want_wgrad and M % 128 == 0
        if dual:
            q_x, s_x, q_xt, s_xt = ops.quantize_1x128_dual(xb, pow2_scales=pow2)
        else:
            q_x, s_x = ops.quantize_1x128(xb, pow2_scales=pow2)
            q_xt = s_xt = None
        y = ops.gemm_block_scaled(q_x, s_x, q_w, s_w)
        if bias is not None:
            y = y + _bf16(bias)
        ctx.dual, ctx.pow2, ctx.cache = dual, pow2, cache
        ctx.x_dtype, ctx.has_bias = x.dtype, bias is not None
        ctx.bias_dtype = bias.dtype if bias is not None else None
        saved_x = (q_xt, s_xt) if dual else ((xb, None) if want_wgrad else (None, None))
        ctx.save_for_backward(weight, q_w, s_w, q_wt, s_wt, *saved_x)
        return y

    @staticmethod
    @once_differentiable  # the fp8gemm ops have no derivatives: double backward raises
    def backward(ctx, dy: Tensor):
        weight, q_w, s_w, q_wt, s_wt, x0, x1 = ctx.saved_tensors
        M, N = dy.shape
        dyb = _bf16(dy).contiguous()
        need_dx, need_dw = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        need_db = ctx.has_bias and ctx.needs_input_grad[2]
        dx = dw = db = None
        q_dyt = s_dyt = None
        if need_dx:
            if need_dw and ctx.dual:  # dY and dY^T from one read, as x in the forward pass
                q_dy, s_dy, q_dyt, s_dyt = ops.quantize_1x128_dual(dyb, pow2_scales=ctx.pow2)
            else:
                q_dy, s_dy = ops.quantize_1x128(dyb, pow2_scales=ctx.pow2)
            if q_wt is None:  # the cache was filled by a pass that did not need dX (no_grad)
                q_wt, s_wt = _transposed_operand(ctx.cache, q_w, s_w)
            dx = ops.gemm_block_scaled(q_dy, s_dy, q_wt, s_wt).to(ctx.x_dtype)
        if need_dw:
            offsets = _dense_offsets(M, dyb)
            if ctx.dual:
                q_xt, s_xt = x0, x1
                if q_dyt is None:
                    # Only dW (x needs no gradient, e.g. a first layer): dY^T alone. With
                    # M % 128 == 0 this equals the dual's second half, without writing dY's
                    # own codes (a quarter less traffic, and the single kernel is faster).
                    q_dyt, s_dyt, _ = ops.quantize_tokens_transposed_1x128(
                        dyb, offsets, M, pow2_scales=ctx.pow2)
            else:
                q_xt, s_xt, _ = ops.quantize_tokens_transposed_1x128(x0, offsets,
                                                                     pow2_scales=ctx.pow2)
                q_dyt, s_dyt, _ = ops.quantize_tokens_transposed_1x128(dyb, offsets,
                                                                       pow2_scales=ctx.pow2)
            # dW in the weight's dtype: bf16 straight from the kernel (rounded once from its FP32
            # sums, as .to() would round them), float32 as computed; others converted.
            wdt = weight.dtype if weight.dtype in (torch.float32, torch.bfloat16) else torch.float32
            dw = ops.gemm_weight_grad(q_dyt, s_dyt, q_xt, s_xt, offsets, out_dtype=wdt)[0]
            dw = dw if dw.dtype == weight.dtype else dw.to(weight.dtype)
        if need_db:
            db = dyb.sum(0, dtype=torch.float32).to(ctx.bias_dtype)
        return dx, dw, db, None, None


class Fp8Linear(torch.nn.Module):
    """y = x W^T + b like torch.nn.Linear, computed in FP8 (see the module's docstring).

    Args match torch.nn.Linear (in_features, out_features, bias, device, dtype; both feature
    counts must be multiples of 16), plus
      cache_weight: keep W's quantisation while W is unchanged (default False; read the
                    module's docstring before turning it on: updates through weight.data or
                    collectives are not seen);
      pow2_scales:  round every scale up to a power of two (x / scale exact; default False).
    ``Fp8Linear.from_linear(linear)`` wraps an existing torch.nn.Linear, sharing its parameters.
    Output: bf16, shape x.shape[:-1] + (out_features,).
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None, *, cache_weight: bool = False, pow2_scales: bool = False):
        super().__init__()
        for name, v in (("in_features", in_features), ("out_features", out_features)):
            if v < 16 or v % 16 != 0:
                raise ValueError(f"fp8gemm.nn.Fp8Linear: {name} = {v} must be a positive multiple "
                                 "of 16 (it is K of one of the layer's GEMMs: TMA rows of K bytes "
                                 "must be 16-byte multiples)")
        self.in_features, self.out_features = in_features, out_features
        self.cache_weight, self.pow2_scales = cache_weight, pow2_scales
        kw = {"device": device, "dtype": dtype}
        self.weight = torch.nn.Parameter(torch.empty((out_features, in_features), **kw))
        self.bias = torch.nn.Parameter(torch.empty(out_features, **kw)) if bias else None
        self._cache = _WeightCache()
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """torch.nn.Linear's initialisation."""
        torch.nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            torch.nn.init.uniform_(self.bias, -bound, bound)
        self._cache.clear()

    @classmethod
    def from_linear(cls, linear: torch.nn.Linear, *, cache_weight: bool = False,
                    pow2_scales: bool = False) -> "Fp8Linear":
        """An Fp8Linear computing `linear` in FP8, sharing its weight and bias Parameters
        (cache_weight and pow2_scales as the constructor's)."""
        m = cls.__new__(cls)
        torch.nn.Module.__init__(m)
        for name, v in (("in_features", linear.in_features), ("out_features", linear.out_features)):
            if v < 16 or v % 16 != 0:
                raise ValueError(f"fp8gemm.nn.Fp8Linear.from_linear: {name} = {v} must be a "
                                 "positive multiple of 16")
        m.in_features, m.out_features = linear.in_features, linear.out_features
        m.cache_weight, m.pow2_scales = cache_weight, pow2_scales
        m.weight = linear.weight
        m.bias = linear.bias
        m._cache = _WeightCache()
        return m

    def invalidate_weight_cache(self) -> None:
        self._cache.clear()

    def forward(self, x: Tensor) -> Tensor:
        if x.shape[-1] != self.in_features:
            raise ValueError(f"fp8gemm.nn.Fp8Linear: x has {x.shape[-1]} features in its last "
                             f"dimension (shape {tuple(x.shape)}); the layer takes "
                             f"{self.in_features}")
        lead = x.shape[:-1]
        x2 = x.reshape(-1, self.in_features)
        cache = self._cache if self.cache_weight and not _bypass_cache() else None
        y = _Fp8LinearFunction.apply(x2, self.weight, self.bias, cache, self.pow2_scales)
        return y.reshape(*lead, self.out_features)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}, recipe=1x128 x 128x128 e4m3, promoted FP32")


# ========================================= Fp8GroupedExperts ======================================

class _Fp8GroupedFunction(torch.autograd.Function):
    """y [T, N] with y[tokens of g] = x[tokens of g] . W[g]^T for every expert g, in FP8."""

    @staticmethod
    def forward(ctx, x: Tensor, offsets: Tensor, weight: Tensor, cache: Optional[_WeightCache],
                pow2: bool, check: bool):
        xb = _bf16(x).contiguous()
        q_w, s_w = _forward_operand(cache, weight, pow2)[:2]
        q_x, s_x = ops.quantize_1x128(xb, pow2_scales=pow2)
        y = ops.gemm_grouped_contiguous(q_x, s_x, q_w, s_w, offsets, check_offsets=check)
        ctx.pow2, ctx.cache, ctx.x_dtype, ctx.check = pow2, cache, x.dtype, check
        ctx.save_for_backward(xb if ctx.needs_input_grad[2] else None, offsets, weight, q_w, s_w)
        return y

    @staticmethod
    @once_differentiable  # the fp8gemm ops have no derivatives: double backward raises
    def backward(ctx, dy: Tensor):
        xb, offsets, weight, q_w, s_w = ctx.saved_tensors
        dyb = _bf16(dy).contiguous()
        dx = dw = None
        if ctx.needs_input_grad[0]:
            q_dy, s_dy = ops.quantize_1x128(dyb, pow2_scales=ctx.pow2)
            q_wt, s_wt = _transposed_operand(ctx.cache, q_w, s_w)
            dx = ops.gemm_grouped_contiguous(q_dy, s_dy, q_wt, s_wt, offsets,
                                             check_offsets=ctx.check).to(ctx.x_dtype)
        if ctx.needs_input_grad[2]:
            q_dyt, s_dyt, _ = ops.quantize_tokens_transposed_1x128(dyb, offsets,
                                                                   pow2_scales=ctx.pow2)
            q_xt, s_xt, _ = ops.quantize_tokens_transposed_1x128(xb, offsets, pow2_scales=ctx.pow2)
            wdt = weight.dtype if weight.dtype in (torch.float32, torch.bfloat16) else torch.float32
            dw = ops.gemm_weight_grad(q_dyt, s_dyt, q_xt, s_xt, offsets, out_dtype=wdt,
                                      check_offsets=ctx.check)
            dw = dw if dw.dtype == weight.dtype else dw.to(weight.dtype)
        return dx, None, dw, None, None, None


class Fp8GroupedExperts(torch.nn.Module):
    """G experts' linear maps without bias, computed in FP8 with one grouped launch per GEMM.

    weight: [G, out_features, in_features] (expert g's torch.nn.Linear weight at weight[g]).
    forward(x, offsets): x [T, in_features] bf16 with the tokens sorted by expert; offsets
    [G + 1] int32 on the GPU, expert g owning tokens offsets[g] .. offsets[g+1] - 1 (offsets[0] = 0,
    monotone, offsets[G] = T; any count, 0 included). Returns [T, out_features] bf16. The host
    never reads offsets, so a captured CUDA graph can replay other expert counts.
    Backward: dX by the grouped GEMM with each expert's W^T (the forward's codes and block grid
    transposed), dW by the k-grouped weight-gradient GEMM (tokens quantised 1 x 128 along the
    tokens per expert). in_features and out_features must be multiples of 16; out_features a
    multiple of 128 quantises all experts' weights in one launch (otherwise one per expert).
    cache_weight (default False) and pow2_scales as Fp8Linear's (the module's docstring).
    check_offsets (default False): every grouped GEMM of the layer (forward, dX, dW) validates
    offsets on the GPU first and raises RuntimeError on a broken one (offsets[0] != 0, a
    decrease, offsets[G] != T), where the default computes wrong rows without an error; it
    synchronises each call and cannot be captured in a CUDA graph: for debugging.
    """

    def __init__(self, num_experts: int, in_features: int, out_features: int, device=None,
                 dtype=None, *, cache_weight: bool = False, pow2_scales: bool = False,
                 check_offsets: bool = False):
        super().__init__()
        if num_experts < 1:
            raise ValueError(f"fp8gemm.nn.Fp8GroupedExperts: num_experts = {num_experts} must be "
                             ">= 1")
        for name, v in (("in_features", in_features), ("out_features", out_features)):
            if v < 16 or v % 16 != 0:
                raise ValueError(f"fp8gemm.nn.Fp8GroupedExperts: {name} = {v} must be a positive "
                                 "multiple of 16")
        self.num_experts = num_experts
        self.in_features, self.out_features = in_features, out_features
        self.cache_weight, self.pow2_scales = cache_weight, pow2_scales
        self.check_offsets = check_offsets
        self.weight = torch.nn.Parameter(
            torch.empty((num_experts, out_features, in_features), device=device, dtype=dtype))
        self._cache = _WeightCache()
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Each expert as torch.nn.Linear initialises its weight."""
        bound = 1 / math.sqrt(self.in_features)  # kaiming_uniform_(a=sqrt(5)) on [out, in]
        torch.nn.init.uniform_(self.weight, -bound, bound)
        self._cache.clear()

    def invalidate_weight_cache(self) -> None:
        self._cache.clear()

    def forward(self, x: Tensor, offsets: Tensor) -> Tensor:
        if x.dim() != 2 or x.shape[1] != self.in_features:
            raise ValueError(f"fp8gemm.nn.Fp8GroupedExperts: x must be [T, {self.in_features}] "
                             f"(tokens sorted by expert); got shape {tuple(x.shape)}")
        if offsets.dim() != 1 or offsets.shape[0] != self.num_experts + 1:
            raise ValueError(f"fp8gemm.nn.Fp8GroupedExperts: offsets must be [{self.num_experts + 1}]"
                             f" (G + 1 int32 token offsets); got shape {tuple(offsets.shape)}")
        cache = self._cache if self.cache_weight and not _bypass_cache() else None
        return _Fp8GroupedFunction.apply(x, offsets, self.weight, cache, self.pow2_scales,
                                         getattr(self, "check_offsets", False))  # older pickles

    def extra_repr(self) -> str:
        return (f"num_experts={self.num_experts}, in_features={self.in_features}, "
                f"out_features={self.out_features}, recipe=1x128 x 128x128 e4m3, promoted FP32")


__all__ = ["Fp8Linear", "Fp8GroupedExperts"]
