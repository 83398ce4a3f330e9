"""How a tensor's values print (its repr): PyTorch's ``torch.set_printoptions``.

tracegrad's own default prints every value exactly, as Python's list does
(``tensor([0.1, 2.0])``). The options change that as PyTorch's do: ``precision`` digits
after the point (PyTorch's formatter: fixed point, ``1.`` for a tensor of whole numbers,
scientific when the values span more than 1000x, pass 1e8 or fall below 1e-4, or when
``sci_mode`` says so), and past ``threshold`` elements only ``edgeitems`` at each end of
every dimension, the rest as ``...``. The values stay on one line, in Python's list
layout: ``linewidth`` is kept (get_printoptions gives it back) but no line is wrapped, and
values are not padded to one width as PyTorch's are.
"""
import contextlib
import math
from types import SimpleNamespace

# tracegrad's defaults: exact values, nothing left out
_DEFAULTS = dict(precision=None, threshold=math.inf, edgeitems=3, linewidth=80, sci_mode=None)
# PyTorch's profiles; "default" restores tracegrad's defaults above
_PROFILES = {"default": {}, "short": dict(precision=2, threshold=1000, edgeitems=2),
             "full": dict(threshold=math.inf)}

PRINT_OPTS = SimpleNamespace(**_DEFAULTS)


def _count(name, value, allow_inf=False):
    if isinstance(value, bool) or not (isinstance(value, int) or (allow_inf and value == math.inf)) or value < 0:
        raise TypeError(f"set_printoptions(): {name} must be a non-negative int{' or inf' if allow_inf else ''}, "
                        f"got {value!r}")
    return value


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """Set how tensors print, as PyTorch's: a ``profile`` ("default", "short" or "full")
    first, then each option given; an option left None keeps its value, except sci_mode,
    which None sets back to automatic (as PyTorch's)."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions(): profile must be one of {sorted(_PROFILES)}, got {profile!r}")
        vars(PRINT_OPTS).update({**_DEFAULTS, **_PROFILES[profile], "sci_mode": PRINT_OPTS.sci_mode})
    if sci_mode is not None and not isinstance(sci_mode, bool):
        raise TypeError(f"set_printoptions(): sci_mode must be True, False or None, got {sci_mode!r}")
    given = dict(precision=precision, threshold=threshold, edgeitems=edgeitems, linewidth=linewidth)
    for name, value in given.items():
        if value is not None:
            setattr(PRINT_OPTS, name, _count(name, value, allow_inf=name == "threshold"))
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    """The options as a dict (PyTorch's torch._tensor_str.get_printoptions)."""
    return dict(vars(PRINT_OPTS))


@contextlib.contextmanager
def printoptions(**kwargs):
    """set_printoptions(**kwargs) inside the block, the options before it restored after."""
    before = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        vars(PRINT_OPTS).update(before)


class _Ellipsis:
    def __repr__(self):
        return "..."


ELLIPSIS = _Ellipsis()


def _shown(t, edge):
    """t's values as nested lists, each dimension longer than 2 * edge cut to its first and
    last ``edge`` with ELLIPSIS between: only the values shown are read."""
    if t.ndim == 0:
        return t.item()
    n = t.shape[0]
    cut = n > 2 * edge
    if t.ndim == 1:
        return t[:edge].tolist() + [ELLIPSIS] + t[n - edge:].tolist() if cut else t.tolist()
    rows = list(range(edge)) + [None] + list(range(n - edge, n)) if cut else range(n)
    return [ELLIPSIS if i is None else _shown(t[i], edge) for i in rows]


def _flat(values):
    if isinstance(values, list):
        for v in values:
            yield from _flat(v)
    elif values is not ELLIPSIS:
        yield values


def _float_format(values, precision):
    """PyTorch's choice (its _Formatter) of one format for all the floats shown."""
    finite = [abs(v) for v in values if math.isfinite(v)]
    whole = all(v == math.ceil(v) for v in finite)
    nonzero = [v for v in finite if v != 0]
    sci = bool(nonzero) and (max(nonzero) / min(nonzero) > 1000 or max(nonzero) > 1e8 or
                             (not whole and min(nonzero) < 1e-4))
    sci = sci if PRINT_OPTS.sci_mode is None else PRINT_OPTS.sci_mode
    if sci:
        return lambda v: f"{v:.{precision}e}" if math.isfinite(v) else repr(v)
    if whole:
        return lambda v: f"{v:.0f}." if math.isfinite(v) else repr(v)
    return lambda v: f"{v:.{precision}f}" if math.isfinite(v) else repr(v)


def _join(values, fmt):
    if isinstance(values, list):
        return "[" + ", ".join(_join(v, fmt) for v in values) + "]"
    return "..." if values is ELLIPSIS else fmt(values)


def values_str(t):
    """The values part of t's repr, by the options (the module docstring)."""
    summarize = t.numel() > PRINT_OPTS.threshold
    if not summarize and PRINT_OPTS.precision is None:
        return str(t.tolist())              # tracegrad's default: every value, exactly
    values = _shown(t, PRINT_OPTS.edgeitems) if summarize else t.tolist()
    fmt = repr
    if PRINT_OPTS.precision is not None and t.dtype.is_floating_point:
        fmt = _float_format(list(_flat(values)), PRINT_OPTS.precision)
    return _join(values, fmt)
