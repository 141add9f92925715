#!/usr/bin/env python3
"""CPU test of bench/peers_moe.py --interleave: Runner.record keeps a case's checked calls and
run_case times them in one Gpu.time_group (each with its own delay, a wrong result left out, calls
checked before a set-up failure still timed), and the entries are written with the same fields as one
after the other, plus interleaved = 1. Without --interleave every call is its own group of one.

The GPU is bench/test_peers_timing.py's simulated clock (imported, not copied); a case's calls are fake
(each advances the clock by its own time), so each entry's median must be its own call's time. Every
time_group call is logged; the grouping check is also run on the log of the run without --interleave,
where it must fail (so that the check can tell the two apart). Needs no torch and no GPU (CTest
`peers_moe_interleave`, label cpu).

This repository's implementations (fp8gemm_grouped_contiguous, fp8gemm_grouped_masked,
fp8gemm_weight_grad) run their real Runner methods (load_fops, fp8gemm_contiguous / _masked /
_wgrad, fp8gemm) on fake tensors (shape, strides, dtype, an address from a fake caching allocator)
against a fake `fp8gemm` package put in sys.modules, whose ops check their arguments by
csrc/ops.cpp's rules for reading the scales in place (so a layout that the op would copy inside the
timed call fails here) and advance the clock by their own time. Checked: their entries join the
case's group (contiguous, masked and wgrad cases); with `fp8gemm` not importable, or importable
without its compiled ops, their entries are errors that say why and the peers are still timed.

  python3 bench/test_peers_moe_interleave.py
"""
import contextlib
import io
import os
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers as P  # noqa: E402
import peers_moe as M  # noqa: E402
import test_peers_timing as T  # noqa: E402  (the simulated GPU clock)

# Every implementation, each a fake call of its own time (ms); FA's result is wrong.
CALL_MS = {M.DG_CONTIG: 0.9, M.DG_PSUM: 0.8, M.DG_PAD: 0.05, M.DG_CONTIG_PAD: 0.95, M.TORCH_GMM: 1.2,
           M.TORCH_GMM_FA: 1.1, M.FP8_CONTIG: 0.7, M.DG_MASKED: 0.3, M.DG_MASKED_EXACT: 0.31,
           M.FP8_MASKED: 0.28, M.DG_WGRAD: 1.5, M.TORCH_LOOP_WGRAD: 2.5, M.FP8_WGRAD: 1.4}
WRONG = {M.TORCH_GMM_FA}
LONG_DELAY_US = 1000.0
CASES = {  # small cases of each kind: empty experts, counts not multiples of 128
    "skewed": M.Case("skewed", "skew_test_n256_k256", 4, 256, 256, [100, 0, 300, 50], "skew_test"),
    "masked": M.Case("masked", "masked_test_g2x64_n256_k384", 2, 256, 384, [64, 64], "masked_test", rows_max=64),
    "wgrad": M.Case("wgrad", "wgrad_test_n256_k384", 4, 256, 384, [100, 0, 300, 50], "skew_test"),
}

# ---- fake tensors and a fake fp8gemm package --------------------------------------------------

E4M3, F32, BF16, I32 = "e4m3", "f32", "bf16", "i32"
FREE: dict = {}    # the fake caching allocator's freed blocks: (elements, dtype) -> [addresses]
NEXT = [0x10000]   # its next new address


class FakeTensor:
    """What the fp8gemm_* methods use of a torch tensor: shape, strides, dtype, the address of its
    block and, for index tensors, the values. Blocks come from a fake caching allocator that hands
    back a freed block of the same size first (views share their base's block)."""

    def __init__(self, shape, dtype, strides=None, data=None, base=None):
        self.shape, self.dtype, self.data, self.base, self.device = tuple(shape), dtype, data, base, "cuda"
        self._strides = tuple(strides) if strides is not None else contiguous_strides(self.shape)
        self.filled = None
        if base is not None:
            self.ptr = base.ptr
        else:
            key = (numel(self.shape), dtype)
            self.ptr = FREE[key].pop() if FREE.get(key) else NEXT[0]
            NEXT[0] += 1 << 20

    def __del__(self):
        if self.base is None:
            FREE.setdefault((numel(self.shape), self.dtype), []).append(self.ptr)

    def stride(self):
        return self._strides

    def data_ptr(self):
        return self.ptr

    def dim(self):
        return len(self.shape)

    def view(self, *shape):
        assert self._strides == contiguous_strides(self.shape) and numel(shape) == numel(self.shape)
        return FakeTensor(shape, self.dtype, base=self)

    def t(self):
        return FakeTensor(self.shape[::-1], self.dtype, strides=self._strides[::-1], base=self)

    def contiguous(self):
        return FakeTensor(self.shape, self.dtype, data=self.data)

    def copy_(self, src):
        assert src.shape == self.shape
        return self

    def fill_(self, value):
        self.filled = value
        return self


def numel(shape):
    n = 1
    for x in shape:
        n *= x
    return n


def contiguous_strides(shape):
    out, s = [], 1
    for x in reversed(shape):
        out.append(s)
        s *= x
    return tuple(reversed(out))


def add_fake_torch(torch):
    """The torch functions the fp8gemm_* methods call, on the simulated GPU's torch namespace."""
    torch.float32, torch.int32, torch.bfloat16 = F32, I32, BF16
    torch.tensor = lambda data, dtype, device: FakeTensor((len(data),), dtype, data=list(data))
    torch.empty_strided = lambda shape, strides, dtype, device: FakeTensor(shape, dtype, strides=strides)

    def full(shape, value, dtype, device):
        return FakeTensor(shape, dtype).fill_(value)
    torch.full = full


LAYOUT_ERRORS = []  # what the fake ops found against csrc/ops.cpp's rules
OP_CALLS = []       # (op, the arguments' descriptions) of every fake op call


def need(cond, what):
    if not cond:
        LAYOUT_ERRORS.append(what)


def scales_in_place(name, s, rows, kg):
    """csrc/ops.cpp group_scales: [rows, kg] float32 read in place only when mn-major, (1, ld) with
    ld >= rows and ld % 4 == 0 (else copied inside the call)."""
    need(s.dtype == F32 and s.shape == (rows, kg), f"{name}: shape {s.shape} {s.dtype}, want ({rows}, {kg}) f32")
    st = s.stride()
    need((rows == 1 or st[0] == 1) and (kg == 1 or (st[1] >= rows and st[1] % 4 == 0)),
         f"{name}: strides {st} would be copied (want (1, ld), ld >= {rows}, ld % 4 == 0)")


def block_scales_in_place(name, s, G, N, K):
    """csrc/ops.cpp block_scales: [G, nb, kg], unit stride along kg, group stride nb x ld."""
    nb, kg = -(-N // 128), -(-K // 128)
    need(s.dtype == F32 and s.shape == (G, nb, kg), f"{name}: shape {s.shape}, want ({G}, {nb}, {kg})")
    st = s.stride()
    need(st[2] == 1 and st[1] >= kg and st[0] == nb * st[1], f"{name}: strides {st} would be copied")


def row_major(name, t, dtype, shape):
    need(t.dtype == dtype and t.shape == tuple(shape) and t.stride()[-1] == 1 and
         t.stride() == contiguous_strides(t.shape), f"{name}: {t.shape} {t.dtype} strides {t.stride()}, "
         f"want {tuple(shape)} {dtype} row-major")


def fake_fops(case):
    """A fake fp8gemm.ops for `case`: the three GEMM ops, each checking its arguments, advancing the
    simulated clock by its implementation's time and returning its output."""
    G, N, K = case.G, case.N, case.K
    kg = -(-K // 128)
    ops = types.ModuleType("fp8gemm.ops")

    def gemm_grouped_contiguous(a, sa, b, sb, offsets):
        rows = case.total
        row_major("a", a, E4M3, (rows, K))
        row_major("b", b, E4M3, (G, N, K))
        scales_in_place("scale_a", sa, rows, kg)
        block_scales_in_place("scale_b", sb, G, N, K)
        need(offsets.dtype == I32 and offsets.data == [0] + case.ends, f"offsets {offsets.data}")
        OP_CALLS.append("gemm_grouped_contiguous")
        T.advance(CALL_MS[M.FP8_CONTIG])
        return FakeTensor((rows, N), BF16)

    def gemm_grouped_masked(a, sa, b, sb, masked_m):
        rows = case.rows_max
        row_major("a", a, E4M3, (G, rows, K))
        row_major("b", b, E4M3, (G, N, K))
        scales_in_place("scale_a", sa, G * rows, kg)
        block_scales_in_place("scale_b", sb, G, N, K)
        need(masked_m.dtype == I32 and masked_m.data == case.counts, f"masked_m {masked_m.data}")
        OP_CALLS.append("gemm_grouped_masked")
        T.advance(CALL_MS[M.FP8_MASKED])
        return FakeTensor((G, rows, N), BF16)

    def gemm_weight_grad(dd_t, sdd, a_t, sa, offsets, out=None, accumulate=False):
        cap = dd_t.shape[1]
        need(cap % 16 == 0 and cap >= sum(M.align(c) for c in case.counts), f"T_cap {cap}")
        row_major("dd_t", dd_t, E4M3, (N, cap))
        row_major("a_t", a_t, E4M3, (K, cap))
        scales_in_place("scale_dd_t", sdd, N, cap // 128)
        scales_in_place("scale_a_t", sa, K, cap // 128)
        need(offsets.dtype == I32 and offsets.data == [0] + case.ends, f"offsets {offsets.data} (real tokens)")
        need(out is not None and out.dtype == F32 and out.shape == (G, N, K) and not accumulate,
             "out: [G, N, K] f32, overwritten")
        need(out.filled is not None, "out NaN-filled before the checked call")  # (then "written")
        out.filled = "written"
        OP_CALLS.append("gemm_weight_grad")
        T.advance(CALL_MS[M.FP8_WGRAD])
        return out

    ops.gemm_grouped_contiguous = gemm_grouped_contiguous
    ops.gemm_grouped_masked = gemm_grouped_masked
    ops.gemm_weight_grad = gemm_weight_grad
    ops.library_version = lambda: "fake-lib"
    return ops


@contextlib.contextmanager
def fp8gemm_package(state, case):
    """sys.modules as this test wants it: "fake" (fake_fops, compiled ops available), "no_ops" (the
    package imports, its compiled ops are not loaded), "missing" (import fp8gemm fails)."""
    saved = {k: sys.modules.get(k) for k in ("fp8gemm", "fp8gemm.ops")}
    try:
        if state == "missing":
            sys.modules["fp8gemm"] = None  # import fp8gemm raises ImportError
            sys.modules.pop("fp8gemm.ops", None)
        else:
            pkg = types.ModuleType("fp8gemm")
            pkg.__file__ = "/fake/fp8gemm/__init__.py"
            pkg.__version__ = "0.0-fake"
            pkg.ops = fake_fops(case)
            pkg.available = lambda: state == "fake"
            pkg.unavailable_reason = lambda: None if state == "fake" else "fake: _C.so does not exist"
            sys.modules["fp8gemm"], sys.modules["fp8gemm.ops"] = pkg, pkg.ops
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v


OK_CHK = {"ok": True, "rel_error": 1e-3, "max_rel_error": 1e-3, "worst_tile_error": 1e-3, "tolerance": 5e-3}


class FakeRunner(M.Runner):
    """run_case with a case body that, like case_contiguous, checks each implementation inside guarded()
    and hands it to record() (many-launch ones with --long-delay-us); raise_after: a set-up failure after
    that many implementations. The fp8gemm_* implementations run the Runner's own methods on fake
    tensors laid out as the real case bodies lay them out."""

    raise_after = None

    def record(self, impl, case, fn, *rest, **kw):
        self.names[id(fn)] = impl  # for the time_group log
        return super().record(impl, case, fn, *rest, **kw)

    def check_rows(self, case, d, refs, row_of):
        self.checked.append(d.shape)  # the output the check was given
        return dict(OK_CHK)

    def fake_case(self, case, impls):
        for k, impl in enumerate(impls):
            if self.raise_after is not None and k == self.raise_after:
                raise RuntimeError("fake set-up failure")
            if impl in M.FP8_IMPLS:
                self.ours(case)
                continue

            def body(impl=impl):
                fn = T.call(CALL_MS[impl])
                ok = impl not in WRONG
                chk = {"ok": ok, "rel_error": 1e-3 if ok else 0.5, "max_rel_error": 1e-3 if ok else 0.5,
                       "worst_tile_error": 1e-3 if ok else 0.5, "tolerance": 5e-3}
                self.record(impl, case, fn, chk, f"fake {impl}", 1e6, flops=impl != M.DG_PAD,
                            delay_us=self.args.long_delay_us if impl in M.HOST_HEAVY else None,
                            fields={"first_call_s": 0.25})
            self.guarded(impl, case, body)

    case_contiguous = case_masked = case_wgrad = fake_case

    def ours(self, case):
        """The case's fp8gemm_* method on fake tensors of the layouts the real case bodies give it:
        quant_1x128's (q [rows, K] e4m3, scales [rows, L] f32 contiguous), quant_128x128's for B,
        viewed [G, N, K] and [G, N/128, L]; wgrad: quant_tokens_1x128's [tpad, C] codes and
        [tpad/128, C] scales, the scales transposed (strides (1, C)), the codes transposed copies."""
        G, N, K = case.G, case.N, case.K
        L = -(-K // 128)
        b_q = FakeTensor((G * N, K), E4M3).view(G, N, K)
        sfb = FakeTensor((G * N // 128, L), F32).view(G, N // 128, L)
        if case.kind == "skewed":
            a_q, sfa = FakeTensor((case.total, K), E4M3), FakeTensor((case.total, L), F32)
            self.fp8gemm_contiguous(case, a_q, sfa, b_q, sfb, None, 1e6)
        elif case.kind == "masked":
            rows = case.G * case.rows_max
            a_q2, sfa2 = FakeTensor((rows, K), E4M3), FakeTensor((rows, L), F32)
            masked_m = self.torch.tensor(case.counts, dtype=I32, device="cuda")
            self.fp8gemm_masked(case, a_q2.view(G, case.rows_max, K), sfa2, b_q, sfb, masked_m, None, 1e6)
        else:
            tpad = sum(M.align(c) for c in case.counts)
            dyq, xq = FakeTensor((tpad, N), E4M3), FakeTensor((tpad, K), E4M3)
            sfdy, sfx = FakeTensor((tpad // 128, N), F32), FakeTensor((tpad // 128, K), F32)
            d = FakeTensor((G, N, K), F32)
            self.fp8gemm_wgrad(case, dyq.t().contiguous(), sfdy.t(), xq.t().contiguous(), sfx.t(), d,
                               lambda out: self.check_rows(case, out, None, None), 1e6)


def run(interleave, impls=None, raise_after=None, failing_group=False, kind="skewed", fp8="fake"):
    """One case of `kind` through FakeRunner.run_case, fp8gemm as fp8gemm_package(fp8): (the output's
    entries, the time_group log as [(implementations, delays)], the runner)."""
    gpu = T.make_gpu()
    gpu.torch.cuda.empty_cache = lambda: None
    add_fake_torch(gpu.torch)
    args = types.SimpleNamespace(warmup=3, budget_ms=250.0, min_reps=10, max_reps=300, no_delay=False,
                                 interleave=interleave, cupti_launches=0, long_delay_us=LONG_DELAY_US)
    gpu.args = args
    log = []
    group = gpu.time_group  # the real one, logged

    def logged(fns, delays_us=None):
        log.append(([runner.names[id(f)] for f in fns], list(delays_us or [None] * len(fns))))
        if failing_group:
            raise RuntimeError("fake launch failure")
        return group(fns, delays_us)
    gpu.time_group = logged
    out = P.Output(None, {})
    runner = FakeRunner(gpu.torch, None, gpu, args, out, [])
    runner.names, runner.checked = {}, []
    runner.raise_after = raise_after
    case = CASES[kind]
    with fp8gemm_package(fp8, case):
        runner.fops, runner.fops_why = M.load_fops()  # as run_gpu
        with contextlib.redirect_stdout(io.StringIO()):
            ok = runner.run_case(case, list(impls or case.impls))
    assert ok
    return {b["name"].split("/")[0]: b for b in out.doc["benchmarks"]}, log, runner


def one_group(log, impls) -> bool:
    """The grouping --interleave must give: a single time_group call with these implementations, in order."""
    return len(log) == 1 and log[0][0] == list(impls)


FAILURES = []


def check(cond, what):
    """A failed check is printed and counted; the run goes on, so that one run lists them all."""
    if not cond:
        FAILURES.append(what)
        print("FAIL", what)


def main():
    case = CASES["skewed"]
    checked = [i for i in case.impls if i not in WRONG]
    delays = [LONG_DELAY_US if i in M.HOST_HEAVY else None for i in checked]

    seq, seq_log, seq_runner = run(interleave=False)
    il, il_log, il_runner = run(interleave=True)

    # The grouping, and that the check tells the two ways apart.
    check(M.FP8_CONTIG in checked, "the skewed case has fp8gemm_grouped_contiguous by default")
    check(one_group(il_log, checked), f"--interleave: one group of the checked calls: {il_log}")
    check(il_log and il_log[0][1] == delays, f"--interleave: each call keeps its delay: {il_log}")
    check(not one_group(seq_log, checked), "the grouping check must fail without --interleave")
    check(seq_log == [([i], [d]) for i, d in zip(checked, delays)], f"one after the other: {seq_log}")

    # Entries: each its own time, the same fields either way plus interleaved, the wrong one untimed.
    for impl in checked:
        a, b = seq.get(impl, {}), il.get(impl, {})
        check(abs(b.get("median_us", -1) - 1e3 * CALL_MS[impl]) < 1e-6, f"{impl}: own time interleaved: {b}")
        check(abs(a.get("median_us", -1) - 1e3 * CALL_MS[impl]) < 1e-6, f"{impl}: own time alone: {a}")
        check(b.get("interleaved") == 1.0 and a.get("interleaved") == 0.0, f"{impl}: interleaved flag")
        check(set(a) == set(b), f"{impl}: same fields: {set(a) ^ set(b)}")
        check(b.get("delay_us") == (LONG_DELAY_US if impl in M.HOST_HEAVY else None), f"{impl}: delay_us field")
        if impl not in M.FP8_IMPLS:
            check(b.get("first_call_s") == 0.25 and b.get("label") == f"fake {impl}", f"{impl}: fields and label")
    for impl in WRONG:
        check(il.get(impl, {}).get("error_occurred") is True and "median_us" not in il.get(impl, {}),
              f"{impl}: a wrong result is an error entry without a time: {il.get(impl)}")
    check(il_runner.failures == seq_runner.failures == len(WRONG), "failures counted once")
    check(il_runner.pending == [], "nothing left pending after the case")

    # A set-up failure after two implementations: those two still timed together, the rest errors.
    part, log, _ = run(interleave=True, raise_after=2)
    check(one_group(log, checked[:2]), f"checked before a set-up failure: one group: {log}")
    check(all(part[i].get("interleaved") == 1.0 for i in checked[:2]), "their entries")
    check(all("case set-up failed" in part[i].get("error", "") for i in case.impls[2:]), "the rest: errors")

    # A group of one is timed as alone (interleaved 0).
    one, log, _ = run(interleave=True, impls=[M.TORCH_GMM])
    check(one_group(log, [M.TORCH_GMM]) and one[M.TORCH_GMM].get("interleaved") == 0.0, f"group of one: {log}")

    # The group's error is every member's.
    bad, log, runner = run(interleave=True, failing_group=True)
    check(all("fake launch failure" in bad[i].get("error", "") for i in checked), "group error on every member")
    check(runner.failures == len(checked) + len(WRONG), f"group error failures: {runner.failures}")

    # This repository's ops (fake fp8gemm in sys.modules), every kind: in the case's group, own time,
    # the label of the op that ran, the output checked and poisoned, the arguments in the op's layouts.
    ops = {"skewed": (M.FP8_CONTIG, "gemm_grouped_contiguous"), "masked": (M.FP8_MASKED, "gemm_grouped_masked"),
           "wgrad": (M.FP8_WGRAD, "gemm_weight_grad")}
    for kind, (impl, op) in ops.items():
        c = CASES[kind]
        ck = [i for i in c.impls if i not in WRONG]
        del LAYOUT_ERRORS[:], OP_CALLS[:]
        e, log, runner = run(interleave=True, kind=kind)
        ours = e.get(impl, {})
        check(impl in c.impls and one_group(log, ck), f"{kind}: {impl} in the case's one group: {log}")
        check(abs(ours.get("median_us", -1) - 1e3 * CALL_MS[impl]) < 1e-6 and ours.get("interleaved") == 1.0,
              f"{kind}: {impl}: own time, interleaved: {ours}")
        check(ours.get("label", "").startswith(f"fp8gemm.ops.{op} ") and "NaN-poisoned" in ours["label"] and
              ours.get("output_poisoned") == 1.0 and isinstance(ours.get("first_call_s"), float),
              f"{kind}: {impl}: label, output_poisoned, first_call_s: {ours}")
        check(e.get(impl, {}).get("name", "").startswith(f"{impl}/{c.cid}/"), f"{kind}: benchmark name")
        want = {"skewed": (c.total, c.N), "masked": (c.G * c.rows_max, c.N), "wgrad": (c.G, c.N, c.K)}[kind]
        check(runner.checked == [want], f"{kind}: the op's output checked (shapes {runner.checked})")
        check(OP_CALLS and set(OP_CALLS) == {op}, f"{kind}: only {op} called: {set(OP_CALLS)}")
        check(not LAYOUT_ERRORS, f"{kind}: {op}'s arguments in the op's layouts: {LAYOUT_ERRORS}")
        check(all(e.get(i, {}).get("interleaved") == 1.0 for i in ck), f"{kind}: the peers in the group too")
        alone, log, _ = run(interleave=False, kind=kind)
        check([impl] in [n for n, _ in log] and alone.get(impl, {}).get("interleaved") == 0.0,
              f"{kind}: {impl} alone without --interleave: {log}")

    # fp8gemm not importable, or without its compiled ops: error entries that say why, no time; the
    # peers still timed in one group; the failure counted once.
    peers = [i for i in checked if i not in M.FP8_IMPLS]
    for fp8, why in (("missing", "fp8gemm not importable"), ("no_ops", "fake: _C.so does not exist")):
        e, log, runner = run(interleave=True, fp8=fp8)
        ours = e.get(M.FP8_CONTIG, {})
        check(ours.get("error_occurred") is True and "median_us" not in ours and
              ours.get("error", "").startswith("RuntimeError: fp8gemm skipped: ") and why in ours["error"],
              f"fp8gemm {fp8}: an error entry saying why: {ours}")
        check(runner.fops is None and why in runner.fops_why, f"fp8gemm {fp8}: load_fops: {runner.fops_why}")
        check(one_group(log, peers), f"fp8gemm {fp8}: the peers still one group: {log}")
        check(runner.failures == len(WRONG) + 1, f"fp8gemm {fp8}: failures {runner.failures}")
    with fp8gemm_package("fake", case):
        fops, what = M.load_fops()
    check(fops is not None and "0.0-fake" in what and "fake-lib" in what, f"load_fops: {what}")

    print("peers_moe interleave:", "FAILED" if FAILURES else "all checks passed")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
