"""torch.autograd as stage2_tensor.autograd: grad against backward, backward of several roots
and into chosen inputs, custom Functions against central differences, second derivatives
(create_graph, hessian, jvp, hvp) against their closed forms, where create_graph refuses,
tensor hooks, Variable."""
import numpy as np
import pytest

import stage2_tensor as tg
from stage2_tensor import autograd
from stage2_tensor.autograd import Function, Variable, functional

from .engines import device_params

pytestmark = pytest.mark.stage2

DEVICES = device_params("python", "cpu")
X = np.array([0.5, -1.25, 2.0])
Y = np.array([1.5, 0.75, -0.5])


def leaf(a, device=None):
    return tg.tensor(np.asarray(a).tolist(), dtype=tg.float64, device=device, requires_grad=True)


def f(x, y):
    return (x * y + x.exp() * y.tanh()).sum()


@pytest.mark.parametrize("device", DEVICES)
def test_grad_equals_backward_and_writes_no_grad(device):
    x, y = leaf(X, device), leaf(Y, device)
    gx, gy = autograd.grad(f(x, y), (x, y))
    assert x.grad is None and y.grad is None
    f(x, y).backward()
    np.testing.assert_allclose(gx.numpy(), x.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gy.numpy(), y.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gx.numpy(), Y + np.exp(X) * np.tanh(Y), rtol=1e-12)


def test_grad_of_a_non_leaf_and_with_grad_outputs():
    x = leaf(X)
    h = x * 3
    (gh,) = autograd.grad((h * h).sum(), h)
    np.testing.assert_allclose(gh.numpy(), 2 * 3 * X)
    (gx,) = autograd.grad(x * 2, x, grad_outputs=tg.tensor([1.0, 2.0, 3.0], dtype=tg.float64))
    np.testing.assert_allclose(gx.numpy(), [2.0, 4.0, 6.0])


def test_grad_errors_as_pytorch():
    x, unused, plain = leaf(X), leaf(Y), tg.tensor(X.tolist())
    with pytest.raises(RuntimeError, match="index 1 appears to not have been used in the graph"):
        autograd.grad((x * 2).sum(), [x, unused])
    assert autograd.grad((x * 2).sum(), [x, unused], allow_unused=True)[1] is None
    zero = autograd.grad((x * 2).sum(), [x, unused], materialize_grads=True)[1]
    np.testing.assert_array_equal(zero.numpy(), [0.0, 0.0, 0.0])
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not require grad"):
        autograd.grad((x * 2).sum(), plain)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        autograd.grad(x * 2, x)
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        autograd.grad(plain.sum(), x)
    with pytest.raises(RuntimeError, match="Mismatch in shape: grad_output\\[0\\] has a shape of \\(2,\\)"):
        autograd.grad(x * 2, x, grad_outputs=tg.ones(2, dtype=tg.float64))


def test_backward_of_several_roots_and_into_chosen_inputs():
    x, y = leaf(X), leaf(Y)
    a, b = x * y, (x * x).sum()
    autograd.backward([a, b], [tg.ones(3, dtype=tg.float64), None])
    np.testing.assert_allclose(x.grad.numpy(), Y + 2 * X)
    x2, y2 = leaf(X), leaf(Y)
    (x2 * y2).sum().backward(inputs=[y2])
    assert x2.grad is None
    np.testing.assert_allclose(y2.grad.numpy(), X)


class ScaledCube(Function):
    @staticmethod
    def forward(ctx, x, k, y):
        ctx.save_for_backward(x, None, y)
        ctx.k = k
        return x * x * x * k + y

    @staticmethod
    def backward(ctx, grad):
        x, nothing, y = ctx.saved_tensors
        assert nothing is None and ctx.needs_input_grad == (True, False, True)
        return grad * 3 * x * x * ctx.k, None, grad


def _central(fn, a, eps=1e-6):
    out = np.zeros_like(a)
    for i in range(a.size):
        d = np.zeros_like(a)
        d.flat[i] = eps
        out.flat[i] = (fn(a + d) - fn(a - d)) / (2 * eps)
    return out


@pytest.mark.parametrize("device", DEVICES)
def test_custom_function_gradient_matches_central_differences(device):
    x, y = leaf(X, device), leaf(Y, device)
    out = ScaledCube.apply(x, 2.0, y)
    assert out.grad_fn.name == "ScaledCubeBackward"
    (out * tg.tensor([1.0, -2.0, 0.5], dtype=tg.float64, device=device)).sum().backward()
    weights = np.array([1.0, -2.0, 0.5])
    want = _central(lambda a: float((weights * (2.0 * a ** 3 + Y)).sum()), X)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(y.grad.numpy(), weights)


def test_custom_function_errors_and_outputs():
    x = leaf(X)

    class TooMany(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, grad):
            return grad, grad
    with pytest.raises(RuntimeError, match="TooManyBackward returned an incorrect number of gradients \\(expected 1, got 2\\)"):
        TooMany.apply(x).sum().backward()

    class WithIndex(Function):
        @staticmethod
        def forward(ctx, a):
            index = a.argmax()
            ctx.mark_non_differentiable(index)
            return a * 2, index

        @staticmethod
        def backward(ctx, grad, grad_index):
            return grad * 2
    out, index = WithIndex.apply(x)
    assert index.item() == 2 and not index.requires_grad
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])

    y = leaf(X)
    saved = ScaledCube.apply(y, 1.0, leaf(Y))
    with tg.no_grad():
        y.mul_(2)
    with pytest.raises(RuntimeError, match="modified in place afterwards"):
        saved.sum().backward()
    with pytest.raises(RuntimeError, match="non-static forward method is deprecated"):
        ScaledCube()(x)
    with tg.no_grad():
        assert ScaledCube.apply(x, 1.0, x).grad_fn is None


def test_create_graph_gives_second_derivatives():
    x = leaf(X)
    (g,) = autograd.grad((x * x * x + x.tanh()).sum(), x, create_graph=True)
    assert g.requires_grad
    (h,) = autograd.grad(g.sum(), x)
    t = np.tanh(X)
    np.testing.assert_allclose(h.numpy(), 6 * X - 2 * t * (1 - t * t), rtol=1e-12)


def test_create_graph_refuses_a_gradient_it_cannot_record():
    x = leaf(X)
    with pytest.raises(NotImplementedError, match="gradient of Pow is computed by a kernel"):
        autograd.grad((x ** 3).sum(), x, create_graph=True)


def test_functional_jacobian_hessian_and_products():
    x = tg.tensor(X.tolist(), dtype=tg.float64)
    J = functional.jacobian(lambda a: (a * a).cumsum(0), x)
    np.testing.assert_allclose(J.numpy(), np.tril(np.ones((3, 3))) * 2 * X)
    H = functional.hessian(lambda a: (a * a * a).sum() + (a[0] * a[1]), x)
    want = np.diag(6 * X)
    want[0, 1] = want[1, 0] = 1.0
    np.testing.assert_allclose(H.numpy(), want)
    v = tg.tensor([1.0, -1.0, 2.0], dtype=tg.float64)
    out, jv = functional.jvp(lambda a: (a * a).cumsum(0), x, v)
    np.testing.assert_allclose(jv.numpy(), J.numpy() @ v.numpy())
    np.testing.assert_allclose(out.numpy(), np.cumsum(X * X))
    _, hv = functional.hvp(lambda a: (a * a * a).sum() + (a[0] * a[1]), x, v)
    np.testing.assert_allclose(hv.numpy(), want @ v.numpy())
    _, vj = functional.vjp(lambda a: (a * a).cumsum(0), x, v)
    np.testing.assert_allclose(vj.numpy(), v.numpy() @ J.numpy())
    Ja, Jb = functional.jacobian(lambda a, b: a * b, (x, x * 2))
    np.testing.assert_allclose(Ja.numpy(), np.diag(2 * X))
    np.testing.assert_allclose(Jb.numpy(), np.diag(X))


def test_hooks_see_and_replace_gradients():
    x = leaf(X)
    seen = []
    handle = x.register_hook(lambda g: seen.append(g.numpy().copy()))
    h = x * 2
    h.register_hook(lambda g: g * 10)                   # replaces the gradient flowing on
    h.retain_grad()
    assert h.retains_grad and not x.retains_grad
    h.sum().backward()
    np.testing.assert_allclose(seen[0], [20.0, 20.0, 20.0])
    np.testing.assert_allclose(x.grad.numpy(), [20.0, 20.0, 20.0])
    np.testing.assert_allclose(h.grad.numpy(), [10.0, 10.0, 10.0])
    handle.remove()
    (x * 2).sum().backward()
    assert len(seen) == 1
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        tg.ones(2).register_hook(print)


def test_variable_is_the_tensor():
    t = tg.ones(2)
    assert Variable(t) is t and Variable(t, requires_grad=True).requires_grad
    assert isinstance(t, Variable) and not isinstance(2.0, Variable)
    with pytest.raises(TypeError, match="Variable data has to be a tensor"):
        Variable([1.0])
