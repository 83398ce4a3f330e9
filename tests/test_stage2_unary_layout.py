"""Chapter 1's two demonstrations: the thesis's index constraining (broadcast.py) and its
two unary-operation layouts (unary_layout.py), checked against numpy."""
import math

import numpy as np
import pytest

import stage2_tensor as tg
from stage2_tensor.broadcast import broadcast_shapes, broadcast_strides, constrained_flat_index
from stage2_tensor.strides import flat_index
from stage2_tensor.unary_layout import is_dense, jumps, keep_layout, read_positions, row_major


@pytest.fixture(autouse=True)
def on_python():
    """The layouts are a demonstration of the python device's buffers, as chapter 1 runs them."""
    with tg.device("python"):
        yield


@pytest.mark.parametrize("shape, target", [((3, 1), (2, 3, 4)), ((4,), (2, 3, 4)), ((), (2, 3)),
                                           ((1, 1), (3, 2)), ((2, 3, 4), (2, 3, 4))])
def test_constrained_index_is_the_flat_index_with_zero_strides(shape, target):
    t = tg.arange(int(np.prod(shape)) + 2)[2:].reshape(*shape)      # offset 2
    stretched = broadcast_strides(t.shape, t.strides, target)
    reference = np.broadcast_to(np.arange(2, 2 + int(np.prod(shape))).reshape(shape), target)
    buffer = list(t.storage.buffer)
    assert broadcast_shapes(shape, target) == target
    for index in np.ndindex(*target):
        k = constrained_flat_index(index, t.shape, t.strides, t.offset)
        assert k == flat_index(index, stretched, t.offset)
        assert buffer[k] == reference[index]


def test_constrained_index_refuses_what_does_not_broadcast():
    with pytest.raises(ValueError, match="does not broadcast"):
        constrained_flat_index((3,), (2,), (1,))          # modulo would tile silently
    with pytest.raises(ValueError, match="at most as many dimensions"):
        constrained_flat_index((1,), (2, 1), (1, 1))
    with pytest.raises(TypeError, match="expected ints"):
        constrained_flat_index((1.0,), (2,), (1,))


@pytest.mark.parametrize("make", [lambda: tg.arange(12.0).reshape(3, 4),
                                  lambda: tg.arange(12.0).reshape(3, 4).T,
                                  lambda: tg.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1)])
def test_both_layouts_give_exp_of_every_element(make):
    t = make()
    expected = np.exp(t.numpy().astype(np.float64))
    kept, ordered = keep_layout(math.exp, t), row_major(math.exp, t)
    np.testing.assert_allclose(kept.result.numpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(ordered.result.numpy(), expected, rtol=1e-6)
    assert kept.result.strides == t.strides and ordered.result.is_contiguous()
    assert jumps(kept.reads) == jumps(kept.writes) == jumps(ordered.writes) == 0


def test_the_jumps_move_from_the_operation_to_its_reader():
    t = tg.arange(12.0).reshape(3, 4).T                       # shape (4, 3), strides (1, 4)
    kept, ordered = keep_layout(math.exp, t), row_major(math.exp, t)
    assert jumps(ordered.reads) == jumps(read_positions(t)) == 11
    assert jumps(read_positions(kept.result)) == 11
    assert jumps(read_positions(ordered.result)) == 0


def test_keep_layout_refuses_slices_and_broadcasts():
    t = tg.arange(12.0).reshape(3, 4)
    assert is_dense(t) and is_dense(t.T) and not is_dense(t[:, 1:])
    for view in (t[:, 1:], tg.tensor([1.0, 2.0]).expand(3, 2)):
        with pytest.raises(ValueError, match="only row_major"):
            keep_layout(math.exp, view)
    np.testing.assert_allclose(row_major(math.exp, t[:, 1:]).result.numpy(),
                               np.exp(t.numpy()[:, 1:]), rtol=1e-6)
    with pytest.raises(TypeError, match="float32 or float64"):
        row_major(math.exp, tg.arange(3))
    with pytest.raises(TypeError, match="expected a Tensor"):
        keep_layout(math.exp, [1.0])
