"""The parametrization point of the shared suite: every engine that can run the gradient
checks, described by how to make a leaf from a float64 numpy array, read values and
gradients back, and backpropagate. Stage2 and stage3 add their engines to ENGINES; tests
written against this interface then run on every stage and device.
"""
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np
import pytest


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

    stage = "stage2" if device == "python" else "stage3"
    return Engine(name=f"{stage}-{device}", stage=stage, namespace=tg, leaf=leaf,
                  value=lambda t: t.detach().numpy().astype(np.float64),
                  grad=lambda t: np.zeros(t.shape) if t.grad is None else t.grad.numpy(),
                  backward=backward, device=device)


ENGINES = [_stage1(), _stage2("python"), _stage2("cpu"), _stage2("cpu:lazy"), _stage2("cuda-emu"),
           _stage2("cuda")]


def engine_params(engines=None):
    """pytest.param per engine, carrying its stage marker and the device it needs (where the
    device cannot run here, conftest.py sets its tests aside with one skip saying why)."""
    params = []
    for e in engines or ENGINES:
        marks = [getattr(pytest.mark, e.stage)]
        if e.device:
            marks.append(pytest.mark.device(e.device))
        params.append(pytest.param(e, marks=marks, id=e.name))
    return params
