"""The element-wise math, bits and reductions of math_functions.py, bitwise.py,
more_reductions.py and special.py: known values and identities of the special functions
(which the shared suite's references take on trust), PyTorch's answers at the edge values
(0, -0.0, poles, +-inf, nan, recorded from PyTorch), its dtype rules, gradients at the
special points, and errors. Gradients elsewhere: tests/optable.py's "math_" rows."""
import math

import numpy as np
import pytest

import stage2_tensor as tg

from .engines import device_params

DEVICES = device_params("python", "cpu", "cpu:lazy")
INF, NAN = math.inf, math.nan
EULER = 0.5772156649015329
ZETA3 = 1.2020569031595942


def values(x):
    return np.array(x.tolist(), dtype=float)


def same(got, expected, rtol=1e-12):
    """Equal to within rtol, infinities and nans (and zeros' signs) exactly where expected's are."""
    got, expected = values(got), np.asarray(expected, dtype=float)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=0)
    zeros = expected == 0
    np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(expected[zeros]))


# ---- the special functions: known values and identities --------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_special_functions_at_known_values(device):
    x = tg.tensor([1.0, 0.5, 10.0], dtype=tg.float64, device=device)
    same(x.digamma(), [-EULER, -EULER - 2 * math.log(2), sum(1 / k for k in range(1, 10)) - EULER])
    # PyTorch's trigamma (six steps of the recurrence, then four terms of the series) is within
    # 1e-9, and tracegrad's computes as it does
    same(tg.polygamma(1, x[:2]), [math.pi ** 2 / 6, math.pi ** 2 / 2], rtol=1e-9)
    same(tg.polygamma(2, x[:1]), [-2 * ZETA3])
    same(tg.polygamma(3, x[:1]), [math.pi ** 4 / 15])
    same(x.lgamma(), [0.0, math.log(math.pi) / 2, math.log(362880)])
    same(tg.special.multigammaln(x[2:], 3), [sum(math.lgamma(10 - i / 2) for i in range(3)) + 1.5 * math.log(math.pi)])


@pytest.mark.parametrize("device", DEVICES)
def test_digamma_recurrence_and_reflection(device):
    x = np.array([-7.3, -2.5, -0.4, 0.01, 0.3, 1.7, 9.99, 10.5, 45.0, 1e6])
    t = tg.tensor(x.tolist(), dtype=tg.float64, device=device)
    same(tg.digamma(t + 1), values(tg.digamma(t)) + 1 / x, rtol=1e-11)
    same(tg.polygamma(1, t + 1), values(tg.polygamma(1, t)) - 1 / x ** 2, rtol=5e-9)
    same(tg.polygamma(2, t + 1), values(tg.polygamma(2, t)) + 2 / x ** 3, rtol=1e-9)


@pytest.mark.parametrize("device", DEVICES)
def test_bessel_functions_and_erfinv(device):
    x = np.concatenate([np.linspace(-40, 40, 161), [29.999, 30.001, 300.0, 700.0]])
    t = tg.tensor(x.tolist(), dtype=tg.float64, device=device)
    same(tg.i0(t), np.i0(x), rtol=1e-13)
    x, t = x[:-2], t[:-2]
    h = 1e-6 * np.maximum(1, np.abs(x))                   # I1 = I0', by central differences
    same(tg.special.i1(t), (np.i0(x + h) - np.i0(x - h)) / (2 * h), rtol=1e-7)
    y = np.concatenate([np.linspace(-0.999, 0.999, 201), [1e-300, 1 - 2 ** -53, 0.5]])
    inverse = values(tg.erfinv(tg.tensor(y.tolist(), dtype=tg.float64, device=device)))
    np.testing.assert_allclose([math.erf(v) for v in inverse], y, rtol=4e-16, atol=0)
    tail = y > 0.5                                        # near 1: erfc keeps the digits erf loses
    np.testing.assert_allclose([math.erfc(v) for v in inverse[tail]], 1 - y[tail], rtol=1e-13)


# ---- edge values: PyTorch's answers ----------------------------------------------------------
EDGES = [0.0, -0.0, 1.0, -1.0, 2.0, -3.0, INF, -INF, NAN]
PYTORCH = {          # recorded from PyTorch 2.13 on these EDGES, float64
    "tan": [0.0, -0.0, 1.5574077246549023, -1.5574077246549023, -2.185039863261519, 0.1425465430742778, NAN, NAN,
            NAN],
    "asin": [0.0, -0.0, math.pi / 2, -math.pi / 2, NAN, NAN, NAN, NAN, NAN],
    "acosh": [NAN, NAN, 0.0, NAN, 1.3169578969248166, NAN, INF, NAN, NAN],
    "atanh": [0.0, -0.0, INF, -INF, NAN, NAN, NAN, NAN, NAN],
    "sinh": [0.0, -0.0, 1.1752011936438014, -1.1752011936438014, 3.6268604078470186, -10.017874927409903, INF, -INF,
             NAN],
    "log2": [-INF, -INF, 0.0, NAN, 1.0, NAN, INF, NAN, NAN],
    "exp2": [1.0, 1.0, 2.0, 0.5, 4.0, 0.125, INF, 0.0, NAN],
    "erfc": [1.0, 1.0, 0.15729920705028513, 1.8427007929497148, 0.004677734981047266, 1.9999779095030015, 0.0, 2.0,
             NAN],
    "erfinv": [0.0, -0.0, INF, -INF, NAN, NAN, NAN, NAN, NAN],
    "lgamma": [INF, INF, 0.0, INF, 0.0, INF, INF, INF, NAN],
    "digamma": [-INF, INF, -EULER, NAN, 1 - EULER, NAN, INF, NAN, NAN],
    "i0": [1.0, 1.0, 1.2660658777520082, 1.2660658777520082, 2.2795853023360673, 4.880792585865024, NAN, NAN, NAN],
    "sinc": [1.0, 1.0, 3.8981718325193755e-17, 3.8981718325193755e-17, -3.8981718325193755e-17,
             3.8981718325193755e-17, NAN, NAN, NAN],
    "logit": [-INF, -INF, INF, NAN, NAN, NAN, NAN, NAN, NAN],
    "frac": [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, NAN, NAN, NAN],
    "nan_to_num": [0.0, -0.0, 1.0, -1.0, 2.0, -3.0, 1.7976931348623157e308, -1.7976931348623157e308, 0.0],
    "signbit": [0, 1, 0, 1, 0, 1, 0, 1, 0],
    "isfinite": [1, 1, 1, 1, 1, 1, 0, 0, 0],
    "isinf": [0, 0, 0, 0, 0, 0, 1, 1, 0],
    "isneginf": [0, 0, 0, 0, 0, 0, 0, 1, 0],
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", PYTORCH)
def test_edge_values_as_pytorch(device, name):
    x = tg.tensor(EDGES, dtype=tg.float64, device=device)
    same(getattr(tg, name)(x), PYTORCH[name], rtol=1e-14)


def test_edge_values_of_two_operands_as_pytorch():
    a = tg.tensor([0.0, -0.0, INF, INF, -INF, 1.0, NAN, 0.0, 2.0], dtype=tg.float64)
    b = tg.tensor([0.0, 0.0, INF, 1.0, -INF, NAN, 1.0, NAN, -0.0], dtype=tg.float64)
    same(tg.atan2(a, b), [0.0, -0.0, math.pi / 4, math.pi / 2, -3 * math.pi / 4, NAN, NAN, NAN, math.pi / 2])
    same(tg.hypot(a, b), [0.0, 0.0, INF, INF, INF, NAN, NAN, NAN, 2.0])
    same(tg.xlogy(a, b), [0.0, 0.0, INF, NAN, NAN, NAN, NAN, NAN, -INF])
    same(tg.logaddexp(a, b), [math.log(2), math.log(2), INF, INF, -INF, NAN, NAN, NAN, 2 + math.log1p(math.exp(-2))])
    same(tg.fmax(a, b), [0.0, -0.0, INF, INF, -INF, 1.0, 1.0, 0.0, 2.0])
    same(tg.copysign(a, b), [0.0, 0.0, INF, INF, -INF, 1.0, NAN, 0.0, -2.0])
    same(tg.fmod(a, b), [NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN])
    same(tg.nan_to_num(a, nan=7.0, posinf=1.0, neginf=-1.0), [0.0, -0.0, 1.0, 1.0, -1.0, 1.0, 7.0, 0.0, 2.0])
    mantissa, exponent = tg.frexp(tg.tensor([8.0, -3.0, 0.0, 1e-310, INF, 0.75], dtype=tg.float64))
    same(mantissa, [0.5, -0.75, 0.0, 1e-310 / 2.0 ** -1029, INF, 0.75])
    assert exponent.dtype is tg.int32 and exponent.tolist() == [4, 2, 0, -1029, 0, 0]


# ---- dtypes: PyTorch's rules ----------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_integer_inputs_to_real_functions_give_float32_and_predicates_bool(device):
    ints = tg.tensor([1, 2, 3], device=device)
    for out in (ints.tan(), tg.atan2(ints, ints), tg.hypot(ints, 2), tg.lgamma(ints), tg.xlogy(ints, ints),
                tg.sinc(ints), tg.deg2rad(ints), tg.copysign(ints, -1), tg.ldexp(ints, ints), tg.special.i1(ints)):
        assert out.dtype is tg.float32
    assert tg.float_power(ints, 2).dtype is tg.float64 and tg.fmod(ints, 2).dtype is tg.int64
    for out in (ints.isnan(), ints.isinf(), ints.isfinite(), ints.signbit(), tg.isreal(ints), ints.logical_not()):
        assert out.dtype is tg.bool
    assert tg.isfinite(ints).tolist() == [True] * 3 and tg.isinf(ints).tolist() == [False] * 3


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "int8"])
def test_bitwise_ops_and_operators_as_numpy(device, dtype):
    rng = np.random.default_rng(1)
    low = 0 if dtype == "uint8" else -100
    a, b = rng.integers(low, 100, 12).astype(dtype), rng.integers(low, 100, 12).astype(dtype)
    s = rng.integers(0, 7, 12).astype(dtype)                 # shift counts
    ta, tb, ts = (tg.tensor(v.tolist(), dtype=getattr(tg, dtype), device=device) for v in (a, b, s))
    assert (ta & tb).tolist() == (a & b).tolist() and (ta | tb).tolist() == (a | b).tolist()
    assert (ta ^ tb).tolist() == (a ^ b).tolist() and (~ta).tolist() == (~a).tolist()
    assert (ta << ts).tolist() == (a << s).tolist() and (ta >> ts).tolist() == (a >> s).tolist()
    assert tg.gcd(ta, tb).tolist() == np.gcd(a, b).tolist()
    assert tg.lcm(ta % 10, tb % 10).tolist() == np.lcm(a % 10, b % 10).astype(dtype).tolist()
    assert (ta & 6).dtype is ta.dtype and (3 | ta).tolist() == (3 | a).tolist()
    c = ta.clone()
    c ^= tb
    assert c.tolist() == (a ^ b).tolist()


def test_shifts_past_the_width_and_bool_bits_as_pytorch():
    one = tg.tensor([1, -8])
    assert (one << 64).tolist() == [0, 0] and (one << -1).tolist() == [0, 0]
    assert (one >> 64).tolist() == [0, -1] and (one >> 70).tolist() == [0, -1]
    assert (tg.tensor([1], dtype=tg.int32) << 35).tolist() == [0]
    assert (tg.tensor([1], dtype=tg.int32) << 31).tolist() == [-2 ** 31]
    assert tg.gcd(tg.tensor([-4, 0, -2 ** 63]), tg.tensor([6, 0, 0])).tolist() == [2, 0, -2 ** 63]
    p, q = tg.tensor([True, True, False]), tg.tensor([True, False, False])
    assert (p & q).tolist() == [True, False, False] and (p | q).tolist() == [True, True, False]
    assert (p ^ q).tolist() == [False, True, False] and (~p).tolist() == [False, False, True]
    x = tg.tensor([0.0, 2.0, NAN])
    assert tg.logical_and(x, tg.tensor([1, 1, 0])).tolist() == [False, True, False]
    assert tg.logical_or(x, tg.tensor(0)).tolist() == [False, True, True]
    assert tg.logical_xor(x, tg.tensor([1, 1, 1])).tolist() == [True, False, False]


# ---- gradients where PyTorch defines them ------------------------------------------------------

def grad_of(fn, *data):
    xs = [tg.tensor(d, dtype=tg.float64, requires_grad=True) for d in data]
    fn(*xs).sum().backward()
    return [x.grad.tolist() for x in xs]


def test_gradients_at_special_points_as_pytorch():
    assert grad_of(tg.sinc, [0.0, 1.0]) == [[0.0, -1.0]]
    assert grad_of(lambda x: tg.copysign(x, tg.tensor([-1.0, -1.0], dtype=tg.float64)), [0.0, 2.0]) == [[0.0, -1.0]]
    assert grad_of(tg.special.i1, [0.0]) == [[0.5]]
    assert grad_of(lambda a, b: tg.xlogy(a, b), [0.0, 2.0], [0.0, 3.0])[0] == [0.0, math.log(3)]
    assert grad_of(lambda a, b: tg.fmax(a, b), [1.0], [1.0]) == [[1.0], [0.0]]           # a tie: to input
    assert grad_of(lambda a, b: tg.logaddexp(a, b), [1.0], [1.0]) == [[0.5], [0.5]]
    assert grad_of(lambda x: x.prod(), [0.0, 1.0, 3.0]) == [[3.0, 0.0, 0.0]]             # one zero
    assert grad_of(lambda x: x.prod(), [0.0, 1.0, 0.0]) == [[0.0, 0.0, 0.0]]             # two
    assert grad_of(lambda x: x.prod(), [2.0, 1.0, 3.0]) == [[3.0, 6.0, 2.0]]             # none
    (g,) = grad_of(tg.digamma, [0.5])
    assert g == pytest.approx([math.pi ** 2 / 2], rel=1e-9)


# ---- reductions ---------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_prod_nansum_nanmean_aminmax_and_spreads(device):
    a = np.arange(1.0, 13.0).reshape(3, 4) / 4
    t = tg.tensor(a.tolist(), dtype=tg.float64, device=device)
    same(t.prod(), a.prod())
    same(tg.prod(t, 1), a.prod(1))
    assert t.prod(0, keepdim=True).shape == (1, 4) and tg.prod(t, -1, dtype=tg.float32).dtype is tg.float32
    ints = tg.tensor([[2, 3], [4, 5]], dtype=tg.int32, device=device)
    assert ints.prod().dtype is tg.int64 and ints.prod().item() == 120 and ints.prod(0).tolist() == [8, 15]
    assert tg.zeros(0, 3, device=device).prod(0).tolist() == [1.0] * 3 and tg.zeros(0, device=device).prod().item() == 1
    n = tg.tensor([[1.0, NAN, 2.0], [NAN, NAN, NAN]], device=device)
    assert tg.nansum(n).item() == 3.0 and n.nansum(1).tolist() == [3.0, 0.0]
    same(tg.nanmean(n, 1), [1.5, NAN])
    low, high = tg.aminmax(t, dim=1)
    same(low, a.min(1))
    same(high, a.max(1))
    v, m = tg.var_mean(t, 1, keepdim=True)
    same(v, a.var(1, ddof=1, keepdims=True))
    same(m, a.mean(1, keepdims=True))
    s, m = tg.std_mean(t, correction=0)
    same(s, a.std())
    same(m, a.mean())


@pytest.mark.parametrize("device", DEVICES)
def test_mode_takes_the_smallest_most_frequent_value_and_its_last_index(device):
    values, indices = tg.mode(tg.tensor([3, 1, 2, 1, 3, 3, 1], device=device), 0)
    assert (values.item(), indices.item()) == (1, 6)                    # PyTorch's answer
    x = tg.tensor([[2.0, 1.0, 2.0, 1.0], [5.0, 4.0, 4.0, 9.0]], device=device)
    values, indices = x.mode(1, keepdim=True)
    assert values.tolist() == [[1.0], [4.0]] and indices.tolist() == [[3], [2]]
    assert tg.mode(x.t(), 0).values.tolist() == [1.0, 4.0]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_and_nanquantile_as_numpy(device, interpolation):
    a = np.random.default_rng(2).normal(size=(3, 7))
    t = tg.tensor(a.tolist(), dtype=tg.float64, device=device)
    q = [0.0, 0.25, 0.5, 0.9, 1.0]
    got = tg.quantile(t, tg.tensor(q, dtype=tg.float64, device=device), dim=1, interpolation=interpolation)
    same(got, np.quantile(a, q, axis=1, method=interpolation), rtol=1e-14)
    same(t.quantile(0.3, interpolation=interpolation), np.quantile(a, 0.3, method=interpolation), rtol=1e-14)
    assert t.quantile(0.3, dim=0, keepdim=True).shape == (1, 7) and t.quantile(0.3, keepdim=True).shape == (1, 1)
    a[0, 2] = a[1, :] = np.nan
    t = tg.tensor(a.tolist(), dtype=tg.float64, device=device)
    with np.errstate(all="ignore"):
        same(tg.nanquantile(t, 0.4, dim=1, interpolation=interpolation),
             np.nanquantile(a, 0.4, axis=1, method=interpolation), rtol=1e-14)
    same(tg.quantile(t, 0.4, dim=1), [NAN, NAN, np.quantile(a[2], 0.4)])


def test_diff_as_numpy():
    a = np.array([[1.0, 4.0, 9.0, 16.0], [2.0, 3.0, 5.0, 7.0]])
    t = tg.tensor(a.tolist())
    assert tg.diff(t).tolist() == np.diff(a).tolist() and t.diff(2, 1).tolist() == np.diff(a, 2, 1).tolist()
    assert t.diff(dim=0, prepend=t[:1]).tolist() == np.diff(a, axis=0, prepend=a[:1]).tolist()
    assert tg.diff(t, append=tg.zeros(2, 1)).tolist() == np.diff(a, append=np.zeros((2, 1))).tolist()
    assert tg.diff(tg.tensor([True, True, False])).tolist() == [False, True]
    assert tg.diff(t, 0).tolist() == a.tolist()


# ---- torch.special, in-place forms, errors ------------------------------------------------------

def test_special_aliases_and_composites():
    x = tg.tensor([-1.5, 0.25, 2.0], dtype=tg.float64)
    same(tg.special.expit(x), 1 / (1 + np.exp(-values(x))))
    same(tg.special.gammaln(x), [math.lgamma(v) for v in values(x)])
    same(tg.special.psi(x), values(tg.digamma(x)))
    same(tg.special.ndtr(x), [0.5 * math.erfc(-v / math.sqrt(2)) for v in values(x)])
    same(tg.special.ndtr(tg.special.ndtri(tg.tensor([0.1, 0.5, 0.975], dtype=tg.float64))), [0.1, 0.5, 0.975])
    same(tg.special.entr(tg.tensor([0.0, 0.5, -1.0, NAN], dtype=tg.float64)), [0.0, 0.5 * math.log(2), -INF, NAN])
    same(tg.special.xlog1py(tg.tensor([0.0, 2.0], dtype=tg.float64), tg.tensor([-1.0, 1.0], dtype=tg.float64)),
         [0.0, 2 * math.log(2)])
    assert tg.special.log_softmax(tg.tensor([1.0, 2.0]), 0, dtype=tg.float64).dtype is tg.float64
    same(tg.special.logsumexp(x, 0), math.log(np.exp(values(x)).sum()))


def test_in_place_forms_write_the_tensor_and_refuse_a_float_into_integers():
    x = tg.tensor([0.5, 1.0])
    assert x.tan_() is x and x.tolist() == pytest.approx([math.tan(0.5), math.tan(1.0)])
    y = tg.tensor([3, 5])
    y.gcd_(tg.tensor([6, 10]))
    assert y.tolist() == [3, 5]
    with pytest.raises(RuntimeError, match="can't be cast"):
        tg.tensor([1, 2]).tan_()
    leaf = tg.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="in-place"):
        leaf.sinh_()


def test_bad_arguments_are_pytorch_errors():
    f, i = tg.tensor([1.0]), tg.tensor([1])
    with pytest.raises(RuntimeError, match="negative n"):
        tg.polygamma(-1, f)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        tg.fmod(i, 0)
    with pytest.raises(RuntimeError, match="not implemented"):
        f & f
    with pytest.raises(RuntimeError, match="not implemented"):
        tg.gcd(tg.tensor([True]), tg.tensor([True]))
    with pytest.raises(RuntimeError, match="different dtypes"):
        tg.heaviside(f, i)
    with pytest.raises(RuntimeError, match="floating-point"):
        tg.frexp(i)
    with pytest.raises(RuntimeError, match="greater than"):
        tg.mvlgamma(tg.tensor([0.2]), 2)
    with pytest.raises(RuntimeError, match="range"):
        tg.quantile(f, 1.5)
    with pytest.raises(RuntimeError, match="float or double"):
        tg.quantile(i, 0.5)
    with pytest.raises(ValueError, match="interpolation"):
        tg.quantile(f, 0.5, interpolation="cubic")
    with pytest.raises(RuntimeError, match="floating point"):
        tg.nanmean(i)
    with pytest.raises(TypeError, match="Tensor"):
        tg.tan(1.0)
