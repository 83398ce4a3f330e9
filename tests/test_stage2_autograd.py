"""stage2's autograd engine: pruning, accumulation, retain_grad, no_grad, detach, version
counters, freed graphs, and the errors a user meets."""
import importlib

import pytest

import stage2_tensor as tg
from stage2_tensor import elementwise

matmul_module = importlib.import_module("stage2_tensor.matmul")   # the module, not tg.matmul

pytestmark = pytest.mark.stage2


def leaf(*shape):
    return tg.randn(*shape, dtype=tg.float64, requires_grad=True)


def test_pruned_branches_are_never_computed(monkeypatch):
    w = leaf(3, 2)
    x = tg.randn(4, 3, dtype=tg.float64)                 # no gradient wanted
    hidden = x.exp()                                      # a branch that leads to no leaf needing grad
    calls = []
    monkeypatch.setattr(elementwise.Unary, "backward", lambda self, g: calls.append(self.op))
    real = matmul_module.matmul
    monkeypatch.setattr(matmul_module, "matmul", lambda *a, **k: calls.append("matmul") or real(*a, **k))
    loss = (hidden @ w).sum()
    calls.clear()                                         # count the backward pass only
    loss.backward()
    assert calls == ["matmul"]                            # only dL/dw; never dL/dx, never Exp
    assert w.grad.shape == (3, 2) and x.grad is None and hidden.grad is None


def test_each_function_runs_once_when_its_output_is_shared(monkeypatch):
    x = leaf(2, 2)
    shared = x.tanh()
    calls = []
    original = elementwise.Unary.backward
    monkeypatch.setattr(elementwise.Unary, "backward", lambda self, g: calls.append(self.op) or original(self, g))
    (shared * shared + shared.exp()).sum().backward()
    assert calls.count("tanh") == 1                       # gradients were summed before it ran


def test_leaf_gradients_accumulate_until_zeroed():
    x = leaf(3)
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    assert x.grad.tolist() == [5.0, 5.0, 5.0]
    x.zero_grad()
    assert x.grad is None


def test_retain_grad_keeps_an_intermediate_gradient():
    x = leaf(2, 3)
    h = x * 2
    h.retain_grad()
    (h * h).sum().backward()
    assert h.grad.tolist() == (2 * h.detach()).tolist()
    assert (x * 2).grad is None


def test_no_grad_records_nothing():
    x = leaf(2)
    with tg.no_grad():
        y = x * 2
        assert not tg.is_grad_enabled()
    assert tg.is_grad_enabled()
    assert y.grad_fn is None and not y.requires_grad


def test_detach_shares_storage_and_cuts_the_graph():
    x = leaf(2, 2)
    d = (x * 1).detach()
    assert d.grad_fn is None and not d.requires_grad
    x2 = x.detach()
    assert x2.storage is x.storage


def test_backward_with_explicit_gradient():
    x = leaf(2, 3)
    y = x * 3
    y.backward(tg.ones(2, 3, dtype=tg.float64) * 2)
    assert x.grad.tolist() == [[6.0] * 3] * 2


def test_backward_on_a_non_scalar_needs_a_gradient():
    with pytest.raises(RuntimeError, match=r"shape \(2, 3\) needs an explicit gradient"):
        (leaf(2, 3) * 2).backward()


def test_backward_gradient_of_the_wrong_shape():
    with pytest.raises(RuntimeError, match=r"gradient has shape \(3,\) but the tensor has shape \(2, 3\)"):
        (leaf(2, 3) * 2).backward(tg.ones(3, dtype=tg.float64))


def test_backward_without_grad():
    with pytest.raises(RuntimeError, match="does not require grad"):
        tg.ones(2).sum().backward()


def test_modified_after_save_raises_naming_the_op():
    w = leaf(3)
    a = tg.ones(3, dtype=tg.float64)
    y = (w * a).sum()                                     # Mul saved a
    a.add_(1)
    with pytest.raises(RuntimeError, match=r"Mul saved for its gradient was modified in place .*version 0 when saved, 1 now"):
        y.backward()


def test_in_place_on_a_parameter_needs_no_grad():
    w = leaf(3)
    with pytest.raises(RuntimeError, match=r"add_: in-place operation on a leaf tensor that requires grad.*no_grad"):
        w.add_(1)
    y = (w * w).sum()
    with tg.no_grad():
        w.sub_(0.5)                                       # what an optimizer does
    with pytest.raises(RuntimeError, match="Mul saved for its gradient was modified in place"):
        y.backward()


def test_second_backward_through_a_freed_graph():
    w = leaf(3)
    y = (w * w).sum()
    y.backward()
    with pytest.raises(RuntimeError, match=r"backward through the graph a second time.*retain_graph=True"):
        y.backward()


def test_retain_graph_allows_a_second_backward():
    w = leaf(3)
    y = (w * w).sum()
    y.backward(retain_graph=True)
    first = w.grad.tolist()
    y.backward()
    assert w.grad.tolist() == [2 * g for g in first]


def test_only_floats_require_grad():
    with pytest.raises(RuntimeError, match="only floating point tensors can require gradients.*int64"):
        tg.tensor([1, 2], requires_grad=True)


def test_shape_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match=r"shapes \(2, 3\) and \(4,\) cannot be broadcast"):
        tg.ones(2, 3) + tg.ones(4)
    with pytest.raises(ValueError, match=r"matmul: shapes \(2, 3\) and \(2, 3\) do not fit"):
        tg.ones(2, 3) @ tg.ones(2, 3)


def test_dtype_mismatch_names_both_dtypes():
    with pytest.raises(TypeError, match="float32 and tracegrad.float64"):
        tg.ones(2, 3) @ tg.ones(3, 2, dtype=tg.float64)


def test_view_of_incompatible_strides():
    x = tg.arange(6.0).reshape(2, 3).T
    with pytest.raises(RuntimeError, match=r"view: a tensor of shape \(3, 2\) with strides \(1, 3\) cannot be viewed as \(6,\).*reshape"):
        x.view(6)
    assert x.reshape(6).tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]


def test_in_place_copy_from_an_overlapping_view():
    a = tg.tensor([[1.0, 2.0], [3.0, 4.0]])
    a.copy_(a.T)
    assert a.tolist() == [[1.0, 3.0], [2.0, 4.0]]
    b = tg.arange(6.0)
    b[1:] = b[:-1]
    assert b.tolist() == [0.0, 0.0, 1.0, 2.0, 3.0, 4.0]


def test_in_place_write_into_an_expanded_view():
    r = tg.tensor([10.0, 20.0, 30.0])
    with pytest.raises(RuntimeError, match=r"copy_: this view of shape \(2, 3\) has stride 0"):
        r.expand(2, 3).copy_(tg.ones(2, 3))
    assert r.tolist() == [10.0, 20.0, 30.0]


def test_version_counter_counts_in_place_writes():
    x = tg.zeros(3)
    view = x[1:]
    x.fill_(1.0)
    view.add_(1.0)
    x[0] = 5.0
    assert x.storage.version == view.storage.version == 3
    assert x.tolist() == [5.0, 2.0, 2.0]


def test_mixed_dtypes_convert_in_their_own_graph_node():
    a = tg.tensor([1.0, 2.0], requires_grad=True)                     # float32
    b = tg.tensor([3.0, 4.0], dtype=tg.float64, requires_grad=True)
    y = a * b
    assert y.dtype is tg.float64
    assert [x.grad_fn.name if x.grad_fn else None for x in y.grad_fn.inputs] == ["Convert", None]
    y.sum().backward()
    assert (a.grad.dtype, a.grad.tolist()) == (tg.float32, [3.0, 4.0])
    assert (b.grad.dtype, b.grad.tolist()) == (tg.float64, [1.0, 2.0])


def test_slices_gradients_are_added_into_one_buffer(monkeypatch):
    """A tensor read in T slices (and whole, once) gets its gradient in one buffer of its
    size, whatever T: not one zero tensor of its size per slice. The values are the sum of
    every reader's gradient."""
    import numpy as np

    from stage2_tensor import backward
    made = []
    real = backward.zeros
    monkeypatch.setattr(backward, "zeros", lambda *a, **k: made.append(a) or real(*a, **k))
    x, w = leaf(7, 3), tg.randn(7, 3, dtype=tg.float64)
    hidden = x * 2                                               # a non-leaf, read in 7 slices and whole
    hooked = []
    hidden.register_hook(lambda g: hooked.append(g.numpy().copy()))
    loss = sum((row * w[i]).sum() for i, row in enumerate(hidden.unbind(0))) + (hidden * hidden).sum()
    direct = x.split([2, 5], 0)                                   # the leaf itself, in two slices
    loss = loss + (direct[0] * 3).sum() + direct[1].exp().sum()
    loss.backward()
    h, wn, xn = hidden.detach().numpy(), w.numpy(), x.detach().numpy()
    want_hidden = wn + 2 * h
    np.testing.assert_allclose(hooked[0], want_hidden, rtol=1e-12)
    want_x = 2 * want_hidden + np.concatenate([np.full((2, 3), 3.0), np.exp(xn[2:])])
    np.testing.assert_allclose(x.grad.numpy(), want_x, rtol=1e-12)
    assert len(made) == 2                                         # hidden's buffer and x's slices' one


def test_slices_gradients_with_create_graph_are_recorded():
    x = leaf(4, 2)
    first = sum((row * row * row).sum() for row in x.unbind(0))
    (g,) = tg.autograd.grad(first, x, create_graph=True)
    g.sum().backward()
    import numpy as np
    np.testing.assert_allclose(x.grad.numpy(), 6 * x.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("indices", [
    [(Ellipsis, 0), (Ellipsis, slice(1, 3)), (slice(None), None, -1)],     # apart: copies
    [(0,), (slice(0, 2),), (slice(None, None, 2),), (-1, Ellipsis)],       # overlapping, a step
    [(slice(1, 1),), (None, 1, slice(2, None))],                             # an empty slice
])
def test_slices_gradients_of_every_basic_index(indices):
    import numpy as np
    x = leaf(3, 4)
    hidden = x * 1.5
    weights = [tg.randn(*hidden[i].shape, dtype=tg.float64) for i in indices]
    sum((hidden[i] * w).sum() for i, w in zip(indices, weights)).backward()
    want = np.zeros((3, 4))
    for i, w in zip(indices, weights):
        view = want[i]
        view += w.numpy().reshape(view.shape)                  # basic indexing: a view of want
    np.testing.assert_allclose(x.grad.numpy(), 1.5 * want, rtol=1e-12)
