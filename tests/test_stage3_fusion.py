"""Fusion on device "cpu:lazy" (chapter 11, lazy execution and kernel fusion): known graphs
run as a known number of kernels, and give device "cpu"'s eager values bit for bit (NaNs
aside: none here).

Kernels are counted with ``lazy.kernel_count()`` around the read that realizes the graph.
Every test fuses with no size threshold (``lazy.fusion(min_elements=0)``) and compiles into
one cache folder for the module.
"""
import numpy as np
import pytest

import stage2_tensor as tg
import stage3_native  # noqa: F401 - registers device "cpu" and "cpu:lazy"
from stage2_tensor import backend
from stage2_tensor.nn import functional as F
from stage3_native import lazy

pytestmark = [pytest.mark.stage3, pytest.mark.usefixtures("kernel_cache")]
RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def fuse_everything():
    with lazy.fusion(min_elements=0):
        yield


def arrays(*shapes, dtype=np.float32):
    return [RNG.standard_normal(s).astype(dtype) for s in shapes]


def both(fn, *values, grad=False):
    """fn on device "cpu" and on "cpu:lazy" (counting the kernels the lazy read runs):
    (eager result, lazy result, lazy kernels)."""
    eager = fn(*[tg.from_numpy(v, device="cpu") for v in values]).numpy()
    xs = [tg.from_numpy(v, device="cpu:lazy") for v in values]
    out = fn(*xs)
    lazy.reset_kernel_count()
    got = out.numpy()
    return eager, got, lazy.kernel_count()


def softmax(x):
    e = (x - x.max(-1, keepdim=True).values).exp()
    return e / e.sum(-1, keepdim=True)


def same(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes(), f"max difference {np.abs(got - want).max()}"


# ---- what one kernel covers -------------------------------------------------------------

def test_an_elementwise_chain_is_one_kernel():
    x, w = arrays((64, 300), (300,))
    want, got, kernels = both(lambda x, w: ((x * w + 1.0).tanh() * 2).exp(), x, w)
    same(got, want)
    assert kernels == 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_in_tensor_ops_is_one_kernel(dtype):
    (x,) = arrays((37, 1100), dtype=dtype)      # rows longer than one 1024 block
    with tg.no_grad():
        want, got, kernels = both(softmax, x)
    same(got, want)
    assert kernels == 1
    assert lazy.launched["loop"] == 1


def test_layer_norm_in_tensor_ops_is_one_kernel():
    x, w, b = arrays((48, 320), (320,), (320,))
    with tg.no_grad():
        want, got, kernels = both(lambda x, w, b: F.layer_norm_composite(x, (320,), w, b), x, w, b)
    same(got, want)
    assert kernels == 1


@pytest.mark.slow          # seconds of whole runs or compiles: make test-slow
def test_layer_norm_keeps_what_backward_needs():
    """With gradients, autograd holds every op's inputs (GradientFunction.inputs) until
    backward: the row kernel stores them all, still in one pass, and values and gradients
    are the eager ones."""
    x, w, b = arrays((16, 16), (16,), (16,))
    grads = {}
    for device in ("cpu", "cpu:lazy"):
        xs = [tg.from_numpy(v, device=device).requires_grad_() for v in (x, w, b)]
        out = F.layer_norm_composite(xs[0], (16,), xs[1], xs[2])
        if device == "cpu:lazy":
            plan = lazy.plan([out.storage.buffer.node], backend.get("cpu"))
            group = plan.steps[-1]
            assert len(plan.steps) == 1 and len(group.stored) == len(group.nodes) == 11
        (out * out).sum().backward()
        grads[device] = [out.detach().numpy()] + [t.grad.numpy() for t in xs]
    for want, got in zip(grads["cpu"], grads["cpu:lazy"]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("grad", [False, True])
def test_gelu_of_linear_is_one_matmul_with_an_epilogue(grad):
    """GELU(x @ W^T + b): TinyBLAS's product with the bias, and the activation applied to
    each block of it in the same kernel. With gradients, the product is stored too (GELU's
    backward reads it)."""
    from stage3_native.lazy import kernels
    default = kernels.EPILOGUE_MIN_BYTES
    x, w, b = arrays((96, 64), (256, 64), (256,))
    with stage3_matmul("tinyblas"), lazy.fusion(epilogue_min_bytes=0):     # this product is small
        eager = F.linear(*[tg.from_numpy(v, device="cpu") for v in (x, w, b)]).gelu(approximate="tanh").numpy()
        xs = [tg.from_numpy(v, device="cpu:lazy").requires_grad_(grad) for v in (x, w, b)]
        y = F.linear(*xs).gelu(approximate="tanh")
        plan = lazy.plan([y.storage.buffer.node], backend.get("cpu"))
        (step,) = plan.steps
        assert step.kind.name == "matmul+epilogue" and len(step.stored) == (2 if grad else 1)
        lazy.reset_kernel_count()
        got = y.detach().numpy()
    same(got, eager)
    assert lazy.kernel_count() == 1 and lazy.launched["matmul+epilogue"] == 1
    assert kernels.EPILOGUE_MIN_BYTES == default            # the with block put it back


@pytest.mark.parametrize("grad", [False, True])
def test_below_the_epilogue_threshold_the_product_runs_alone(grad, monkeypatch):
    """A product whose output is smaller than kernels.EPILOGUE_MIN_BYTES runs as the plain
    TinyBLAS call, and its GELU as its own kernel after it (as eagerly): the same values,
    bit for bit, and the same gradients as device "cpu"."""
    from stage3_native.lazy import kernels
    x, w, b = arrays((96, 64), (256, 64), (256,))
    monkeypatch.setattr(kernels, "EPILOGUE_MIN_BYTES", 96 * 256 * 4 + 1)     # one byte too many
    with stage3_matmul("tinyblas"), lazy.fusion(min_elements=0):
        ours = [tg.from_numpy(v, device="cpu").requires_grad_(grad) for v in (x, w, b)]
        eager = F.linear(*ours).gelu(approximate="tanh")
        xs = [tg.from_numpy(v, device="cpu:lazy").requires_grad_(grad) for v in (x, w, b)]
        y = F.linear(*xs).gelu(approximate="tanh")
        plan = lazy.plan([y.storage.buffer.node], backend.get("cpu"))
        assert [getattr(s, "op", None) for s in plan.steps] == ["matmul", "unary"]   # two plain nodes
        lazy.reset_kernel_count()
        same(y.detach().numpy(), eager.detach().numpy())
        assert lazy.kernel_count() == 2 and lazy.launched["matmul+epilogue"] == 0
        if grad:
            for out in (eager, y):
                (out * out).sum().backward()
            for a, c in zip(ours, xs):
                np.testing.assert_allclose(c.grad.numpy(), a.grad.numpy(), rtol=1e-5, atol=1e-5)
    monkeypatch.setattr(kernels, "EPILOGUE_MIN_BYTES", 96 * 256 * 4)         # exactly enough
    with stage3_matmul("tinyblas"), lazy.fusion(min_elements=0):
        y = F.linear(*[tg.from_numpy(v, device="cpu:lazy") for v in (x, w, b)]).gelu(approximate="tanh")
        (step,) = lazy.plan([y.storage.buffer.node], backend.get("cpu")).steps
        assert step.kind.name == "matmul+epilogue"
        y.numpy()


def test_without_tinyblas_the_matmul_runs_alone():
    x, w = arrays((32, 48), (48, 40))
    with stage3_matmul("naive"):
        want, got, kernels = both(lambda x, w: (x @ w).relu(), x, w)
    same(got, want)
    assert kernels == 2 and lazy.launched["matmul+epilogue"] == 0


# ---- what is stored, what is dropped ------------------------------------------------------

def test_a_value_only_the_kernel_reads_is_not_stored():
    (x,) = arrays((32, 256))
    y = (tg.from_numpy(x, device="cpu:lazy") * 3).exp().sqrt()
    plan = lazy.plan([y.storage.buffer.node], backend.get("cpu"))
    (group,) = plan.steps
    assert len(group.nodes) == 3 and len(group.stored) == 1
    fused_read, fused_written = plan.bytes()
    assert fused_written == x.nbytes and sum(plan.unfused) > 2 * (fused_read + fused_written)


def test_a_value_the_program_holds_is_stored_and_not_run_again():
    (x,) = arrays((32, 256))
    h = tg.from_numpy(x, device="cpu:lazy") * 3        # held by the name h
    y = h.exp()
    lazy.reset_kernel_count()
    y.numpy()
    assert lazy.kernel_count() == 1
    np.testing.assert_array_equal(h.numpy(), x * np.float32(3))
    assert lazy.kernel_count() == 1                    # h was stored by the same kernel


def test_values_never_read_never_run():
    """x.max(dim) records the argmax beside the max; nothing reads it, so it never runs."""
    (x,) = arrays((16, 100))
    t = tg.from_numpy(x, device="cpu:lazy")
    m = t.max(-1).values + 1
    lazy.reset_kernel_count()
    m.numpy()
    assert lazy.launched["reduce"] == 0 and lazy.kernel_count() == 1   # max and +1: one row kernel


# ---- canonicalization -------------------------------------------------------------------

def test_a_copy_read_back_is_the_view_it_copied():
    """t.T.contiguous() records a copy; its reader (same shape, plain layout) reads the
    transposed view instead, and canonicalization leaves the copy without readers."""
    (x,) = arrays((48, 64))
    t = tg.from_numpy(x, device="cpu:lazy")
    y = t.T.contiguous() * 2
    plan = lazy.plan([y.storage.buffer.node], backend.get("cpu"))
    assert len(plan.bypassed) == 1 and plan.dead == plan.bypassed
    np.testing.assert_array_equal(y.numpy(), x.T * np.float32(2))


def test_a_reshaped_copy_is_absorbed_by_fusion():
    """reshape of a transposed tensor to one dimension: no single view says it, so the copy
    stays a node, and fusion reads the transposed values in its reader's kernel."""
    (x,) = arrays((48, 64))
    want, got, kernels = both(lambda t: (t.T.reshape(64 * 48) * 2).exp(), x)
    same(got, want)
    assert kernels == 1 and lazy.launched["contiguous"] == 0


def test_a_copy_the_program_keeps_stays_a_copy():
    (x,) = arrays((8, 600))
    t = tg.from_numpy(x, device="cpu:lazy")
    c = t.clone()
    y = (c + 1).numpy()
    c.add_(5.0)                                      # the clone's own memory: t is unchanged
    np.testing.assert_array_equal(t.numpy(), x)
    np.testing.assert_array_equal(y, x + np.float32(1))
    np.testing.assert_array_equal(c.numpy(), x + np.float32(5))


# ---- the rules of grouping ----------------------------------------------------------------

def test_a_group_never_waits_for_its_own_output():
    """b reads a (a fused group) and m = a @ w (which reads a): b may not join a's group,
    which would then run both before and after the matmul (schedule.py would have to
    dissolve it: 5 kernels)."""
    def graph(x, w):
        a = (x * 2).exp()
        return (a + a @ w).tanh()
    a_np, w_np = arrays((64, 64), (64, 64))
    with stage3_matmul("naive"):                     # no epilogue: matmul runs alone
        want, got, kernels = both(graph, a_np, w_np)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert kernels == 3 and lazy.launched["matmul"] == 1 and lazy.launched["loop"] == 2


def test_a_reshape_between_ops_does_not_split_a_group():
    (x,) = arrays((4, 16, 96))
    want, got, kernels = both(lambda t: (t.exp().reshape(64, 96) * 2).reshape(4, 16, 96).tanh(), x)
    same(got, want)
    assert kernels == 1


def test_small_graphs_run_unfused_below_the_threshold():
    (x,) = arrays((4, 5))
    with lazy.fusion(min_elements=4096):
        want, got, kernels = both(lambda t: (t * 2).exp(), x)
    same(got, want)
    assert kernels == 2 and lazy.launched["loop"] == 0


def test_fusion_off_runs_every_node():
    (x,) = arrays((64, 300))
    with lazy.fusion(enabled=False):
        want, got, kernels = both(softmax, x)
    same(got, want)
    assert kernels == 5


def test_a_group_no_generator_takes_runs_node_by_node(monkeypatch):
    from stage3_native.lazy import kernels

    def refuse(self, spec):
        raise NotImplementedError("not this one")
    monkeypatch.setattr(kernels.Loop, "compile", refuse)
    (x,) = arrays((64, 300))
    want, got, kernels_run = both(lambda t: (t * 2).exp(), x)
    same(got, want)
    assert kernels_run == 2 and lazy.launched["loop"] == 0


# ---- a training loop --------------------------------------------------------------------

@pytest.mark.slow          # seconds of whole runs or compiles: make test-slow
def test_mlp_training_matches_eager():
    """Three SGD steps of a two-layer GELU MLP with a softmax cross-entropy written in ops:
    the same losses and weights as eager."""
    x, w1, w2 = arrays((64, 32), (32, 128), (128, 10))
    target = np.eye(10, dtype=np.float32)[RNG.integers(0, 10, 64)]
    results = {}
    for device in ("cpu", "cpu:lazy"):
        params = [tg.from_numpy(w.copy(), device=device).requires_grad_() for w in (w1, w2)]
        opt = tg.optim.SGD(params, lr=0.1)
        xs, ts = tg.from_numpy(x, device=device), tg.from_numpy(target, device=device)
        losses = []
        for _ in range(3):
            opt.zero_grad()
            h = (xs @ params[0]).gelu(approximate="tanh")
            p = softmax(h @ params[1])
            loss = -(ts * p.log()).sum() / 64
            loss.backward()
            opt.step()
            losses.append(loss.item())
        results[device] = losses, [p.detach().numpy() for p in params]
    np.testing.assert_allclose(results["cpu:lazy"][0], results["cpu"][0], rtol=1e-6)
    for want, got in zip(results["cpu"][1], results["cpu:lazy"][1]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


class stage3_matmul:
    """Device "cpu"'s matmul variant inside a with block."""

    def __init__(self, variant):
        self.variant = variant

    def __enter__(self):
        cpu = backend.get("cpu")
        self.saved, cpu.matmul_variant = cpu.matmul_variant, self.variant

    def __exit__(self, *exc):
        backend.get("cpu").matmul_variant = self.saved
