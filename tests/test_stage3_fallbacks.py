"""Where a native device ("cpu", "cuda-emu") leaves a kernel to the python device, it says so
in one table (NativeBackend.python_fallbacks, and lacks for the optional kernels it has none
of; native_backend.kernel_table prints both): a run falls back nowhere else, every call
reaching the python device counted, and a fallback the table does not list is refused."""
import numpy as np
import pytest

import stage2_tensor as tg
import stage2_tensor.nn as nn
import stage2_tensor.nn.functional as F
import stage3_native  # noqa: F401  (registers "cpu", "cuda" and "cuda-emu")
from stage2_tensor import backend, dtypes
from stage2_tensor.backend import View
from stage3_native.native_backend import OPTIONAL_KERNELS, kernel_table

from .engines import CUDA, device_params

pytestmark = pytest.mark.stage3

DEVICES = device_params("cpu", *CUDA)           # the NativeBackend devices
# The python device's methods that move data in and out of it, which every fallback uses
MOVES = frozenset(("from_flat", "to_flat", "size", "has", "address"))


def python_kernels():
    py = backend.get("python")
    return sorted(name for name in dir(py) if not name.startswith("_") and name not in MOVES
                  and callable(getattr(py, name)))


def declared(be):
    return {(name, dtype) for name, leaves in be.python_fallbacks.items() for dtype in leaves}


def dtype_of(args):
    """The dtype a kernel call computes in: its last argument's, or a View's (index_add's
    src), or its first list's (an optimizer's parameters)."""
    if isinstance(args[-1], dtypes.DType):
        return args[-1]
    views = [a for a in args if isinstance(a, View)]
    return views[-1].dtype if views else args[0][0].dtype


@pytest.fixture
def python_calls(monkeypatch):
    """Every call that reaches a kernel of the python device, as (kernel, dtype): the
    outermost only (a python kernel may call another)."""
    py, calls, depth = backend.get("python"), [], [0]

    def counted(name, kernel):
        def call(*args):
            if depth[0] == 0:
                calls.append((name, dtype_of(args)))
            depth[0] += 1
            try:
                return kernel(*args)
            finally:
                depth[0] -= 1
        return call

    for name in python_kernels():
        monkeypatch.setattr(py, name, counted(name, getattr(py, name)))
    return calls


@pytest.mark.parametrize("device", DEVICES)
def test_the_table_says_what_the_device_lacks(device):
    be = backend.get(device)
    print("\n" + "\n".join(kernel_table(be)))
    assert [name for name in python_kernels() if not be.has(name)] == []     # launch never falls back
    assert be.lacks == {name for name in OPTIONAL_KERNELS if not be.has(name)}
    for name, leaves in be.python_fallbacks.items():
        assert be.has(name) and tg.float32 not in leaves and tg.float64 not in leaves, name


def small_run(device, python_calls):
    """A few training steps touching the kernels a model uses (convolution, pooling, layer
    norm, dropout, softmax, cross-entropy, SGD and Adam), then integer work; what reaches
    the python device counted from the first step on (modules are made there)."""
    rng = np.random.default_rng(0)
    x = tg.tensor(rng.standard_normal((4, 1, 6, 6)).tolist(), device=device)
    target = tg.tensor([0, 2, 1, 2], device=device)
    conv, linear, norm = nn.Conv2d(1, 2, 3, padding=1), nn.Linear(18, 3), nn.LayerNorm(18)
    model = [m.to(device) for m in (conv, linear, norm)]
    params = [p for m in model for p in m.parameters()]
    opts = [tg.optim.SGD(params[:2], lr=0.1, momentum=0.9), tg.optim.Adam(params[2:], lr=0.01)]
    python_calls.clear()
    for _ in range(2):
        for opt in opts:
            opt.zero_grad()
        h = F.max_pool2d(conv(x).relu(), 2).reshape(4, 18)
        logits = linear(F.dropout(norm(h), 0.25, training=True))
        (F.cross_entropy(logits, target) + logits.softmax(1).sum() * 0.1).backward()
        for opt in opts:
            opt.step()
    counts = tg.tensor([[1, 2], [3, 4]], device=device)
    (counts @ counts).tolist()                       # an integer product: the table's matmul
    counts.cumsum(0).tolist(), (counts > 2).sum().item(), counts[tg.tensor([1, 0], device=device)].tolist()


@pytest.mark.parametrize("device", DEVICES)
def test_a_run_falls_back_only_where_the_table_says(device, python_calls):
    small_run(device, python_calls)
    assert ("matmul", tg.int64) in python_calls       # the counter sees a fallback when there is one
    undeclared = sorted({(name, dtype.name) for name, dtype in python_calls} -
                        {(name, dtype.name) for name, dtype in declared(backend.get(device))})
    assert undeclared == []


@pytest.mark.parametrize("device", DEVICES)
def test_a_fallback_the_table_does_not_list_is_refused(device, monkeypatch, python_calls):
    be = backend.get(device)
    monkeypatch.setattr(be, "python_fallbacks", {k: v for k, v in be.python_fallbacks.items() if k != "matmul"})
    counts = tg.tensor([[1, 2], [3, 4]], device=device)
    with pytest.raises(NotImplementedError, match=rf"matmul for int64 on device '{device}': the device declares "
                                                  r"no fallback to the python device"):
        counts @ counts
    assert python_calls == []
