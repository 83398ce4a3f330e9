"""Random expression DAGs with shared subexpressions (a node read by several later nodes,
or twice by one), checked against central differences on every engine."""
import numpy as np
import pytest
from hypothesis import assume, given, strategies as st

from .engines import engine_params
from .gradcheck import gradcheck

UNARY = {
    "neg": (lambda x: -x, np.negative),
    "exp": (lambda x: x.exp(), np.exp),
    "tanh": (lambda x: x.tanh(), np.tanh),
    "sigmoid": (lambda x: x.sigmoid(), lambda x: 1 / (1 + np.exp(-x))),
    "relu": (lambda x: x.relu(), lambda x: np.maximum(x, 0)),
    "log": (lambda x: x.log(), np.log),
}
BINARY = {
    "add": (lambda a, b: a + b, np.add),
    "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply),
    "div": (lambda a, b: a / b, np.divide),
}


@st.composite
def programs(draw):
    """A list of (op, argument indices); index i < n_inputs names an input, larger ones
    name earlier steps. Arguments are drawn with replacement, so sharing is common."""
    n_inputs = draw(st.integers(1, 3))
    steps = []
    for k in range(draw(st.integers(2, 8))):
        available = n_inputs + k
        if draw(st.booleans()):
            steps.append((draw(st.sampled_from(sorted(UNARY))), (draw(st.integers(0, available - 1)),)))
        else:
            args = (draw(st.integers(0, available - 1)), draw(st.integers(0, available - 1)))
            steps.append((draw(st.sampled_from(sorted(BINARY))), args))
    return n_inputs, steps


def run(program, inputs, numpy=False):
    n_inputs, steps = program
    values = list(inputs)
    for name, args in steps:
        fns = UNARY.get(name) or BINARY[name]
        values.append(fns[1 if numpy else 0](*[values[i] for i in args]))
    # The output adds the last step to every earlier one, so all of them feed the gradient.
    out = values[-1]
    for v in values[n_inputs:-1]:
        out = out + v
    return out


def well_conditioned(program, inputs):
    """Finite differences need every intermediate value finite and every op away from its
    singularities (log of ~0, division by ~0, the relu kink)."""
    n_inputs, steps = program
    values = list(inputs)
    with np.errstate(all="ignore"):
        for name, args in steps:
            xs = [values[i] for i in args]
            if name == "log" and np.any(xs[0] < 0.1):
                return False
            if name == "div" and np.any(np.abs(xs[1]) < 0.1):
                return False
            if name == "relu" and np.any(np.abs(xs[0]) < 1e-3):
                return False
            fns = UNARY.get(name) or BINARY[name]
            values.append(fns[1](*xs))
            if not np.all(np.isfinite(values[-1])) or np.any(np.abs(values[-1]) > 1e4):
                return False
    return True


@pytest.mark.parametrize("engine", engine_params())
@given(program=programs(), seed=st.integers(0, 2**32 - 1))
def test_random_dag_gradients(engine, program, seed):
    rng = np.random.default_rng(seed)
    shape = () if engine.scalar_only else (3,)
    inputs = [rng.uniform(-2, 2, size=shape) for _ in range(program[0])]
    assume(well_conditioned(program, inputs))
    value = gradcheck(engine, lambda *xs: run(program, xs), inputs, rng, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(value, run(program, inputs, numpy=True), rtol=1e-10, atol=1e-10)
