"""Gradient checking by central differences in float64.

For inputs x_i and a fixed random upstream gradient u, the scalar L = sum(u * f(x)) has
dL/dx_i[j] ~ (L(x_i[j] + h) - L(x_i[j] - h)) / 2h, with error O(h^2). Comparing that with
what the engine's backward pass gives checks every local gradient on the way.

The differences are taken of f's numpy reference where the test has one (the op table's),
after checking that the engine's forward agrees with it at the point: the same function,
without running the engine twice per input element. Without a reference they are taken of
the engine's own forward.
"""
import numpy as np


def numerical_grads(f, inputs, upstream, h=1e-6):
    """Central differences of sum(upstream * f(*inputs)), f taking and giving float64 arrays."""
    def loss(arrays):
        return float(np.sum(upstream * f(*arrays)))

    grads = []
    for i, x in enumerate(inputs):
        g = np.zeros_like(x)
        for j in np.ndindex(x.shape):
            plus = [a.copy() for a in inputs]
            minus = [a.copy() for a in inputs]
            plus[i][j] += h
            minus[i][j] -= h
            g[j] = (loss(plus) - loss(minus)) / (2 * h)
        grads.append(g)
    return grads


def gradcheck(engine, fn, inputs, rng=None, rtol=1e-5, atol=1e-6, reference=None):
    """Assert the engine's gradients of fn at `inputs` (float64 arrays) match central
    differences (of ``reference``, numpy's fn, when given: the engine's value must match it
    first). Returns the engine's output as a float64 array."""
    rng = rng or np.random.default_rng(0)
    leaves = [engine.leaf(a) for a in inputs]
    out = fn(*leaves)
    value = engine.value(out)
    upstream = rng.uniform(0.5, 1.5, size=value.shape)
    engine.backward(out, upstream)
    analytic = [engine.grad(x) for x in leaves]
    if reference is None:
        def forward(*arrays):
            return engine.value(fn(*[engine.leaf(a) for a in arrays]))
    else:
        np.testing.assert_allclose(value, reference(*inputs), rtol=1e-12, atol=1e-12,
                                   err_msg="the value differs from numpy's")
        forward = reference
    numeric = numerical_grads(forward, inputs, upstream)
    for i, (a, n) in enumerate(zip(analytic, numeric)):
        np.testing.assert_allclose(a, n, rtol=rtol, atol=atol,
                                   err_msg=f"gradient of input {i} differs from central differences")
    return value
