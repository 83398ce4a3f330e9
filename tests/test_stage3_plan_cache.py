"""The plan cache of device "cpu:lazy" (stage3_native/lazy/cache.py, chapter 11): a read
whose pending graph has the structure of one planned before runs that plan again.

A stale plan would compute wrong values silently, so every test here changes one thing the
plan depends on (a shape, a dtype, strides, an offset, an op or its attribute, an input
read twice, which values a tensor holds, which are read outside the read) and checks that
the read plans anew (a miss) and that its values are device "cpu"'s bit for bit and
numpy's within float rounding; a change the plan does not depend on (the inputs' values, a
scalar's value) must hit and still give the new values.
"""
import sys

import numpy as np
import pytest

import stage2_tensor as tg
import stage3_native  # noqa: F401 - registers device "cpu" and "cpu:lazy"
from stage2_tensor import nn, optim
from stage2_tensor.nn import functional as F
from stage3_native import lazy

pytestmark = [pytest.mark.stage3, pytest.mark.usefixtures("kernel_cache")]
CACHE = lazy.plan_cache
RNG = np.random.default_rng(11)


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch):
    from stage3_native.lazy import kernels
    monkeypatch.setattr(kernels, "EPILOGUE_MIN_BYTES", 0)      # these products are small
    lazy.realize_all()
    CACHE.clear()
    with lazy.fusion(min_elements=0):
        yield
    CACHE.clear()


def normal(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def lazy_and_eager(fn, *arrays):
    """fn on device "cpu:lazy" and on "cpu", from copies of the same arrays: (lazy numpy
    result, eager numpy result, the cache counts this read added)."""
    before = dict(CACHE.stats)
    got = fn(*[tg.from_numpy(a.copy(), device="cpu:lazy") for a in arrays]).numpy()
    counts = {k: CACHE.stats[k] - before.get(k, 0) for k in ("hit", "miss", "uncacheable")}
    want = fn(*[tg.from_numpy(a.copy(), device="cpu") for a in arrays]).numpy()
    return got, want, counts


def same(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes(), f"max difference {np.abs(got - want).max()}"


def layer_norm(x):
    return F.layer_norm_composite(x, (x.shape[-1],))


def numpy_layer_norm(x, eps=1e-5):
    x = x.astype(np.float64)
    mean = x.mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + eps)


def test_a_repeated_graph_hits_and_skips_the_passes(monkeypatch):
    x = normal(16, 32)
    got, want, counts = lazy_and_eager(layer_norm, x)
    assert counts == {"hit": 0, "miss": 1, "uncacheable": 0}
    same(got, want)
    # the second read of the same structure, new values: no pass may run
    plan_module = sys.modules["stage3_native.lazy.plan"]
    monkeypatch.setattr(plan_module, "plan", lambda *a, **k: pytest.fail("planned on a hit"))
    lazy.reset_kernel_count()
    x2 = normal(16, 32) * 3 + 1
    got, want, counts = lazy_and_eager(layer_norm, x2)
    assert counts == {"hit": 1, "miss": 0, "uncacheable": 0}
    assert lazy.kernel_count() == 1                 # the one fused row kernel, again
    same(got, want)
    np.testing.assert_allclose(got, numpy_layer_norm(x2), rtol=1e-5, atol=1e-5)


# (name, first graph, a second one differing in one thing the plan depends on)
def _scaled_exp(x):
    return (x * 2 + 1).exp()


def _sum_last(x):
    return _scaled_exp(x).sum(-1)


VARIANTS = {
    "shape": (lambda: normal(8, 32), lambda: normal(8, 48)),
    "dtype": (lambda: normal(8, 32), lambda: normal(8, 32, dtype=np.float64)),
}


@pytest.mark.slow          # seconds of compiles or runs: make test-slow
@pytest.mark.parametrize("fn", [layer_norm, _sum_last], ids=["layer_norm", "exp_sum"])
@pytest.mark.parametrize("what", ["shape", "dtype"])
def test_another_shape_or_dtype_plans_anew(what, fn):
    first, second = VARIANTS[what]
    for make, expect in ((first, "miss"), (second, "miss"), (first, "hit"), (second, "hit")):
        x = make()
        got, want, counts = lazy_and_eager(fn, x)
        same(got, want)
        assert counts[expect] == 1


def test_other_strides_and_offsets_plan_anew():
    base = normal(12, 40)

    def strided(t, transpose, start):
        v = t.transpose(0, 1) if transpose else t
        v = v[start:start + 8, :10]                     # an offset, and strides of the parent
        return (v * 2 + 1).exp().sum(-1)

    keys = set()
    for transpose in (False, True):
        for start in (0, 1, 2):
            for expect in ("miss", "hit"):
                got, want, counts = lazy_and_eager(lambda t: strided(t, transpose, start), base)
                same(got, want)
                assert counts[expect] == 1, (transpose, start, expect)
                view = base.T if transpose else base
                ref = np.exp(view[start:start + 8, :10].astype(np.float64) * 2 + 1).sum(-1)
                np.testing.assert_allclose(got, ref, rtol=1e-5)
            keys.add(next(reversed(CACHE.PLANS)))
    assert len(keys) == 6


@pytest.mark.parametrize("attribute", ["reduce_dim", "unary_op", "binary_op", "keepdim"])
def test_another_op_or_attribute_plans_anew(attribute):
    fns = {
        "reduce_dim": (lambda t: (t * t).sum(-1), lambda t: (t * t).sum(0)),
        "unary_op": (lambda t: (t * 2).exp(), lambda t: (t * 2).tanh()),
        "binary_op": (lambda t: (t * 2) + t, lambda t: (t * 2) - t),
        "keepdim": (lambda t: t - t.sum(-1, keepdim=True), lambda t: t - t.sum(0, keepdim=True)),
    }[attribute]
    x = normal(16, 16)      # square: the two graphs differ in nothing but the attribute
    for fn, expect in ((fns[0], "miss"), (fns[1], "miss"), (fns[0], "hit"), (fns[1], "hit")):
        got, want, counts = lazy_and_eager(fn, x)
        same(got, want)
        assert counts[expect] == 1


def test_a_scalars_value_is_data_not_structure():
    x = normal(8, 32)
    results = []
    for c, expect in ((2.0, "miss"), (3.0, "hit"), (-0.5, "hit")):
        got, want, counts = lazy_and_eager(lambda t: (t * c + 1).tanh(), x)
        same(got, want)
        assert counts[expect] == 1
        np.testing.assert_allclose(got, np.tanh(x.astype(np.float64) * c + 1), rtol=1e-5, atol=1e-6)
        results.append(got)
    assert not np.array_equal(results[0], results[1])


def test_dropouts_seed_is_data_not_structure():
    """Each dropout call draws a new seed: the plan is reused, each call drops its own
    elements, the ones device "cpu" drops from the same generator state."""
    x = normal(16, 32) + 3
    masks = []
    for i, expect in enumerate(("miss", "hit", "hit")):
        def fn(t):
            tg.seed(100 + i)
            return (F.dropout((t * 2).exp(), p=0.5, training=True) + 1).tanh()
        got, want, counts = lazy_and_eager(fn, x)
        same(got, want)
        assert counts[expect] == 1
        masks.append(got < 0.9)                 # dropped: tanh(0 + 1); kept: tanh of a large value
    assert not np.array_equal(masks[0], masks[1]) and 0.3 < masks[0].mean() < 0.7


def test_an_input_read_twice_is_not_two_inputs():
    x, y = normal(8, 32), normal(8, 32)
    # first a read twice (one operand, were the key blind to it), then two inputs
    cases = [(lambda a, b: (a * 2 + a).exp(), (x, y), "miss"),     # b unused: a read twice
             (lambda a, b: (a * 2 + b).exp(), (x, y), "miss"),
             (lambda a, b: (a * 2 + a).exp(), (y, x), "hit"),
             (lambda a, b: (a * 2 + b).exp(), (y, x), "hit")]
    for fn, args, expect in cases:
        got, want, counts = lazy_and_eager(fn, *args)
        same(got, want)
        assert counts[expect] == 1


def test_which_values_a_tensor_holds_is_part_of_the_key():
    """Keeping an intermediate makes the fused kernel store it: a plan made while nothing
    held it does not, so the read that keeps it must plan anew (and read it right)."""
    x = normal(8, 32)
    kept = {}

    def fn(t, keep):
        h = (t * 2 + 1).exp()
        if keep:
            kept[str(t.device)] = h
        return h.sum(-1)

    for keep, expect in ((False, "miss"), (True, "miss"), (False, "hit"), (True, "hit")):
        kept.clear()
        got, want, counts = lazy_and_eager(lambda t: fn(t, keep), x)
        same(got, want)
        assert counts[expect] == 1
        if keep:
            h_lazy = kept["cpu:lazy"]
            assert h_lazy.storage.buffer.realized     # stored by the kernel, not recomputed
            same(h_lazy.numpy(), kept["cpu"].numpy())
            np.testing.assert_allclose(h_lazy.numpy(), np.exp(x.astype(np.float64) * 2 + 1), rtol=1e-6)


def test_a_value_read_outside_the_read_is_stored():
    """c reads a but is not part of the read of b: a must be stored for it."""
    x = normal(8, 32)
    for expect in ("miss", "hit"):
        t = tg.from_numpy(x.copy(), device="cpu:lazy")
        a = (t * 2).exp()
        b = (a + 1).sum(-1)
        c = a.tanh()
        del a
        before = CACHE.stats[expect]
        got_b = b.numpy()
        assert CACHE.stats[expect] == before + 1
        e = tg.from_numpy(x.copy(), device="cpu")
        same(got_b, ((e * 2).exp() + 1).sum(-1).numpy())
        same(c.numpy(), (e * 2).exp().tanh().numpy())


def test_a_copy_bypassed_by_canonicalization_is_replayed():
    x = normal(16, 24)

    def fn(t):
        return (t.transpose(0, 1).reshape(-1) * 2).exp()   # reshape of a transpose: a copy

    for expect in ("miss", "hit", "hit"):
        got, want, counts = lazy_and_eager(fn, x)
        same(got, want)
        assert counts[expect] == 1
        x = normal(16, 24)


def test_a_matmul_epilogue_is_replayed():
    x, w, b = normal(24, 16), normal(32, 16), normal(32)
    for expect in ("miss", "hit"):
        with tg.no_grad():
            got, want, counts = lazy_and_eager(lambda x, w, b: F.linear(x, w, b).gelu(approximate="tanh"),
                                               x, w, b)
        same(got, want)
        assert counts[expect] == 1
        x = normal(24, 16)


def test_the_epilogue_threshold_is_part_of_the_key(monkeypatch):
    """kernels.EPILOGUE_MIN_BYTES decides whether a product takes its epilogue: a plan made
    under one threshold is not replayed under another (the kernels differ), and both give
    device "cpu"'s values."""
    from stage2_tensor import backend
    from stage3_native.lazy import kernels
    monkeypatch.setattr(backend.get("cpu"), "matmul_variant", "tinyblas")
    x, w, b = normal(24, 16), normal(32, 16), normal(32)
    for threshold, expect, epilogues in ((0, "miss", 1), (0, "hit", 1), (1 << 30, "miss", 0), (1 << 30, "hit", 0)):
        monkeypatch.setattr(kernels, "EPILOGUE_MIN_BYTES", threshold)
        lazy.reset_kernel_count()
        with tg.no_grad():
            got, want, counts = lazy_and_eager(lambda x, w, b: F.linear(x, w, b).gelu(approximate="tanh"),
                                               x, w, b)
        same(got, want)
        assert counts[expect] == 1 and lazy.launched["matmul+epilogue"] == epilogues


def test_a_batched_epilogue_is_replayed(monkeypatch):
    """A convolution's product, one TinyBLAS call per image with bias and ReLU as its
    epilogue (kernels.MatmulEpilogue's batched run, which reads the group's batch strides)."""
    from stage2_tensor import backend
    from stage3_native.lazy import kernels
    monkeypatch.setattr(kernels, "BATCHED_MIN", 0)
    cpu = backend.get("cpu")
    monkeypatch.setattr(cpu, "matmul_variant", "tinyblas")
    w, b = normal(6, 3, 3, 3), normal(6)
    for expect in ("miss", "hit", "hit"):
        x = normal(2, 3, 9, 8)
        lazy.reset_kernel_count()
        got, want, counts = lazy_and_eager(lambda x, w, b: F.conv2d(x, w, b, padding=1).relu(), x, w, b)
        same(got, want)
        assert counts[expect] == 1 and lazy.launched["matmul+epilogue"] == 1


@pytest.mark.slow          # seconds of compiles or runs: make test-slow
def test_training_steps_hit_and_stay_bit_identical():
    results, data = {}, normal(32, 8)
    for device in ("cpu", "cpu:lazy"):
        tg.seed(5)
        model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4)).to(device)
        opt = optim.AdamW(model.parameters(), lr=0.01)
        x = tg.from_numpy(data.copy(), device=device)
        target = tg.tensor([i % 4 for i in range(32)]).to(device)
        losses = []
        for _ in range(4):
            opt.zero_grad()
            h = F.layer_norm_composite(model(x), (4,))
            loss = F.cross_entropy(h, target)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        results[device] = losses, [p.detach().numpy().copy() for p in model.parameters()]
    assert results["cpu"][0] == results["cpu:lazy"][0]
    for a, b in zip(results["cpu"][1], results["cpu:lazy"][1]):
        same(b, a)
    assert CACHE.stats["hit"] > CACHE.stats["miss"]     # steps after the first: all hits


def test_the_cache_is_bounded(monkeypatch):
    monkeypatch.setitem(CACHE.CACHE, "size", 3)
    for n in range(2, 8):
        got, want, _ = lazy_and_eager(_scaled_exp, normal(n, 16))
        same(got, want)
    assert len(CACHE.PLANS) == 3 and CACHE.stats["miss"] == 6
    got, want, counts = lazy_and_eager(_scaled_exp, normal(2, 16))    # evicted: planned again
    assert counts["miss"] == 1
    got, want, counts = lazy_and_eager(_scaled_exp, normal(7, 16))    # the most recent: kept
    assert counts["hit"] == 1


def test_switched_off_the_values_are_the_same(monkeypatch):
    monkeypatch.setitem(CACHE.CACHE, "enabled", False)
    x = normal(8, 32)
    for _ in range(2):
        got, want, counts = lazy_and_eager(layer_norm, x)
        assert counts == {"hit": 0, "miss": 0, "uncacheable": 0}
        same(got, want)
    assert not CACHE.PLANS
