"""Fused dropout (csrc/dropout.c, cuda/dropout.cu, stage2's python_backend.dropout): the
counter-based mask against an independent numpy SplitMix64, the same mask on every
device ("cuda" where a GPU is present), its statistics, its
gradient, seeding, layouts, threads and the python fallback."""
import math

import numpy as np
import pytest

import stage2_tensor as tg
import stage2_tensor.nn.functional as F
import stage3_native
from stage2_tensor import backend
from stage2_tensor.python_backend import dropout_uniform
from stage2_tensor.python_backend import splitmix64 as splitmix64_python

from .engines import ENGINES, NATIVE, device_params, engine_params
from .gradcheck import gradcheck
from .optable import dropout_keep, dropout_seed, splitmix64

pytestmark = pytest.mark.stage3

DEVICES = device_params()
FLOAT_DTYPES = {"float32": (tg.float32, np.float32), "float64": (tg.float64, np.float64)}
# SplitMix64 seeded with 1234567: the reference outputs (Vigna's splitmix64.c, as listed
# on Rosetta Code, "Pseudo-random numbers/Splitmix64")
REFERENCE = [6457827717110365317, 3203168211198807973, 9817491932198370423,
             4593380528125082431, 16408922859458223821]


def on(device, a, dtype=tg.float64, requires_grad=False):
    return tg.tensor(np.asarray(a).tolist(), dtype=dtype, device=device, requires_grad=requires_grad)


def expected(x, seed, p, np_dtype):
    """x * (keep * 1 / (1 - p)) in double, rounded once to the dtype: what both kernels do."""
    keep = dropout_keep(seed, x.shape, p)
    return (x.astype(np.float64) * (keep * (1 / (1 - p)))).astype(np_dtype)


def test_the_hash_is_splitmix64():
    assert [int(v) for v in splitmix64(1234567, 5)] == REFERENCE
    assert [splitmix64_python(1234567, i) for i in range(5)] == REFERENCE
    assert dropout_uniform(1234567, 0) == (REFERENCE[0] >> 11) / 2 ** 53


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_forward_matches_numpy_bit_for_bit(device, dtype):
    tg_dtype, np_dtype = FLOAT_DTYPES[dtype]
    x = np.random.default_rng(0).normal(size=(6, 70)).astype(np_dtype)
    for p in (0.1, 0.5, 0.85):
        tg.seed(11)
        out = F.dropout(on(device, x, tg_dtype), p)
        assert out.dtype is tg_dtype and out.device == device
        np.testing.assert_array_equal(out.numpy(), expected(x, dropout_seed(11), p, np_dtype))


def dropped(device, tg_dtype, x, upstream):
    """(values, gradient) of dropout at p = 0.3, seed 5, on `device`."""
    tg.seed(5)
    leaf = on(device, x, tg_dtype, requires_grad=True)
    out = F.dropout(leaf, 0.3)
    out.backward(on(device, upstream, tg_dtype))
    return out.detach().numpy(), leaf.grad.numpy()


@pytest.mark.parametrize("device", device_params(*NATIVE))
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_every_device_drops_the_same_elements(device, dtype):
    """Each device drops the elements the python device drops, forward and backward (660
    elements: more than the CUDA emulator's grid has threads)."""
    tg_dtype = FLOAT_DTYPES[dtype][0]
    rng = np.random.default_rng(1)
    x, upstream = rng.normal(size=(5, 4, 33)), rng.normal(size=(5, 4, 33))
    want = dropped("python", tg_dtype, x, upstream)
    kept = want[0] != 0
    assert 0 < kept.sum() < kept.size
    for python, other in zip(want, dropped(device, tg_dtype, x, upstream)):
        np.testing.assert_array_equal(other, python)


@pytest.mark.parametrize("device", DEVICES)
def test_p_equal_to_an_elements_uniform_keeps_it_and_the_next_double_drops_it(device):
    """u >= p at the boundary: the C kernel compares integers (k >= ceil(p * 2^53)), the
    python one doubles; both must agree on u == p exactly."""
    seed = 1234567
    u0 = (REFERENCE[0] >> 11) * 2.0 ** -53
    ones = on(device, np.ones(5))
    for p, kept in ((u0, True), (math.nextafter(u0, 1.0), False), (math.nextafter(u0, 0.0), True)):
        out = ones.launch("dropout", ones.as_view(), seed, p, tg.float64, shape=(5,), dtype=tg.float64)
        assert (out.numpy()[0] != 0) == kept, p
        np.testing.assert_array_equal(out.numpy() != 0, dropout_keep(seed, (5,), p))


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_fraction_kept_and_mean_within_five_sigma(p):
    n = 100_000
    x = np.random.default_rng(2).uniform(1, 2, size=n)
    tg.seed(3)
    y = F.dropout(on("cpu", x), p).numpy()
    keep = y != 0
    sigma = math.sqrt(n * p * (1 - p))
    assert abs(keep.sum() - n * (1 - p)) < 5 * sigma                  # binomial(n, 1 - p)
    # neighbours independent: both kept with probability (1 - p)^2 (n - 1 pairs, which
    # overlap, so their count varies more than a binomial's; 5 sigma of an upper bound)
    both = (keep[1:] & keep[:-1]).sum()
    q = (1 - p) ** 2
    assert abs(both - (n - 1) * q) < 5 * math.sqrt(3 * n * q * (1 - q))
    # E[y_i] = x_i, Var[y_i] = x_i^2 p / (1 - p): the mean is kept
    assert abs(y.mean() - x.mean()) < 5 * math.sqrt((x ** 2).sum() * p / (1 - p)) / n


@pytest.mark.parametrize("device", DEVICES)
def test_gradient_is_upstream_times_mask_over_one_minus_p(device):
    rng = np.random.default_rng(4)
    x, upstream = rng.normal(size=(8, 9)), rng.normal(size=(8, 9))
    tg.seed(6)
    leaf = on(device, x, requires_grad=True)
    F.dropout(leaf, 0.35).backward(on(device, upstream))
    keep = dropout_keep(dropout_seed(6), x.shape, 0.35)
    np.testing.assert_array_equal(leaf.grad.numpy(), upstream * (keep * (1 / (1 - 0.35))))


@pytest.mark.parametrize("engine", engine_params([e for e in ENGINES if e.device]))
def test_gradient_by_central_differences(engine):
    def fn(x):
        tg.seed(9)                                 # the same mask on every evaluation
        return F.dropout(x * x, 0.5)               # a factor before it: its gradient flows
    rng = np.random.default_rng(5)
    gradcheck(engine, fn, [rng.normal(size=(4, 6))], rng)


@pytest.mark.parametrize("device", DEVICES)
def test_seed_repeats_the_mask_and_consecutive_calls_differ(device):
    x = on(device, np.ones((20, 30)))
    tg.seed(42)
    first, second = F.dropout(x, 0.5).numpy(), F.dropout(x, 0.5).numpy()
    tg.seed(42)
    again = F.dropout(x, 0.5).numpy()
    np.testing.assert_array_equal(first, again)
    assert (first != second).mean() > 0.3          # independent masks differ in about half
    tg.seed(43)
    assert (F.dropout(x, 0.5).numpy() != first).mean() > 0.3


@pytest.mark.parametrize("device", DEVICES)
def test_non_contiguous_inputs_are_masked_in_row_major_order(device):
    """Element i is the i-th of the view as it reads, whatever its strides: a transposed and
    a strided view give what their contiguous copies give, and gradients reach the base."""
    rng = np.random.default_rng(6)
    base_values, upstream = rng.normal(size=(6, 8)), rng.normal(size=(4, 3))
    base = on(device, base_values, requires_grad=True)
    view = base.T[1:5, ::2]                                   # (4, 3), strides (1, 16)
    assert not view.is_contiguous()
    tg.seed(8)
    out = F.dropout(view, 0.4)
    tg.seed(8)
    np.testing.assert_array_equal(out.detach().numpy(), F.dropout(view.contiguous(), 0.4).detach().numpy())
    scaled = dropout_keep(dropout_seed(8), (4, 3), 0.4) * (1 / (1 - 0.4))
    np.testing.assert_array_equal(out.detach().numpy(), base_values.T[1:5, ::2] * scaled)
    out.backward(on(device, upstream))
    grad = np.zeros((8, 6))
    grad[1:5, ::2] = upstream * scaled
    np.testing.assert_array_equal(base.grad.numpy(), grad.T)


def test_the_same_bits_on_any_thread_count():
    """Above TG_PARALLEL_MIN elements the kernel splits them across threads; each element
    depends only on (seed, i), so the split cannot change a bit."""
    x = on("cpu", np.random.default_rng(7).normal(size=(300, 500)), tg.float32)
    saved, results = stage3_native.get_num_threads(), []
    try:
        for threads in (1, 2, 3):
            stage3_native.set_num_threads(threads)
            tg.seed(10)
            results.append(F.dropout(x, 0.2).numpy())
    finally:
        stage3_native.set_num_threads(saved)
    for other in results[1:]:
        np.testing.assert_array_equal(other, results[0])
    np.testing.assert_array_equal(results[0], expected(x.numpy(), dropout_seed(10), 0.2, np.float32))


@pytest.mark.parametrize("device", DEVICES)
def test_edge_cases_keep_their_meaning(device):
    x = on(device, [[1.0, -2.0, 3.0]], requires_grad=True)
    assert F.dropout(x, 0.0) is x and F.dropout(x, 0.7, training=False) is x
    zeros = F.dropout(x, 1.0)
    zeros.sum().backward()
    assert zeros.tolist() == [[0.0, 0.0, 0.0]] and x.grad.tolist() == [[0.0, 0.0, 0.0]]
    for p in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
            F.dropout(x, p)
    ints = F.dropout(tg.tensor([[1, 2, 3]] * 50, device=device), 0.5)   # dropped out as float32
    assert ints.dtype is tg.float32 and set(np.unique(ints.numpy()).tolist()) <= {0.0, 2.0, 4.0, 6.0}
    nan = F.dropout(on(device, [math.nan] * 40), 0.5).numpy()            # x * 0 stays nan
    assert np.isnan(nan).all()


def test_a_backend_without_dropout_falls_back_to_python(caplog, monkeypatch):
    from stage3_native.cpu.backend import CpuBackend
    lean = CpuBackend()
    lean.dropout = None
    lean.name = "lean"
    monkeypatch.setitem(backend._BACKENDS, "lean", lean)
    x = np.random.default_rng(8).normal(size=(3, 7))
    results = {}
    for device in ("cpu", "lean"):
        tg.seed(12)
        leaf = on(device, x, requires_grad=True)
        out = F.dropout(leaf, 0.5)
        out.sum().backward()
        results[device] = out.detach().numpy(), leaf.grad.numpy()
    for lean_result, cpu_result in zip(results["lean"], results["cpu"]):
        np.testing.assert_array_equal(lean_result, cpu_result)
    assert "op dropout not found in backend lean, falling back to python" in caplog.text
