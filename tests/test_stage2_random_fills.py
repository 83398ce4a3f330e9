"""PyTorch's other random draws (stage2_tensor/random_fills.py): torch.bernoulli, torch.poisson,
randint_like and the in-place fills bernoulli_, random_, exponential_, geometric_, log_normal_
and cauchy_. Moments are checked against the distribution's within 6 standard errors of the
sample size (a fixed seed, so a pass is repeatable), ranges and dtypes as PyTorch's, the
package's seed and generator= repeating the draws, and PyTorch's errors."""
import math

import numpy as np
import pytest

import stage2_tensor as tg

from .engines import device_params

pytestmark = pytest.mark.stage2

DEVICES = device_params("python", "cpu")
N = 4000


def draws(t):
    return np.asarray(t.tolist(), dtype=np.float64).ravel()


def assert_mean(x, mean, sd, what):
    """The sample mean of x within 6 standard errors (sd / sqrt(n)) of the distribution's."""
    assert abs(x.mean() - mean) < 6 * sd / math.sqrt(x.size), f"{what}: mean {x.mean()}, expected {mean}"


def assert_variance(x, var, mu4, what):
    """The sample variance within 6 standard errors, sqrt((mu4 - var^2) / n)."""
    assert abs(x.var() - var) < 6 * math.sqrt((mu4 - var * var) / x.size), \
        f"{what}: variance {x.var()}, expected {var}"


@pytest.mark.parametrize("device", DEVICES)
def test_bernoulli_moments(device):
    tg.manual_seed(0)
    x = draws(tg.zeros(N, device=device).bernoulli_(0.3))
    assert set(x) <= {0.0, 1.0}
    assert_mean(x, 0.3, math.sqrt(0.3 * 0.7), "bernoulli_(0.3)")
    p = tg.tensor([0.1, 0.0, 1.0, 0.75], device=device)
    out = tg.bernoulli(p.expand(N // 4, 4).contiguous())
    assert out.dtype is tg.float32 and tuple(out.shape) == (N // 4, 4)
    columns = np.asarray(out.tolist())
    for j, q in enumerate((0.1, 0.0, 1.0, 0.75)):
        assert_mean(columns[:, j], q, math.sqrt(q * (1 - q)) or 1e-9, f"bernoulli column {j}")
    into = tg.zeros(N // 4, 4, dtype=tg.int64, device=device).bernoulli_(p)     # broadcast p, an int tensor
    assert into.dtype is tg.int64 and np.asarray(into.tolist())[:, 1:3].tolist() == [[0, 1]] * (N // 4)
    fixed = draws(tg.bernoulli(tg.zeros(N, dtype=tg.float64, device=device), 0.6))   # p replaces input
    assert_mean(fixed, 0.6, math.sqrt(0.24), "bernoulli(input, 0.6)")
    assert draws(tg.full((3,), 0.5, device=device).bernoulli(p=1.0)).tolist() == [1.0] * 3


@pytest.mark.parametrize("device", DEVICES)
def test_exponential_geometric_log_normal_cauchy_moments(device):
    tg.manual_seed(1)
    lam = 2.0
    x = draws(tg.empty(N, dtype=tg.float64, device=device).exponential_(lam))
    assert x.min() >= 0 and np.isfinite(x).all()
    assert_mean(x, 1 / lam, 1 / lam, "exponential_")
    assert_variance(x, 1 / lam ** 2, 9 / lam ** 4, "exponential_")

    p = 0.3
    g = draws(tg.empty(N, device=device).geometric_(p))
    assert g.min() >= 1 and (g == np.floor(g)).all()
    assert_mean(g, 1 / p, math.sqrt(1 - p) / p, "geometric_")
    ints = tg.empty(N, dtype=tg.int32, device=device).geometric_(p)
    assert ints.dtype is tg.int32 and draws(ints).min() >= 1

    y = np.log(draws(tg.empty(N, dtype=tg.float64, device=device).log_normal_(0.5, 0.25)))
    assert_mean(y, 0.5, 0.25, "log of log_normal_")
    assert_variance(y, 0.25 ** 2, 3 * 0.25 ** 4, "log of log_normal_")

    c = draws(tg.empty(N, dtype=tg.float64, device=device).cauchy_(1.0, 2.0))
    # half the draws within one sigma of the median, a quarter below median - sigma
    assert_mean(np.abs(c - 1.0) < 2.0, 0.5, 0.5, "cauchy_ within sigma")
    assert_mean(c < -1.0, 0.25, math.sqrt(0.25 * 0.75), "cauchy_ below median - sigma")


@pytest.mark.parametrize("device", DEVICES)
def test_poisson_moments_both_samplers(device):
    tg.manual_seed(2)
    n = N // 2 if device != "python" else N // 16       # python's loops: fewer, the same checks
    rates = tg.tensor([[0.0, 2.5, 40.0, math.inf]], dtype=tg.float64, device=device).expand(n, 4).contiguous()
    counts = np.asarray(tg.poisson(rates).tolist())
    assert (counts[:, 0] == 0).all() and (counts[:, 3] == math.inf).all()
    for j, rate in ((1, 2.5), (2, 40.0)):                 # inversion, and PTRS's rejection
        c = counts[:, j]
        assert (c >= 0).all() and (c == np.floor(c)).all()
        assert_mean(c, rate, math.sqrt(rate), f"poisson({rate})")
        assert_variance(c, rate, rate + 3 * rate * rate, f"poisson({rate})")
    assert tg.poisson(tg.tensor([1.0], device=device)).dtype is tg.float32


@pytest.mark.parametrize("device", DEVICES)
def test_random_ranges_and_dtypes(device):
    tg.manual_seed(3)
    x = draws(tg.zeros(N, device=device).random_(3, 9))
    assert x.min() == 3 and x.max() == 8 and (x == np.floor(x)).all()
    assert_mean(x, 5.5, math.sqrt(35 / 12), "random_(3, 9)")
    assert draws(tg.zeros(50, device=device).random_(4)).max() <= 3
    assert draws(tg.zeros(50, dtype=tg.int64, device=device).random_(-5, None)).min() >= -5
    by_name = draws(tg.zeros(50, device=device).random_(**{"from": 2, "to": 4}))
    assert set(by_name) <= {2.0, 3.0}
    # random_(): [0, 2^digits] for a floating dtype, [0, max] for an integer one
    for dtype, top in ((tg.float32, 2 ** 24), (tg.float16, 2 ** 11), (tg.uint8, 255), (tg.int8, 127),
                       (tg.int16, 2 ** 15 - 1), (tg.bool, 1)):
        t = tg.zeros(N, dtype=dtype, device=device).random_()
        v = draws(t)
        assert t.dtype is dtype and v.min() >= 0 and v.max() <= top, dtype
        assert_mean(v, top / 2, top / math.sqrt(12), f"random_() of {dtype}")
    big = tg.zeros(N, dtype=tg.int64, device=device).random_()
    assert min(big.tolist()) >= 0 and max(big.tolist()) > 2 ** 62         # [0, 2^63 - 1]
    like = tg.randint_like(tg.zeros(2, 3, dtype=tg.int32, device=device), 5, 7)
    assert like.dtype is tg.int32 and like.device == device and tuple(like.shape) == (2, 3)
    assert set(draws(like)) <= {5.0, 6.0}
    assert tg.randint_like(tg.zeros(4, device=device), 3).dtype is tg.float32
    assert set(draws(tg.randint_like(tg.zeros(40, device=device), high=2))) == {0.0, 1.0}


@pytest.mark.parametrize("device", DEVICES)
def test_the_seed_and_a_generator_repeat_the_draws(device):
    fills = {
        "bernoulli_": lambda t, **kw: t.bernoulli_(0.5, **kw),
        "random_": lambda t, **kw: t.random_(0, 100, **kw),
        "exponential_": lambda t, **kw: t.exponential_(**kw),
        "geometric_": lambda t, **kw: t.geometric_(0.2, **kw),
        "log_normal_": lambda t, **kw: t.log_normal_(**kw),
        "cauchy_": lambda t, **kw: t.cauchy_(**kw),
        "bernoulli": lambda t, **kw: tg.bernoulli(t.fill_(0.5), **kw),
        "poisson": lambda t, **kw: tg.poisson(t.fill_(12.0), **kw),
        "randint_like": lambda t, **kw: tg.randint_like(t, 10, **kw),
    }
    for name, fill in fills.items():
        tg.manual_seed(7)
        first = fill(tg.zeros(20, device=device)).tolist()
        second = fill(tg.zeros(20, device=device)).tolist()
        tg.manual_seed(7)
        assert fill(tg.zeros(20, device=device)).tolist() == first, name
        assert first != second, name
        # a Generator's draws repeat on their own and leave the package's stream as it was
        tg.manual_seed(7)
        a = fill(tg.zeros(20, device=device), generator=tg.Generator().manual_seed(5)).tolist()
        assert fill(tg.zeros(20, device=device)).tolist() == first, name
        assert fill(tg.zeros(20, device=device), generator=tg.Generator().manual_seed(5)).tolist() == a, name


@pytest.mark.parametrize("device", device_params("cpu"))
def test_a_native_device_draws_pythons_numbers(device):
    def fills(device):
        tg.manual_seed(9)
        t = tg.zeros(6, dtype=tg.float64, device=device)
        return [t.exponential_().tolist(), t.random_(50).tolist(), tg.poisson(t.fill_(20.0)).tolist()]
    got, want = fills(device), fills("python")
    assert np.allclose(got[0], want[0], rtol=1e-12) and got[1:] == want[1:]


def test_errors_as_pytorch():
    x = tg.zeros(3)
    cases = [
        (lambda: tg.bernoulli(tg.tensor([0.5, 1.5])), RuntimeError),
        (lambda: tg.bernoulli(tg.tensor([0.5, math.nan])), RuntimeError),
        (lambda: tg.bernoulli(tg.tensor([1, 0])), NotImplementedError),
        (lambda: tg.bernoulli(x, 1.3), RuntimeError),
        (lambda: x.bernoulli_(-0.1), RuntimeError),
        (lambda: x.bernoulli_(tg.tensor([0.2, 0.3])), RuntimeError),
        (lambda: x.bernoulli_(tg.tensor([1, 0, 1])), NotImplementedError),
        (lambda: x.random_(0), RuntimeError),
        (lambda: x.random_(5, 2), RuntimeError),
        (lambda: x.random_(1.5), TypeError),
        (lambda: tg.zeros(3, dtype=tg.uint8).random_(-3, 2), RuntimeError),
        (lambda: tg.zeros(3, dtype=tg.uint8).random_(0, 300), RuntimeError),
        (lambda: tg.zeros(3, dtype=tg.bool).random_(0, 3), RuntimeError),
        (lambda: tg.randint_like(tg.zeros(3, dtype=tg.int8), 129), RuntimeError),
        (lambda: tg.randint_like(x, 10, 3), RuntimeError),
        (lambda: x.exponential_(0), RuntimeError),
        (lambda: x.exponential_(math.nan), RuntimeError),
        (lambda: tg.zeros(3, dtype=tg.int64).exponential_(), RuntimeError),
        (lambda: x.geometric_(0), RuntimeError),
        (lambda: x.geometric_(1), RuntimeError),
        (lambda: tg.zeros(3, dtype=tg.bool).geometric_(0.5), NotImplementedError),
        (lambda: x.log_normal_(1, 0), RuntimeError),
        (lambda: x.cauchy_(0, -1), RuntimeError),
        (lambda: tg.zeros(3, dtype=tg.int64).cauchy_(), RuntimeError),
        (lambda: tg.poisson(tg.tensor([1.0, -2.0])), RuntimeError),
        (lambda: tg.poisson(tg.tensor([1.0, math.nan])), RuntimeError),
        (lambda: tg.poisson(tg.tensor([1, 2])), NotImplementedError),
        (lambda: x.exponential_(generator=0), TypeError),
    ]
    for i, (call, error) in enumerate(cases):
        with pytest.raises(error):
            call()
            pytest.fail(f"case {i} did not raise")
    with pytest.warns(UserWarning, match="out of bounds"):
        tg.zeros(3).random_(0, 2 ** 25)                 # float32 holds every integer to 2^24 only
    leaf = tg.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="in-place"):
        leaf.exponential_()
    assert not tg.bernoulli(tg.full((3,), 0.5, requires_grad=True)).requires_grad
