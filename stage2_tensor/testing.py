"""PyTorch's ``torch.testing.assert_close``: actual and expected equal within tolerances
chosen by dtype, or an AssertionError saying how they differ, in PyTorch's words.

    |actual - expected| <= atol + rtol * |expected|     element-wise; NaN only with equal_nan

The default (rtol, atol) by dtype are PyTorch's; an integer or bool compares exactly.
"""
from . import dtypes
from .elementwise import where
from .tensor import Tensor

__all__ = ["assert_close"]

# (rtol, atol) by dtype, PyTorch's defaults
TOLERANCES = {dtypes.float16: (1e-3, 1e-5), dtypes.bfloat16: (1.6e-2, 1e-5), dtypes.float32: (1.3e-6, 1e-5),
              dtypes.float64: (1e-7, 1e-7)}


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Check that actual and expected (tensors, numbers, or sequences or dicts of them) are close."""
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                         f"{'atol' if atol is None else 'rtol'}.")
    if isinstance(actual, (list, tuple)) and isinstance(expected, (list, tuple)):
        _same("length", len(actual), len(expected), msg)
        for a, e in zip(actual, expected):
            assert_close(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device,
                         check_dtype=check_dtype, check_stride=check_stride, msg=msg)
        return
    if isinstance(actual, dict) and isinstance(expected, dict):
        _same("keys", sorted(map(str, actual)), sorted(map(str, expected)), msg)
        for key in actual:
            assert_close(actual[key], expected[key], rtol=rtol, atol=atol, equal_nan=equal_nan,
                         check_device=check_device, check_dtype=check_dtype, check_stride=check_stride, msg=msg)
        return
    if isinstance(actual, Tensor) or isinstance(expected, Tensor):
        _tensors(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, check_stride, msg)
    else:
        _scalars(actual, expected, rtol, atol, equal_nan, check_dtype, msg)


def _tensors(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, check_stride, msg):
    for name, x in (("actual", actual), ("expected", expected)):
        if not isinstance(x, Tensor):
            raise TypeError(f"assert_close: {name} is a {type(x).__name__}, the other a Tensor; compare like with like")
    _same("shape", actual.shape, expected.shape, msg)
    if check_device:
        _same("device", actual.device, expected.device, msg)
    if check_dtype:
        _same("dtype", actual.dtype, expected.dtype, msg)
    if check_stride:
        _same("stride()", actual.stride(), expected.stride(), msg)
    if rtol is None:
        rtol, atol = max(_tolerance(actual.dtype), _tolerance(expected.dtype))
    a = actual.detach().to(device=expected.device, dtype=dtypes.float64)
    e = expected.detach().to(dtype=dtypes.float64)
    diff = (a - e).abs()
    close = where(a == e, a == e, diff <= atol + rtol * e.abs())        # equal infinities are close
    if equal_nan:
        close = where(a != a, e != e, close)
    bad = close.to(dtype=dtypes.int64) == 0
    count = int(bad.sum().item())
    if not count:
        return
    exact = (rtol, atol) == (0, 0)
    relative = diff / e.abs()
    n = actual.numel()
    lines = [f"Tensor-likes are not {'equal' if exact else 'close'}!", "",
             f"Mismatched elements: {count} / {n} ({100 * count / n:.1f}%)"]
    for what, values, allowed in (("absolute", diff, atol), ("relative", relative, rtol)):
        worst = _worst(values, bad)
        value = values.reshape(-1)[worst].item()
        value = int(value) if what == "absolute" and not actual.dtype.is_floating_point and value == value else value
        lines.append(f"Greatest {what} difference: {value} at index {_index(worst, actual.shape)}"
                     + ("" if exact else f" (up to {allowed} allowed)"))
    _fail("\n".join(lines), msg)


def _worst(values, bad):
    """The flat index of the largest of values where bad (a NaN counts as largest)."""
    flat, bad = values.reshape(-1), bad.reshape(-1)
    nan = where(bad, flat != flat, bad)
    if nan.any().item():
        return int(nan.to(dtype=dtypes.int64).argmax().item())
    return int(where(bad, flat, -1.0).argmax().item())


def _index(flat, shape):
    index = []
    for size in reversed(shape):
        index.append(flat % size)
        flat //= size
    return tuple(reversed(index))


def _scalars(actual, expected, rtol, atol, equal_nan, check_dtype, msg):
    for x in (actual, expected):
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            if actual == expected:
                return
            _fail(f"Objects are not equal!\n\nExpected {expected!r} but got {actual!r}.", msg)
    if check_dtype and type(actual) is not type(expected):
        _fail(f"The values for attribute 'dtype' do not match: {type(actual).__name__} != "
              f"{type(expected).__name__}.", msg)
    if rtol is None:
        rtol, atol = (1e-7, 1e-7) if isinstance(actual, float) or isinstance(expected, float) else (0, 0)
    diff = abs(actual - expected)
    if diff <= atol + rtol * abs(expected) or actual == expected or (equal_nan and actual != actual
                                                                      and expected != expected):
        return
    relative = diff / abs(expected) if expected else float("inf")
    _fail(f"Scalars are not close!\n\nExpected {expected} but got {actual}.\n"
          f"Absolute difference: {diff} (up to {atol} allowed)\nRelative difference: {relative} "
          f"(up to {rtol} allowed)", msg)


def _tolerance(dtype):
    return TOLERANCES.get(dtype, (0, 0))


def _same(attribute, a, b, msg):
    if a != b:
        _fail(f"The values for attribute '{attribute}' do not match: {a} != {b}.", msg)


def _fail(message, msg):
    raise AssertionError(msg(message) if callable(msg) else msg if msg is not None else message)
