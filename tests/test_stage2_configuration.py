"""PyTorch's settings and queries (stage2_tensor/configuration.py) and its other factories
(factory_aliases.py): the default dtype reaching the factories, promotion and repr; threads;
the kept switches; is_tensor, result_type, promote_types, can_cast, iinfo, typename;
empty_like, empty_strided, scalar_tensor, asarray, broadcast_shapes, broadcast_tensors."""
import numpy as np
import pytest

import stage2_tensor as tg
import stage2_tensor.nn as nn

pytestmark = pytest.mark.stage2


@pytest.fixture
def float64_default():
    tg.set_default_dtype(tg.float64)
    yield
    tg.set_default_dtype(tg.float32)


def test_default_dtype_reaches_factories_promotion_and_repr(float64_default):
    assert tg.get_default_dtype() is tg.float64
    made = [tg.tensor([1.5]), tg.zeros(2), tg.ones(2), tg.empty(2), tg.rand(2), tg.randn(2), tg.arange(0.0, 1.0),
            tg.linspace(0, 1, 3), tg.eye(2), tg.tensor([1]) * 2.5, tg.scalar_tensor(3), nn.Linear(2, 2).weight]
    assert all(t.dtype is tg.float64 for t in made)
    assert tg.tensor([1]).dtype is tg.int64 and (tg.ones(1, dtype=tg.float32) * 2.5).dtype is tg.float32
    assert "dtype" not in repr(tg.ones(1)) and "dtype=tracegrad.float32" in repr(tg.ones(1, dtype=tg.float32))


def test_default_dtype_must_be_a_float():
    with pytest.raises(TypeError, match="only floating-point types are supported as the default type"):
        tg.set_default_dtype(tg.int64)
    assert tg.get_default_dtype() is tg.float32 and tg.zeros(1).dtype is tg.float32


def test_threads():
    n = tg.get_num_threads()
    assert n >= 1
    tg.set_num_threads(1)
    try:
        assert tg.get_num_threads() == 1
    finally:
        tg.set_num_threads(n)
    assert tg.get_num_threads() == n
    with pytest.raises(RuntimeError, match="set_num_threads expects a positive integer, got 0"):
        tg.set_num_threads(0)
    tg.set_num_interop_threads(2)
    assert tg.get_num_interop_threads() == 2
    with pytest.raises(RuntimeError, match="positive integer"):
        tg.set_num_interop_threads(-1)


def test_switches_are_kept_and_answered():
    tg.use_deterministic_algorithms(True, warn_only=True)
    assert tg.are_deterministic_algorithms_enabled() and tg.is_deterministic_algorithms_warn_only_enabled()
    tg.use_deterministic_algorithms(False)
    assert not tg.are_deterministic_algorithms_enabled()
    assert tg.get_float32_matmul_precision() == "highest"
    tg.set_float32_matmul_precision("high")
    assert tg.get_float32_matmul_precision() == "high"
    tg.set_float32_matmul_precision("highest")
    with pytest.raises(ValueError, match="expected 'highest', 'high' or 'medium', got 'x'"):
        tg.set_float32_matmul_precision("x")


def test_type_queries_as_pytorch():
    assert tg.is_tensor(tg.ones(1)) and not tg.is_tensor(1.0) and not tg.is_complex(tg.ones(1))
    assert tg.is_floating_point(tg.ones(1)) and not tg.is_floating_point(tg.tensor([1]))
    assert tg.result_type(tg.tensor([1]), 2.5) is tg.float32 and tg.result_type(2, 3.0) is tg.float32
    assert tg.result_type(tg.tensor([1], dtype=tg.int8), tg.tensor([1], dtype=tg.int16)) is tg.int16
    assert tg.promote_types(tg.uint8, tg.int8) is tg.int16 and tg.promote_types(tg.int64, tg.float16) is tg.float16
    assert tg.can_cast(tg.int64, tg.float32) and tg.can_cast(tg.bool, tg.uint8) and tg.can_cast(tg.float32, tg.float16)
    assert not tg.can_cast(tg.float32, tg.int32) and not tg.can_cast(tg.int8, tg.bool)
    for dtype, (lo, hi) in {tg.int8: (-128, 127), tg.uint8: (0, 255), tg.int16: (-2 ** 15, 2 ** 15 - 1),
                            tg.int32: (-2 ** 31, 2 ** 31 - 1), tg.int64: (-2 ** 63, 2 ** 63 - 1)}.items():
        info = tg.iinfo(dtype)
        assert (info.min, info.max, info.bits) == (lo, hi, dtype.itemsize * 8)
        assert (info.min, info.max) == (np.iinfo(dtype.name).min, np.iinfo(dtype.name).max)
    with pytest.raises(TypeError, match="iinfo\\(\\) requires an integer input type"):
        tg.iinfo(tg.float32)
    assert tg.typename(tg.zeros(1, dtype=tg.float64)) == "torch.DoubleTensor" and tg.typename(3) == "int"
    assert tg.typename(nn.Linear(1, 1)).endswith(".Linear")


def test_factories_of_other_names():
    x = tg.ones(2, 3, dtype=tg.float64)
    like = tg.empty_like(x)
    assert like.shape == (2, 3) and like.dtype is tg.float64 and like.device == x.device
    strided = tg.empty_strided((2, 3), (1, 2))
    assert strided.shape == (2, 3) and strided.stride() == (1, 2) and strided.storage_offset() == 0
    with pytest.raises(RuntimeError, match="mismatch in length of strides and shape"):
        tg.empty_strided((2, 3), (1,))
    assert tg.scalar_tensor(3).shape == () and tg.scalar_tensor(3).item() == 3.0
    assert tg.asarray(x) is x and tg.asarray(x, copy=True) is not x and tg.asarray([1, 2]).dtype is tg.int64
    np.testing.assert_array_equal(tg.asarray(np.arange(3.0)).numpy(), np.arange(3.0))
    with pytest.raises(ValueError, match="copy=False"):
        tg.asarray(x, dtype=tg.float32, copy=False)
    assert tg.broadcast_shapes((2, 1), (1, 3), 3) == (2, 3) == np.broadcast_shapes((2, 1), (1, 3), (3,))
    with pytest.raises(RuntimeError, match="cannot be broadcast"):
        tg.broadcast_shapes((2,), (3,))
    a, b = tg.broadcast_tensors(tg.ones(2, 1), tg.arange(3))
    assert a.shape == b.shape == (2, 3)
    np.testing.assert_array_equal(b.numpy(), np.broadcast_to(np.arange(3), (2, 3)))
