"""uint8, int8 and int16 (dtypes.py: storage dtypes computed in int64, wrapped on store) on
every device, against numpy, whose fixed-width arithmetic wraps as PyTorch's does."""
import numpy as np
import pytest

import stage2_tensor as tg

from .engines import device_params

SMALL = {tg.uint8: np.uint8, tg.int8: np.int8, tg.int16: np.int16}
pytestmark = pytest.mark.stage2


def values(np_dtype, seed):
    info = np.iinfo(np_dtype)
    return np.random.default_rng(seed).integers(info.min, info.max + 1, (3, 5)).astype(np_dtype)


@pytest.mark.parametrize("device", device_params())
@pytest.mark.parametrize("dtype", list(SMALL), ids=lambda d: d.name)
def test_arithmetic_wraps_as_numpys(device, dtype):
    a, b = values(SMALL[dtype], 0), values(SMALL[dtype], 1)
    x, y = (tg.tensor(v.tolist(), dtype=dtype, device=device) for v in (a, b))
    with np.errstate(over="ignore"):
        for got, want in ((x + y, a + b), (x - y, a - b), (x * y, a * b), (-x, -a), (x.T + 1, a.T + SMALL[dtype](1)),
                          (x.max(dim=1).values, a.max(axis=1)), (x[:, ::2], a[:, ::2])):
            assert got.dtype is dtype and got.device == device
            np.testing.assert_array_equal(got.numpy(), want)
    assert x.sum().dtype is tg.int64 and x.sum().item() == int(a.astype(np.int64).sum())
    np.testing.assert_array_equal((x < y).numpy(), a < b)
    np.testing.assert_allclose((x / 3).numpy(), a / np.float32(3), rtol=1e-6)


@pytest.mark.parametrize("device", device_params())
def test_conversions_keep_the_low_bits(device):
    big = np.array([70000, -1, 255, 256, -129, 2**40 + 5], dtype=np.int64)
    t = tg.tensor(big.tolist(), device=device)
    for dtype, np_dtype in SMALL.items():
        np.testing.assert_array_equal(t.to(dtype).numpy(), big.astype(np_dtype))
        np.testing.assert_array_equal(t.to(dtype).long().numpy(), big.astype(np_dtype).astype(np.int64))
        np.testing.assert_array_equal(t.to(dtype).float().numpy(), big.astype(np_dtype).astype(np.float32))
    assert tg.full((2,), 300, dtype=tg.uint8, device=device).tolist() == [44, 44]
    assert tg.tensor([3, 0], dtype=tg.uint8, device=device).bool().tolist() == [True, False]


def test_promotion_as_pytorchs():
    u, i8, i16 = (tg.zeros(1, dtype=d) for d in (tg.uint8, tg.int8, tg.int16))
    assert (u + i8).dtype is tg.int16 and (u + i16).dtype is tg.int16 and (i8 + i16).dtype is tg.int16
    assert (u + tg.zeros(1, dtype=tg.int32)).dtype is tg.int32 and (u + 1).dtype is tg.uint8
    assert (u + 1.5).dtype is tg.float32 and (u + tg.zeros(1, dtype=tg.bool)).dtype is tg.uint8
    assert tg.ByteTensor([1, 2]).dtype is tg.uint8 and tg.tensor([1]).short().type() == "torch.ShortTensor"


@pytest.mark.parametrize("device", device_params("python", "cpu"))
def test_numpy_both_ways(device):
    a = np.arange(250, 256, dtype=np.uint8)
    t = tg.from_numpy(a, device=device)
    assert t.dtype is tg.uint8 and t.numpy().dtype == np.uint8
    np.testing.assert_array_equal(t.numpy(), a)
