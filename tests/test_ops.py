"""Every op of the table, on every engine: forward against numpy, backward against central
differences, at fixed points and at points hypothesis picks."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from .engines import ENGINES, engine_params
from .gradcheck import gradcheck
from .optable import LAYOUTS, OPS, ops_for

CASES = [pytest.param(engine, op, marks=p.marks, id=f"{engine.name}-{op.name}")
         for p in engine_params() for engine in p.values for op in ops_for(engine)]


def shape_for(engine):
    return () if engine.scalar_only else (2, 3)


def sample_inputs(op, engine, rng, n_ary=3):
    shape = shape_for(engine)
    if op.shapes is not None:
        return [d.sample(rng, s) for d, s in zip(op.domains, op.shapes)]
    if op.arity == -1:
        return [op.domains[0].sample(rng, shape) for _ in range(n_ary)]
    return [d.sample(rng, shape) for d in op.domains]


@pytest.mark.parametrize("engine, op", CASES)
def test_forward_matches_numpy(engine, op):
    rng = np.random.default_rng(1)
    for _ in range(5):
        inputs = sample_inputs(op, engine, rng)
        out = op.apply(engine.namespace, *[engine.leaf(a) for a in inputs])
        np.testing.assert_allclose(engine.value(out), op.reference(*inputs), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("engine, op", CASES)
def test_gradient_matches_central_differences(engine, op):
    rng = np.random.default_rng(2)
    for _ in range(5):
        inputs = sample_inputs(op, engine, rng)
        gradcheck(engine, lambda *xs: op.apply(engine.namespace, *xs), inputs, rng, reference=op.reference)


# An op with fixed input shapes (the tensor ops: convolutions, attention, linear algebra, ...)
# varies only in its random values here, which the fixed-point test above samples five times
# too: a few examples more cover it, and the suite keeps its time budget as the table grows.
# The others get the profile's count.
FIXED_SHAPE_EXAMPLES = 4


@pytest.mark.parametrize("engine, op", CASES)
def test_gradient_property(engine, op):
    examples = settings.default.max_examples

    @settings(max_examples=min(examples, FIXED_SHAPE_EXAMPLES) if op.shapes else examples)
    @given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 6))
    def check(seed, n):
        rng = np.random.default_rng(seed)
        inputs = sample_inputs(op, engine, rng, n_ary=n)
        gradcheck(engine, lambda *xs: op.apply(engine.namespace, *xs), inputs, rng, reference=op.reference)
    check()


LAYOUT_CASES = [pytest.param(engine, op, layout, marks=p.marks, id=f"{engine.name}-{op.name}-{layout}")
                for p in engine_params() for engine in p.values if not engine.scalar_only
                for op in ops_for(engine) for layout in LAYOUTS]


@pytest.mark.parametrize("engine, op, layout", LAYOUT_CASES)
def test_non_contiguous_inputs(engine, op, layout):
    rng = np.random.default_rng(3)
    inputs = sample_inputs(op, engine, rng)
    relayout = LAYOUTS[layout]

    def fn(*xs):
        return op.apply(engine.namespace, *[relayout(x) if x.ndim else x for x in xs])

    gradcheck(engine, fn, inputs, rng, reference=op.reference)


@pytest.mark.parametrize("engine", [p for p in engine_params() if not p.values[0].scalar_only])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_layouts_are_really_non_contiguous(engine, layout):
    x = engine.leaf(np.arange(6.0).reshape(2, 3))
    view = LAYOUTS[layout](x)
    assert not view.is_contiguous()
    np.testing.assert_array_equal(engine.value(view), np.arange(6.0).reshape(2, 3))


def test_every_engine_runs_some_op():
    assert all(ops_for(e) for e in ENGINES)


@st.composite
def broadcast_pairs(draw):
    """Two shapes that broadcast: a random shape, and a suffix of it with some sizes 1."""
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=3)))
    suffix = shape[draw(st.integers(0, len(shape))):]
    other = tuple(draw(st.sampled_from([1, n])) for n in suffix)
    return (shape, other) if draw(st.booleans()) else (other, shape)


BROADCAST_OPS = [op for op in OPS if op.name in ("add", "sub", "mul", "div", "pow")]


@pytest.mark.parametrize("engine", [p for p in engine_params() if not p.values[0].scalar_only])
@pytest.mark.parametrize("op", BROADCAST_OPS, ids=lambda op: op.name)
@given(shapes=broadcast_pairs(), seed=st.integers(0, 2**32 - 1))
def test_broadcast_gradients_property(engine, op, shapes, seed):
    rng = np.random.default_rng(seed)
    inputs = [d.sample(rng, s) for d, s in zip(op.domains, shapes)]
    gradcheck(engine, lambda *xs: op.apply(engine.namespace, *xs), inputs, rng, reference=op.reference)


UNARY_CASES = [pytest.param(engine, op, marks=p.marks, id=f"{engine.name}-{op.name}")
               for p in engine_params() for engine in p.values if not engine.scalar_only
               for op in ops_for(engine) if op.arity == 1 and op.shapes is None]


@pytest.mark.parametrize("engine, op", UNARY_CASES)
def test_expanded_inputs(engine, op):
    """An op reading a stride-0 view sees repeated elements; their gradients add up."""
    rng = np.random.default_rng(4)
    x = op.domains[0].sample(rng, (1, 3))

    def fn(leaf):
        view = leaf.expand(2, 3)
        assert view.strides[0] == 0
        return op.apply(engine.namespace, view)

    value = gradcheck(engine, fn, [x], rng)
    np.testing.assert_allclose(value, op.reference(np.broadcast_to(x, (2, 3))), rtol=1e-12, atol=1e-12)
