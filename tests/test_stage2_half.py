"""float16 and bfloat16 (chapter 1, "Half precision"): storage dtypes computed in float32 and
rounded on store, as PyTorch's CPU does.

References are numpy's: the float64 answer on the half inputs (exact: every half is a
double), rounded to the half dtype through float32 (numpy's float16 for float16; for
bfloat16, float32's bits rounded to nearest even by hand, since numpy has no bfloat16).

Tolerance, one ulp of the output: a kernel computes in float32, within a few float32 ulps
(2^-23 relative) of the exact value, and rounds that to the nearest half. The exact value
rounds to the reference; the float32 one may sit on the other side of a midpoint between
two halves, which changes the result by one half ulp (2^-10 relative for float16, 2^-7 for
bfloat16) and no more. Sums and products add float32 rounding of their terms, bounded
(n 2^-23 times the sum of the terms' magnitudes) and far below a half ulp here. To see that
results are rounded to nearest, not truncated (which fails half the time), most elements
must match the reference exactly.
"""
import io

import numpy as np
import pytest

import stage2_tensor as tg
from stage2_tensor import dtypes, ops

from .engines import CUDA, device_params
from .optable import PRIMITIVES

pytestmark = pytest.mark.stage2

DEVICES = device_params()
HALVES = [tg.float16, tg.bfloat16]
HALF_IDS = ["float16", "bfloat16"]
FUSED = {p.name for p in ops.FUSED}


# ---- numpy references ---------------------------------------------------------------------
def round_bf16(x):
    """float64 values rounded to bfloat16 (through float32, to nearest even; NaN stays NaN),
    as float64."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    with np.errstate(invalid="ignore"):                 # NaNs: replaced below
        out = rounded.astype(np.uint32).view(np.float32).astype(np.float64)
    return np.where(np.isnan(x), np.nan, out)


def round_half(x, dtype):
    x = np.asarray(x, dtype=np.float64)
    if dtype is tg.float16:
        return x.astype(np.float32).astype(np.float16).astype(np.float64)
    return round_bf16(x)


def ulp(x, dtype):
    """The gap between the half-precision x and the next one away from zero."""
    mantissa, smallest = (10, -14) if dtype is tg.float16 else (7, -126)
    exponent = np.floor(np.log2(np.maximum(np.abs(x), 2.0 ** smallest)))
    return 2.0 ** (exponent - mantissa)


def values(t):
    """A tensor's values as float64 (bfloat16 through float32: numpy has none)."""
    if t.dtype is tg.bfloat16:
        t = t.float()
    return t.detach().numpy().astype(np.float64)


def check(got, exact, dtype, slack=0.0, what=""):
    """got within one ulp (plus ``slack``, a float32 computation's error) of exact rounded
    to dtype; returns how many match it exactly."""
    expected = round_half(exact, dtype)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected), err_msg=what)    # asin(2): nan
    nan = np.isnan(expected)
    err = np.where(nan, 0.0, np.abs(got - expected))
    bound = np.where(nan, 0.0, ulp(np.maximum(np.abs(expected), np.abs(got)), dtype) + slack)
    assert np.all(err <= bound), f"{what}: worst {np.max(err - bound)} beyond one ulp, got {got}, expected {expected}"
    return int(np.sum((got == expected) | nan)), expected.size


def half_tensor(a, dtype, device, requires_grad=False):
    return tg.tensor(a.tolist(), dtype=dtype, device=device, requires_grad=requires_grad)


RNG = np.random.default_rng(0)
X = RNG.uniform(-3, 3, (4, 6))
Y = RNG.uniform(-3, 3, (4, 6))
POSITIVE = np.abs(X) + 0.1


# ---- element-wise, reductions, products on every device --------------------------------------
@pytest.mark.parametrize("dtype", HALVES, ids=HALF_IDS)
@pytest.mark.parametrize("device", DEVICES)
def test_every_elementwise_primitive_rounds_its_float32_result(device, dtype):
    matched = total = 0
    fused = tg.backend.get(device).fused            # python's: none (composites instead)
    for name in ops.names("unary", "binary", fused=True):
        if name in FUSED and name not in fused:
            continue
        first = POSITIVE if PRIMITIVES[name].positive else X
        arrays = [round_half(a, dtype) for a in ((first,) if ops.BY_NAME[name].arity == 1 else (first, Y))]
        ts = [half_tensor(a, dtype, device) for a in arrays]
        x = ts[0]
        if len(ts) == 1:
            out = x.launch("unary", name, x.as_view(), dtype, shape=x.shape, dtype=dtype)
        else:
            out = x.launch("binary", name, x.as_view(), ts[1].as_view(), dtype, shape=x.shape, dtype=dtype)
        assert out.dtype is dtype and out.device == device
        m, n = check(values(out), PRIMITIVES[name].value(*arrays), dtype, what=name)
        matched, total = matched + m, total + n
    assert matched >= 0.95 * total, f"only {matched} of {total} rounded to nearest"


@pytest.mark.parametrize("dtype", HALVES, ids=HALF_IDS)
@pytest.mark.parametrize("device", DEVICES)
def test_comparisons_and_where_on_halves(device, dtype):
    a, b = round_half(X, dtype), round_half(np.where(RNG.random(X.shape) < 0.3, X, Y), dtype)
    ta, tb = half_tensor(a, dtype, device), half_tensor(b, dtype, device)
    for name in ops.names("comparison"):
        got = getattr(ta, f"__{name}__")(tb)
        assert got.dtype is tg.bool
        np.testing.assert_array_equal(got.numpy(), PRIMITIVES[name].value(a, b))
    picked = tg.where(ta > tb, ta, tb)
    assert picked.dtype is dtype
    np.testing.assert_array_equal(values(picked), np.maximum(a, b))      # a choice: exact


@pytest.mark.parametrize("dtype", HALVES, ids=HALF_IDS)
@pytest.mark.parametrize("device", DEVICES)
def test_reductions_softmax_and_layer_norm(device, dtype):
    x = round_half(X, dtype)
    t = half_tensor(x, dtype, device)
    # sums of 6 or 24 terms in float32: error below 24 * 2^-23 * sum|x| < 2e-4 (slack)
    slack = x.size * 2.0 ** -23 * np.abs(x).sum()
    for name, got, exact in [("sum", t.sum(1), x.sum(1)), ("sum all", t.sum(), x.sum()),
                             ("mean", t.mean(0), x.mean(0)), ("max", t.max(1).values, x.max(1)),
                             ("amin", t.min(), x.min())]:
        assert got.dtype is dtype, name
        check(values(got), exact, dtype, slack, name)
    np.testing.assert_array_equal(t.argmax(1).numpy(), x.argmax(1))
    # softmax, log_softmax and layer_norm in float32 on rows of 6 values of at most 3: a few
    # float32 ulps of terms below 25 (log-sum-exp, x - mean over rstd), under 1e-5 (slack)
    e = np.exp(x - x.max(1, keepdims=True))
    check(values(t.softmax(1)), e / e.sum(1, keepdims=True), dtype, 1e-6, "softmax")
    check(values(t.log_softmax(1)), np.log(e / e.sum(1, keepdims=True)), dtype, 1e-5, "log_softmax")
    normed = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5)
    check(values(tg.nn.functional.layer_norm(t, (6,))), normed, dtype, 1e-5, "layer_norm")


@pytest.mark.parametrize("dtype", HALVES, ids=HALF_IDS)
@pytest.mark.parametrize("device", DEVICES)
def test_matmul_and_conv2d(device, dtype):
    a, b = round_half(X, dtype), round_half(Y.T, dtype)
    got = half_tensor(a, dtype, device) @ half_tensor(b, dtype, device)
    assert got.dtype is dtype
    # k = 6 products summed in float32: error below 6 * 2^-23 * |a| @ |b|
    check(values(got), a @ b, dtype, 6 * 2.0 ** -23 * (np.abs(a) @ np.abs(b)), "matmul")
    x = round_half(RNG.uniform(-1, 1, (1, 2, 5, 5)), dtype)
    w = round_half(RNG.uniform(-1, 1, (3, 2, 3, 3)), dtype)
    bias = round_half(RNG.uniform(-1, 1, (3,)), dtype)
    conv = tg.nn.functional.conv2d(half_tensor(x, dtype, device), half_tensor(w, dtype, device),
                                   half_tensor(bias, dtype, device), padding=1)
    assert conv.dtype is dtype and conv.shape == (1, 3, 5, 5)
    torch = pytest.importorskip("torch")
    product = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), padding=1).numpy()
    exact = product + bias.reshape(3, 1, 1)
    # where the convolution is a product, rounded, then a bias add (stage2's composite; a
    # fused kernel rounds once, as PyTorch's), the product's rounding adds up to one ulp of
    # the product, which may be larger than the sum
    check(values(conv), exact, dtype, ulp(product, dtype), "conv2d")


@pytest.mark.parametrize("dtype", HALVES, ids=HALF_IDS)
@pytest.mark.parametrize("device", DEVICES)
def test_autograd_through_halves_gives_half_gradients(device, dtype):
    a, b = round_half(X, dtype), round_half(Y, dtype)
    ta, tb = half_tensor(a, dtype, device, True), half_tensor(b, dtype, device, True)
    (ta * tb).sum().backward()
    assert ta.grad.dtype is dtype and tb.grad.dtype is dtype         # as PyTorch
    np.testing.assert_array_equal(values(ta.grad), b)                 # d(sum a*b)/da = b, exact
    w = half_tensor(round_half(Y.T, dtype), dtype, device, True)
    (ta @ w).tanh().sum().backward()
    assert w.grad.dtype is dtype
    rows = tg.tensor([2, 0, 2], device=device)
    ta.grad = None
    ta[rows].sum().backward()                               # index_add, in float32, rounded
    assert ta.grad.dtype is dtype
    np.testing.assert_array_equal(values(ta.grad)[:, 0], [1.0, 0.0, 2.0, 0.0])
    grad = a.T @ (1 - np.tanh(a @ round_half(Y.T, dtype)) ** 2)
    # three rounded steps (matmul, tanh, its gradient, the product): a few ulps of the sum
    np.testing.assert_allclose(values(w.grad), grad, rtol=8 * ulp(1.0, dtype), atol=8 * ulp(np.abs(grad).max(), dtype))


@pytest.mark.parametrize("dtype", HALVES, ids=HALF_IDS)
@pytest.mark.parametrize("device", DEVICES)
def test_an_optimizer_updates_half_parameters_in_place(device, dtype):
    p = half_tensor(round_half(X, dtype), dtype, device, True)
    storage = p.storage
    p.grad = half_tensor(round_half(Y, dtype), dtype, device)
    tg.optim.SGD([p], lr=0.125).step()
    assert p.storage is storage and p.dtype is dtype
    check(values(p), round_half(X, dtype) - 0.125 * round_half(Y, dtype), dtype, what="sgd")


# ---- conversion bits ----------------------------------------------------------------------
def native():
    from stage3_native.cpu import backend as cpu
    return cpu


def conversion_paths():
    """Each dtype's conversion paths: the portable one everywhere, the CPU's instruction set
    where this CPU has it; where it lacks one, its test is skipped saying so (no test
    pretends to cover a path this CPU cannot run)."""
    cpu = native()
    params = []
    for dtype in HALVES:
        for path, instruction in (("portable", None), ("simd", cpu.HALF_INSTRUCTIONS[dtype])):
            runs = instruction is None or instruction in cpu.half_paths(dtype)
            marks = () if runs else pytest.mark.skip(reason=f"this CPU has no {instruction}")
            params.append(pytest.param(dtype, path, marks=marks, id=f"{dtype.name}-{instruction or path}"))
    return params


def float32_sweep():
    """float32 bit patterns around every place rounding decides: for each upper part, the
    low bits at 0, just below, at and just above the halfway point (ties to even), and all
    ones, for float16's 13 dropped bits and bfloat16's 16; with subnormals, overflow and NaNs
    among them, since every exponent is covered."""
    sweep = []
    for dropped in (13, 16):
        upper = np.arange(1 << (32 - dropped), dtype=np.uint64) << dropped
        half = 1 << (dropped - 1)
        for low in (0, 1, half - 1, half, half + 1, (1 << dropped) - 1):
            sweep.append(upper + low)
    return np.concatenate(sweep).astype(np.uint32)


SWEEP = None


def sweep_bits():
    global SWEEP
    if SWEEP is None:
        SWEEP = float32_sweep()
    return SWEEP


def convert(dtype, path, x):
    """Narrow float32 array x to dtype's bits (uint16), or widen bits to float32, on device
    "cpu" (csrc/half.c) by one path."""
    cpu, be = native(), tg.backend.get("cpu")
    cpu.use_half_instructions(path == "simd")
    try:
        if x.dtype == np.float32:
            t = tg.from_numpy(x, device="cpu").to(dtype=dtype)
            return np.frombuffer(be.to_bytes(t.as_view()), np.uint16)
        h = tg.Tensor.from_buffer(be.from_bytes(x.tobytes(), dtype), x.shape, dtype, "cpu")
        return h.float().numpy()
    finally:
        cpu.use_half_instructions(True)


@pytest.mark.parametrize("dtype,path", conversion_paths())
def test_widening_all_65536_halves(dtype, path):
    bits = np.arange(65536, dtype=np.uint16)
    got = convert(dtype, path, bits)
    assert native().half_path(dtype) == native().half_paths(dtype)[-1]      # switched back
    if dtype is tg.bfloat16:                                   # the upper half of a float32
        np.testing.assert_array_equal(got.view(np.uint32), bits.astype(np.uint32) << 16)
        return
    expected = bits.view(np.float16).astype(np.float32)
    nan = np.isnan(expected)
    np.testing.assert_array_equal(got.view(np.uint32)[~nan], expected.view(np.uint32)[~nan])
    # a NaN stays NaN, quieted, its sign and payload kept (as F16C does)
    b = bits[nan].astype(np.uint32)
    quiet = ((b & 0x8000) << 16) | 0x7F800000 | 0x400000 | ((b & 0x3FF) << 13)
    np.testing.assert_array_equal(got.view(np.uint32)[nan], quiet)


@pytest.mark.parametrize("dtype,path", conversion_paths())
def test_narrowing_a_sweep_of_float32_rounds_to_nearest_even(dtype, path):
    bits = sweep_bits()
    x = bits.view(np.float32)
    got = convert(dtype, path, x)
    nan = np.isnan(x)
    if dtype is tg.float16:
        with np.errstate(over="ignore"):                # beyond 65520: inf, as intended
            expected = x.astype(np.float16).view(np.uint16)     # numpy rounds to nearest even
        np.testing.assert_array_equal(got[~nan], expected[~nan])
        quiet = ((bits[nan] >> 16) & 0x8000) | 0x7E00 | ((bits[nan] >> 13) & 0x3FF)
        np.testing.assert_array_equal(got[nan], quiet.astype(np.uint16))
    else:
        expected = (round_bf16(x).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
        np.testing.assert_array_equal(got[~nan], expected[~nan])
        assert np.all(got[nan] == 0x7FC0)                   # PyTorch's NaN
    if path == "simd":                                      # the same bits as the other path
        np.testing.assert_array_equal(got, convert(dtype, "portable", x))


@pytest.mark.parametrize("dtype", HALVES, ids=HALF_IDS)
def test_the_python_encoding_agrees_with_the_kernels(dtype):
    """The python device's conversion (dtypes.py, struct and bit code) gives the C kernels'
    bits on every 97th value of the sweep."""
    x = sweep_bits()[::97].view(np.float32)
    got = np.array([dtype.encode(v) for v in x.tolist()], dtype=np.uint16)
    np.testing.assert_array_equal(got, convert(dtype, "portable", x))


@pytest.mark.parametrize("device", device_params(*CUDA))
@pytest.mark.parametrize("dtype", HALVES, ids=HALF_IDS)
def test_the_cuda_conversion_agrees_with_the_kernels(dtype, device):
    """The CUDA devices' conversion (half.h in CUDA) gives the C kernels' bits on every 97th
    value of the sweep."""
    x = sweep_bits()[::97].view(np.float32)
    t = tg.from_numpy(x, device=device).to(dtype=dtype)
    data = tg.backend.get(device).to_bytes(t.as_view())
    np.testing.assert_array_equal(np.frombuffer(data, np.uint16), convert(dtype, "portable", x))


# ---- surface --------------------------------------------------------------------------------
def test_promotion_follows_pytorch():
    f16, bf16, f32, f64, i64 = tg.float16, tg.bfloat16, tg.float32, tg.float64, tg.int64
    table = {(f16, f16): f16, (f16, bf16): f32, (f16, f32): f32, (bf16, f64): f64,
             (f16, i64): f16, (bf16, tg.int32): bf16, (tg.bool, bf16): bf16}
    for (a, b), expected in table.items():
        assert dtypes.promote(a, b) is expected and dtypes.promote(b, a) is expected
        got = (tg.zeros(2, dtype=a) + tg.zeros(2, dtype=b)).dtype
        assert got is expected, (a, b)
    x = tg.ones(2, dtype=f16)
    assert (x * 2.5).dtype is f16 and (x + 1).dtype is f16 and (x > 0.5).dtype is tg.bool
    torch = pytest.importorskip("torch")
    names = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
             "float64": torch.float64, "int64": torch.int64, "int32": torch.int32, "bool": torch.bool}
    for (a, b), expected in table.items():
        assert torch.promote_types(names[a.name], names[b.name]) == names[expected.name]


def test_printing_numpy_and_finfo():
    x = tg.tensor([1.0, 0.1, 70000.0]).half()
    assert repr(x) == "tensor([1.0, 0.0999755859375, inf], dtype=tracegrad.float16)"
    assert "dtype=tracegrad.bfloat16" in repr(x.bfloat16())
    assert tg.half is tg.float16 and x.is_floating_point() and x.to(tg.float32).dtype is tg.float32
    assert x.numpy().dtype == np.float16
    with pytest.raises(TypeError, match="BFloat16"):
        x.bfloat16().numpy()
    y = tg.from_numpy(np.array([0.5, -2.0], dtype=np.float16))
    assert y.dtype is tg.float16 and y.tolist() == [0.5, -2.0]
    assert tg.finfo(tg.float16).eps == 2.0 ** -10 and tg.finfo(tg.bfloat16).max > 3e38
    with pytest.raises(TypeError, match="floating-point dtype"):
        tg.finfo(tg.int64)


@pytest.mark.parametrize("device", DEVICES)
def test_conversions_between_dtypes(device):
    x = tg.tensor([1.5, -2.75, 1e-6, 65519.0, 3.0], device=device, dtype=tg.float64)
    h = x.half()
    assert h.tolist() == [1.5, -2.75, round_half(1e-6, tg.float16), 65504.0, 3.0]
    assert h.double().tolist() == h.tolist()                       # widening is exact
    assert h.to(tg.int32).tolist() == [1, -2, 0, 65504, 3]          # truncated, as PyTorch
    assert tg.tensor([1, 2, 257], device=device).bfloat16().tolist() == [1.0, 2.0, 256.0]
    assert h.bfloat16().tolist() == round_bf16(np.array(h.tolist())).tolist()
    assert tg.full((3,), 0.1, dtype=tg.bfloat16, device=device).tolist() == [round_bf16(0.1)] * 3
    assert h[1:4:2].contiguous().tolist() == [-2.75, 65504.0]      # strided copy: the bits
    index = tg.tensor([4, 0, 4], device=device)
    assert h[index].tolist() == [3.0, 1.5, 3.0] and h[index].dtype is tg.float16   # index_select
    b = tg.zeros(4, device=device).bfloat16()
    b[1] = 2.5
    b[2:4] = tg.tensor([0.1, 3.0], device=device)              # write, converted on the way
    assert b.tolist() == [0.0, 2.5, round_bf16(0.1), 3.0]


@pytest.mark.parametrize("device", DEVICES)
def test_save_and_load_are_bit_exact(device):
    bits = np.array([0x3C00, 0x7D01, 0xFE00, 0x8000, 0x0001, 0x7BFF], dtype=np.uint16)  # a NaN payload too
    be = tg.backend.get(device)
    t = tg.Tensor.from_buffer(be.from_bytes(bits.tobytes(), tg.float16), (6,), tg.float16, device)
    b = tg.tensor([0.1, -3.0], device=device).bfloat16()
    f = io.BytesIO()
    tg.save({"h": t, "b": b}, f)
    f.seek(0)
    loaded = tg.load(f)
    assert loaded["h"].dtype is tg.float16 and loaded["b"].dtype is tg.bfloat16
    assert np.frombuffer(be.to_bytes(loaded["h"].as_view()), np.uint16).tolist() == bits.tolist()
    assert loaded["b"].tolist() == b.tolist()


@pytest.mark.usefixtures("kernel_cache")
def test_lazy_fuses_the_float32_work_between_half_casts():
    """Device cpu:lazy runs a half's casts eagerly (its generated C knows float32 and float64
    only, lazy/fusion.py) and still fuses the float32 ops between them: the same bits as
    device "cpu"."""
    from stage3_native import lazy
    x = RNG.uniform(-2, 2, (8, 16)).astype(np.float16)

    def fn(t):
        return (t.float() * 3 - 1).tanh().half().relu()

    eager = fn(tg.from_numpy(x, device="cpu")).numpy()
    with lazy.fusion(min_elements=0):
        out = fn(tg.from_numpy(x, device="cpu:lazy"))
        lazy.reset_kernel_count()
        got = out.numpy()
        # the cast up, one loop for * - tanh, the cast down, relu (computed in float32 between casts)
        assert lazy.kernel_count("loop") >= 1 and lazy.kernel_count("contiguous") >= 2
    np.testing.assert_array_equal(got, eager)
    assert got.dtype == np.float16


def test_a_kernel_a_device_lacks_still_computes_halves_in_float32():
    """The python fallback (backend.on_python) inside the float32 rule: a device without
    ``unary`` gets the python kernel's float32 result, rounded to the half on store."""
    from stage2_tensor.python_backend import PythonBackend

    class Lacking(PythonBackend):
        name = "lacking-unary"
        unary = None

    tg.backend.register("lacking-unary", Lacking())
    x = round_half(X, tg.bfloat16)
    got = half_tensor(x, tg.bfloat16, "lacking-unary").exp()
    assert got.dtype is tg.bfloat16 and got.device == "lacking-unary"
    check(values(got), np.exp(x), tg.bfloat16, what="exp on python's kernel")


@pytest.mark.parametrize("dtype", HALVES, ids=HALF_IDS)
def test_a_module_converted_to_half_runs_in_it(dtype):
    with tg.device("python"):
        model = tg.nn.Sequential(tg.nn.Linear(6, 5), tg.nn.ReLU(), tg.nn.Linear(5, 2))
        reference = model(tg.tensor(round_half(X, dtype).tolist())).detach().numpy()
    model.half() if dtype is tg.float16 else model.bfloat16()
    assert all(p.dtype is dtype for p in model.parameters())
    out = model(half_tensor(round_half(X, dtype), dtype, "python"))
    assert out.dtype is dtype
    # three roundings of float32 results in a row (two products, one bias each): a few ulps
    np.testing.assert_allclose(values(out), reference, rtol=0, atol=8 * ulp(np.abs(reference).max(), dtype))
