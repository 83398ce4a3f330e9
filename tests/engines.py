"""The parametrization point of the tests: the one list of Tensor devices, and every engine
that can run the gradient checks.

DEVICES names the devices in one order; ``device_params`` gives a test its pytest params,
each carrying its stage marker and ``device(name)``, which conftest.py reads to set aside a
device that cannot run here and to mark the CUDA devices slow. A kernel's tests ask for
``device_params(kernel=name)``: every device that has the kernel, as its backend's class
has the method (a native device also names the optional ones it lacks, in its ``lacks``:
stage3_native/native_backend.py). No other test module spells out a list of devices
(test_engines.py checks that).

An engine is described by how to make a leaf from a float64 numpy array, read values and
gradients back, and backpropagate: stage1, and the Tensor on each device. Tests written
against ENGINES run on every stage and device.
"""
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np
import pytest

DEVICES = ("python", "cpu", "cpu:lazy", "cuda-emu", "cuda")
NATIVE = DEVICES[1:]                    # stage3's: the C kernels, run now or later, and CUDA's
CUDA = ("cuda-emu", "cuda")             # one library's sources, built for the CPU or for a GPU

def kernels():
    """The kernels stage2_tensor/kernels/ declares, by name."""
    from stage2_tensor.kernels import KERNELS
    return tuple(KERNELS)


def backend_class(device):
    """The class whose methods are `device`'s kernels, found without opening a CUDA library."""
    from stage2_tensor.python_backend import PythonBackend
    if device == "python":
        return PythonBackend
    import stage3_native  # noqa: F401  (registers the native devices)
    from stage3_native.cpu.backend import CpuBackend
    from stage3_native.cuda.backend import CudaBackend
    from stage3_native.lazy.backend import LazyBackend
    return {"cpu": CpuBackend, "cpu:lazy": LazyBackend, "cuda-emu": CudaBackend, "cuda": CudaBackend}[device]


def has_kernel(device, kernel):
    """Whether `device` runs `kernel` of stage2_tensor/kernels/ itself (a device
    without it runs stage2's composite, or borrows python's)."""
    assert kernel in kernels(), f"{kernel!r} is not a kernel of stage2_tensor/kernels/"
    return callable(getattr(backend_class(device), kernel, None))


def stage(device):
    return "stage2" if device == "python" else "stage3"


def device_marks(device):
    """The marks of a test on `device`: its stage, and the device it needs (conftest.py)."""
    return [getattr(pytest.mark, stage(device)), pytest.mark.device(device)]


def device_params(*devices, kernel=None, lacking=None):
    """One pytest.param per device, in DEVICES' order: those named (all, when none is), and
    of them those that have `kernel`, or those that lack kernel `lacking` (a test of what
    runs instead)."""
    unknown = set(devices) - set(DEVICES)
    assert not unknown, f"no such device: {sorted(unknown)}"
    return [pytest.param(d, marks=device_marks(d), id=d) for d in DEVICES
            if (not devices or d in devices) and (kernel is None or has_kernel(d, kernel))
            and (lacking is None or not has_kernel(d, lacking))]


@dataclass(frozen=True)
class Engine:
    name: str                                   # test id, e.g. "stage1", later "stage3-cuda"
    stage: str                                  # pytest marker: stage1..stage4
    namespace: Any                              # module with the engine's functions (add, mul, ...)
    leaf: Callable[[np.ndarray], Any]           # float64 array -> engine object that gets a gradient
    value: Callable[[Any], np.ndarray]          # engine object -> float64 array
    grad: Callable[[Any], np.ndarray]           # leaf -> its gradient as a float64 array
    backward: Callable[[Any, np.ndarray], None]  # backpropagate `upstream` (d L / d out) from out
    scalar_only: bool = False                   # inputs and outputs have shape ()
    device: Optional[str] = None                # the Tensor device it needs (pytest marker: device)

    def __repr__(self):
        return self.name


def _stage1():
    import stage1_scalargrad as s1

    def leaf(a):
        assert a.shape == (), f"stage1 holds scalars only, got shape {a.shape}"
        return s1.Value(float(a))

    def backward(out, upstream):
        (out * float(upstream)).backward()      # d(u * out)/d leaf = u * d out/d leaf

    return Engine(name="stage1", stage="stage1", namespace=s1, leaf=leaf,
                  value=lambda v: np.array(v.data), grad=lambda v: np.array(v.grad),
                  backward=backward, scalar_only=True)


def _stage2(device="python"):
    """The one Tensor class on a device: "python" is stage2's backend, "cpu" stage3's C,
    "cpu:lazy" the same C kernels run when a value is read (stage3_native/lazy), "cuda" a
    GPU and "cuda-emu" the same kernels on the CPU."""
    import stage2_tensor as tg
    if device != "python":
        import stage3_native  # noqa: F401  (registers "cpu", "cuda", "cuda-emu")

    def leaf(a):
        return tg.tensor(a.tolist(), dtype=tg.float64, requires_grad=True, device=device)

    def backward(out, upstream):
        out.backward(tg.tensor(np.asarray(upstream).tolist(), dtype=tg.float64, device=device))

    return Engine(name=f"{stage(device)}-{device}", stage=stage(device), namespace=tg, leaf=leaf,
                  value=lambda t: t.detach().numpy().astype(np.float64),
                  grad=lambda t: np.zeros(t.shape) if t.grad is None else t.grad.numpy(),
                  backward=backward, device=device)


ENGINES = [_stage1(), *(_stage2(device) for device in DEVICES)]


def engines_on(*devices):
    """The engines of the Tensor on `devices`, in DEVICES' order."""
    assert set(devices) <= set(DEVICES), f"no such device: {sorted(set(devices) - set(DEVICES))}"
    return [e for e in ENGINES if e.device in devices]


def engine_params(engines=None):
    """pytest.param per engine, carrying its stage marker and the device it needs (where the
    device cannot run here, conftest.py sets its tests aside with one skip saying why)."""
    return [pytest.param(e, marks=device_marks(e.device) if e.device else [getattr(pytest.mark, e.stage)], id=e.name)
            for e in engines or ENGINES]
