"""stage1's Value and backward: what the shared op table cannot express."""
import math

import numpy as np
import pytest

from stage1_scalargrad import Value, add, mul
from stage1_scalargrad.backward import topological_order

pytestmark = pytest.mark.stage1


def test_thesis_chain_example():
    a, b, d = Value(2), Value(4), Value(2)
    c = a * b
    e = c ** d
    e.backward()
    assert (a.grad, b.grad, c.grad, e.grad) == (64.0, 32.0, 16.0, 1.0)
    assert d.grad == pytest.approx(64 * math.log(8), rel=1e-15)    # d/db a^b = a^b ln a


@pytest.mark.parametrize("expr, expected_value, expected_grad", [
    (lambda x: 2 + x, 5.0, 1.0), (lambda x: x + 2, 5.0, 1.0),
    (lambda x: 2 - x, -1.0, -1.0), (lambda x: x - 2, 1.0, 1.0),
    (lambda x: 2 * x, 6.0, 2.0), (lambda x: x * 2, 6.0, 2.0),
    (lambda x: 6 / x, 2.0, -6 / 9), (lambda x: x / 2, 1.5, 0.5),
    (lambda x: x ** 2, 9.0, 6.0), (lambda x: 2 ** x, 8.0, 8 * math.log(2)),
    (lambda x: -x, -3.0, -1.0),
])
def test_plain_numbers_on_either_side(expr, expected_value, expected_grad):
    x = Value(3)
    y = expr(x)
    y.backward()
    assert y.data == pytest.approx(expected_value)
    assert x.grad == pytest.approx(expected_grad)


def test_shared_subexpression_accumulates():
    x = Value(3.0)
    y = x * x + x          # x read three times
    y.backward()
    assert x.grad == 2 * 3.0 + 1


def test_same_value_twice_in_nary_ops():
    x = Value(1.5)
    add(x, x, x).backward()
    assert x.grad == 3.0
    x.grad = 0.0
    mul(x, x, x).backward()
    assert x.grad == pytest.approx(3 * 1.5 ** 2)


@pytest.mark.parametrize("values", [[0.0, 2.0, 3.0], [2.0, 0.0, 3.0], [0.0, 0.0, 5.0], [1.5, -2.0, 4.0]])
def test_nary_mul_gradient_with_zeros(values):
    xs = [Value(v) for v in values]
    mul(*xs).backward()
    for i, x in enumerate(xs):
        others = np.prod([v for j, v in enumerate(values) if j != i])
        assert x.grad == others        # exact: no division by the (possibly zero) input


def test_backward_twice_accumulates_on_leaves_only():
    x = Value(2.0)
    h = x * 3
    y = h * h
    y.backward()
    assert (x.grad, h.grad) == (36.0, 12.0)
    y.backward()
    assert x.grad == 72.0              # leaves accumulate, as in PyTorch
    assert h.grad == 12.0              # outputs of operations show the latest pass


def test_zero_grad_clears_the_whole_graph():
    x = Value(2.0)
    y = (x * x).tanh()
    y.backward()
    y.zero_grad()
    assert all(v.grad == 0.0 for v in topological_order(y))


def test_topological_order_puts_inputs_first():
    x = Value(1.0)
    a = x * 2
    b = a + x
    c = b * a
    order = topological_order(c)
    position = {v: i for i, v in enumerate(order)}
    assert len(order) == len(set(order)) == 5           # x, the constant 2, a, b, c: each once
    for v in order:
        assert all(position[i] < position[v] for i in v.inputs)


@pytest.mark.slow          # seconds of whole runs or compiles: make test-slow
def test_million_node_chain_backpropagates_and_frees():
    x = Value(1.0)
    y = x
    for _ in range(1_000_000):
        y = -y                                 # d y / d x = (-1)^n
    y.backward()
    assert x.grad == 1.0
    del y                                      # freeing a long chain must not overflow the C stack


def test_exponent_gradient_at_zero_and_negative_base():
    b = Value(2.0)
    (Value(0.0) ** b).backward()
    assert b.grad == 0.0                       # limit of a^b ln a at a -> 0+
    b = Value(2.0)
    (Value(-3.0) ** b).backward()
    assert math.isnan(b.grad)                  # no real derivative in the exponent


def test_numpy_scalars_are_accepted():
    assert Value(np.float32(1.5)).data == 1.5
    assert type(Value(np.int64(3)).data) is float
