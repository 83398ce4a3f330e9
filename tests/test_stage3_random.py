"""The random factories draw Python's numbers on every device (stage2_tensor/factories.py,
"Random tensors"; the kernels mt19937_floats and mt19937_integers of
stage2_tensor/kernels/random.py, csrc/mt19937.h): for each seed, dtype and size, each
device's tensor holds what Python's random.Random gives, called one number at a time as
the factories once did, and the generator is left in the state those calls leave it in,
gauss's cached value included. A state that is not one is refused before any C runs."""
import math
import random
import struct

import pytest

import stage2_tensor as tg
from stage2_tensor import backend, dtypes, factories
from stage2_tensor.kernels import check

from .engines import device_params

pytestmark = pytest.mark.stage3

DEVICES = device_params(kernel="mt19937_floats")
SEEDS = (0, 2 ** 40 + 7)
# none; one; odd (a gauss spare left over); more than the 624 words of one twist, for
# every draw (randn takes 2 words per number, rand 2, randint 1 or 2)
SIZES = (0, 1, 7, 1500)


def python_draws(seed, n, draw):
    """What the factories drew before the kernels: ``draw(rng)`` n times, one Python call
    each, and the state that leaves."""
    rng = random.Random(seed)
    values = [draw(rng) for _ in range(n)]
    return values, rng.getstate()


def stored(values, dtype):
    """Python numbers as a tensor of dtype stores them (from_flat): to nearest."""
    if dtype is dtypes.float32:                 # array.array's float: a C float
        return [float(struct.unpack("f", struct.pack("f", v))[0]) for v in values]
    return [dtype.decode(dtype.encode(v)) for v in values]


FLOAT_FACTORIES = {
    "rand": (lambda n, **kw: tg.rand(n, **kw), lambda r: r.random()),
    "randn": (lambda n, **kw: tg.randn(n, **kw), lambda r: r.gauss(0.0, 1.0)),
    "uniform": (lambda n, **kw: factories.uniform(n, -0.75, 2.5, **kw), lambda r: r.uniform(-0.75, 2.5)),
    "normal": (lambda n, **kw: factories.normal(n, 1.5, 0.25, **kw), lambda r: r.gauss(1.5, 0.25)),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("factory", FLOAT_FACTORIES)
@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.float64, dtypes.float16, dtypes.bfloat16],
                         ids=lambda d: d.name)
def test_a_float_factory_gives_pythons_numbers_and_leaves_its_state(device, factory, dtype):
    make, draw = FLOAT_FACTORIES[factory]
    for seed in SEEDS:
        for n in SIZES:
            want, state = python_draws(seed, n, draw)
            tg.seed(seed)
            out = make(n, dtype=dtype, device=device)
            assert out.dtype is dtype and out.device == device and out.shape == (n,)
            assert out.tolist() == stored(want, dtype), (seed, n)
            assert factories.generator().getstate() == state, (seed, n)


@pytest.mark.parametrize("device", DEVICES)
def test_a_shape_is_filled_row_major_and_an_int_dtype_takes_what_python_stored(device):
    want, _ = python_draws(3, 24, lambda r: r.gauss(0.0, 1.0))
    tg.seed(3)
    out = tg.randn(2, 3, 4, dtype=tg.float64, device=device)
    assert out.shape == (2, 3, 4) and out.flatten().tolist() == want
    want, _ = python_draws(4, 9, lambda r: r.uniform(-4.0, 9.0))
    out = factories.uniform(9, -4.0, 9.0, dtype=dtypes.int64, device=device, generator=tg.Generator().manual_seed(4))
    assert out.tolist() == [int(v) for v in want]          # as int(x) stored it, toward zero


@pytest.mark.parametrize("device", DEVICES)
def test_gauss_keeps_its_second_number_across_calls_and_with_python(device):
    """randn's numbers come in pairs: an odd count leaves the second of the last pair
    (gauss_next), which the next call, or a Python gauss(), returns first."""
    rng = random.Random(11)
    want = [rng.gauss(0.0, 1.0) for _ in range(3)], [rng.gauss(0.0, 1.0) for _ in range(4)], rng.gauss(2.0, 0.5)
    rng.random()
    want += ([rng.gauss(0.0, 1.0) for _ in range(5)],)
    tg.seed(11)
    got = tg.randn(3, dtype=tg.float64, device=device).tolist(), tg.randn(4, dtype=tg.float64, device=device).tolist()
    assert factories.generator().gauss_next is not None          # 7 numbers: one left over
    got += (factories.generator().gauss(2.0, 0.5),)               # Python takes it
    factories.generator().random()
    got += (tg.randn(5, dtype=tg.float64, device=device).tolist(),)
    assert got == want and factories.generator().getstate() == rng.getstate()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("low, high", [(-5, 1000), (0, 1), (7, 9), (0, 2 ** 32 + 5), (-(2 ** 40), 2 ** 62),
                                       (-(2 ** 63), 2 ** 63 - 1)])
def test_randint_gives_pythons_randrange(device, low, high):
    """Widths of 1 bit (a draw is rejected until it is 0), up to 32 bits (one word), above
    (two words), and every int64."""
    for seed in SEEDS:
        for n in SIZES:
            want, state = python_draws(seed, n, lambda r: r.randrange(low, high))
            tg.seed(seed)
            out = tg.randint(low, high, (n,), device=device)
            assert out.dtype is tg.int64 and out.tolist() == want, (seed, n)
            assert factories.generator().getstate() == state, (seed, n)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.int32, dtypes.float16, dtypes.uint8], ids=lambda d: d.name)
def test_randint_of_another_dtype_stores_pythons_ints_as_that_dtype(device, dtype):
    want, _ = python_draws(5, 700, lambda r: r.randrange(-300, 2 ** 20))
    tg.seed(5)
    out = tg.randint(-300, 2 ** 20, (700,), dtype=dtype, device=device)
    assert out.dtype is dtype and out.tolist() == stored(want, dtype)


@pytest.mark.parametrize("device", DEVICES)
def test_a_generator_draws_its_own_stream_and_leaves_the_packages_alone(device):
    tg.seed(1)
    before = factories.generator().getstate()
    g = tg.Generator().manual_seed(9)
    rng = random.Random(9)
    want = ([rng.uniform(0.0, 2.0) for _ in range(5)], [rng.gauss(1.0, 3.0) for _ in range(3)],
            [rng.randrange(0, 10) for _ in range(4)])
    got = (factories.uniform(5, 0.0, 2.0, dtype=tg.float64, device=device, generator=g).tolist(),
           factories.normal(3, 1.0, 3.0, dtype=tg.float64, device=device, generator=g).tolist(),
           tg.randint(0, 10, (4,), device=device, generator=g).tolist())
    assert got == want and g._rng.getstate() == rng.getstate()
    assert factories.generator().getstate() == before


@pytest.mark.parametrize("device", DEVICES)
def test_the_layers_and_init_draw_pythons_numbers(device):
    """nn.Linear's uniform weights and bias, init.kaiming_uniform_ and init.normal_: the
    factories' numbers, so Python's."""
    tg.seed(2)
    layer = tg.nn.Linear(5, 3, dtype=tg.float64, device=device)
    w = tg.zeros(4, 6, dtype=tg.float64, device=device)
    tg.nn.init.kaiming_uniform_(w, a=math.sqrt(5))
    v = tg.nn.init.normal_(tg.zeros(4, 6, dtype=tg.float64, device=device), 0.5, 2.0)
    rng = random.Random(2)
    k = 1 / math.sqrt(5)
    assert layer.weight.flatten().tolist() == [rng.uniform(-k, k) for _ in range(15)]
    assert layer.bias.tolist() == [rng.uniform(-k, k) for _ in range(3)]
    bound = math.sqrt(3.0) * (tg.nn.init.calculate_gain("leaky_relu", math.sqrt(5)) / math.sqrt(6))  # as init's
    assert w.flatten().tolist() == [rng.uniform(-bound, bound) for _ in range(24)]
    assert v.flatten().tolist() == [rng.gauss(0.5, 2.0) for _ in range(24)]
    assert factories.generator().getstate() == rng.getstate()


def test_skip_init_draws_nothing():
    tg.seed(0)
    before = factories.generator().getstate()
    with factories.skip_init():
        assert tg.randn(3, 2).tolist() == [[0.0, 0.0]] * 3
    assert factories.generator().getstate() == before


GOOD = random.Random(0).getstate()[1]


@pytest.mark.parametrize("state, message", [
    (GOOD[:-1], "a tuple of 624 words and a position, got a tuple of 624 items"),
    (GOOD + (0,), "got a tuple of 626 items"),
    (None, "got None"),
    (GOOD[:5] + (1 << 32,) + GOOD[6:], "state word 5 must be an int in"),
    (GOOD[:5] + (-1,) + GOOD[6:], "state word 5 must be an int in"),
    (GOOD[:5] + (1.0,) + GOOD[6:], "state word 5 must be an int in"),
    (GOOD[:-1] + (625,), "position .* from 0 to 624, got 625"),
    (GOOD[:-1] + (-1,), "position .* from 0 to 624, got -1"),
], ids=["short", "long", "none", "word too large", "word negative", "word float", "position too large",
        "position negative"])
@pytest.mark.parametrize("device", device_params())
def test_a_state_that_is_not_one_is_refused_before_any_c_runs(device, state, message):
    be = backend.get(device)
    with pytest.raises(ValueError, match=f"^mt19937_floats: .*{message}"):
        be.mt19937_floats(state, None, 4, "normal", 0.0, 1.0, dtypes.float32)
    with pytest.raises(ValueError, match=f"^mt19937_integers: .*{message}"):
        be.mt19937_integers(state, 4, 0, 10, dtypes.int64)


@pytest.mark.parametrize("call, message", [
    (("mt19937_floats", GOOD, 1, 4, "normal", 0.0, 1.0, dtypes.float32), "spare must be None or a float"),
    (("mt19937_floats", GOOD, None, -1, "normal", 0.0, 1.0, dtypes.float32), "n must be an int"),
    (("mt19937_floats", GOOD, None, 4, "gamma", 0.0, 1.0, dtypes.float32), "distribution must be one of"),
    (("mt19937_floats", GOOD, None, 4, "normal", 0, 1.0, dtypes.float32), "a must be a float"),
    (("mt19937_floats", GOOD, None, 4, "normal", 0.0, 1.0, dtypes.float16), "dtype must be float32 or float64"),
    (("mt19937_integers", GOOD, 4, 0, 0, dtypes.int64), "width >= 1"),
    (("mt19937_integers", GOOD, 4, 2 ** 63 - 1, 2, dtypes.int64), "low and low \\+ width - 1 must be int64s"),
    (("mt19937_integers", GOOD, 4, -(2 ** 63) - 1, 2, dtypes.int64), "must be int64s"),
    (("mt19937_integers", GOOD, 4, 0, 10, dtypes.int32), "dtype must be int64"),
])
def test_a_declaration_refuses_what_the_c_kernels_cannot_take(call, message):
    with pytest.raises(ValueError, match=message):
        check(*call)


def test_randint_refuses_bounds_outside_int64_as_pytorch():
    with pytest.raises(RuntimeError, match="must be int64s"):
        tg.randint(0, 2 ** 63, (2,))
    with pytest.raises(RuntimeError, match="must be int64s"):
        tg.randint(-(2 ** 63) - 1, 0, (2,))
