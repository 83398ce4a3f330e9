"""Composite ops (stage2_tensor/composites.py) on every device: each definition, written with
primitives, gradient-checked against central differences in float64; and the public call,
which runs a device's fused kernel where it has one and the definition where it has none,
giving the definition's values and gradients."""
import numpy as np
import pytest

import stage2_tensor as tg
import stage2_tensor.nn.functional as F
from stage2_tensor import backend, composites

from .engines import ENGINES, engine_params
from .gradcheck import gradcheck

ENGINES_ = engine_params([e for e in ENGINES if e.stage != "stage1"])
TARGET = np.array([1, 0, 4, 2])             # class indices for the (4, 5) logits below


def _target(x):
    return tg.tensor(TARGET.tolist(), device=x.device)


def _ignoring(x, ignore_index):
    """TARGET with rows 1 and 3 made ignore_index."""
    return tg.tensor([1, ignore_index, 4, ignore_index], device=x.device)


# name: (the definition, the public call, how many (4, 5) float64 inputs)
COMPOSITES = {
    "gelu": (lambda x: composites.gelu(x), lambda x: F.gelu(x), 1),
    "gelu_tanh": (lambda x: composites.gelu(x, "tanh"), lambda x: F.gelu(x, approximate="tanh"), 1),
    **{f"mse_loss_{r}": ((lambda r: lambda a, b: composites.mse_loss(a, b, r))(r),
                         (lambda r: lambda a, b: F.mse_loss(a, b, reduction=r))(r), 2)
       for r in ("none", "sum", "mean")},
    **{f"cross_entropy_{r}": ((lambda r: lambda x: composites.cross_entropy(x, _target(x), r))(r),
                              (lambda r: lambda x: F.cross_entropy(x, _target(x), reduction=r))(r), 1)
       for r in ("none", "sum", "mean")},
    # ignored rows: PyTorch's default -100, and a class (0) as ignore_index
    **{f"cross_entropy_ignore_{i}_{r}": (
        (lambda r, i: lambda x: composites.cross_entropy(x, _ignoring(x, i), r, i))(r, i),
        (lambda r, i: lambda x: F.cross_entropy(x, _ignoring(x, i), reduction=r, ignore_index=i))(r, i), 1)
       for r in ("none", "sum", "mean") for i in (-100, 0)},
}


def inputs(n):
    rng = np.random.default_rng(0)
    return [rng.uniform(-3, 3, size=(4, 5)) for _ in range(n)]


@pytest.mark.parametrize("name", COMPOSITES)
@pytest.mark.parametrize("engine", ENGINES_)
def test_the_definition_has_the_gradient_of_its_value(engine, name):
    definition, _, n = COMPOSITES[name]
    gradcheck(engine, definition, inputs(n))


@pytest.mark.parametrize("name", COMPOSITES)
@pytest.mark.parametrize("engine", ENGINES_)
def test_the_public_call_gives_the_definitions_values_and_gradients(engine, name):
    definition, public, n = COMPOSITES[name]
    results = []
    for fn in (definition, public):
        leaves = [engine.leaf(a) for a in inputs(n)]
        out = fn(*leaves)
        engine.backward(out, np.ones(engine.value(out).shape))
        results.append((engine.value(out), [engine.grad(x) for x in leaves]))
    (want, want_grads), (got, got_grads) = results
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    for g, w in zip(got_grads, want_grads):
        np.testing.assert_allclose(g, w, rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("engine", ENGINES_)
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_runs_the_fused_kernel_where_the_device_has_one(engine, approximate):
    """The python device has no fused kernels and runs GELU's definition (its last step a
    multiplication); the native devices run their fused kernel."""
    kernel = composites.gelu_op(approximate)
    has_kernel = kernel in backend.get(engine.device).fused
    assert has_kernel == (engine.device != "python")
    out = engine.leaf(inputs(1)[0]).gelu(approximate)
    assert out.grad_fn.name == ({"gelu": "Gelu", "gelu_tanh": "GeluTanh"}[kernel] if has_kernel else "Mul")


def test_cross_entropy_names_a_target_out_of_range():
    logits = tg.tensor(inputs(1)[0].tolist())
    with pytest.raises(IndexError, match="target 7 at position 2 is not a class index: the logits have 5"):
        composites.cross_entropy(logits, tg.tensor([1, 0, 7, 2]), "mean")
    with pytest.raises(IndexError, match="target -1 at position 0"):
        composites.cross_entropy(logits, tg.tensor([-1, 0, 3, 2]), "mean")
    with pytest.raises(IndexError, match="target -1 at position 2"):     # not the ignored -100
        composites.cross_entropy(logits, tg.tensor([-100, 0, -1, 2]), "mean", -100)
    assert np.isnan(composites.cross_entropy(logits, tg.tensor([-100] * 4), "mean", -100).item())
