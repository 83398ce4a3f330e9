"""The kernel declarations (stage2_tensor/kernels/) are the one place a kernel is described:
the devices' methods take the parameters they declare, lazy records exactly the kernels
declared to compute, the native libraries have a C function for each kernel declared with
its C parameters, and the interface the declarations print names every kernel with its
parameters' kinds and what it computes."""
import inspect

import pytest

import stage3_native  # noqa: F401  (registers the native devices)
from stage2_tensor import kernels
from stage2_tensor.backend import View
from stage2_tensor.dtypes import float32
from stage2_tensor.kernels import KERNELS
from stage2_tensor.python_backend import PythonBackend
from stage3_native import cuda_build, ops_header
from stage3_native._native import lib
from stage3_native.cpu.backend import CpuBackend
from stage3_native.cuda.backend import CudaBackend
from stage3_native.lazy.backend import RECORDED, LazyBackend

pytestmark = pytest.mark.stage3


def test_the_interface_shows_every_kernel_with_its_kinds_and_what_it_computes():
    text = kernels.interface()
    for k in KERNELS.values():
        params = ", ".join(f"{name}: {kind}" for name, kind, _ in k.params)
        assert f"### `{k.name}({params})" in text, k.name
        assert len(k.doc) > 20 and k.doc in text, k.name
    assert text.count("### ") == len(KERNELS)


@pytest.mark.parametrize("cls", [PythonBackend, CpuBackend, CudaBackend])
def test_each_kernel_a_device_writes_out_takes_the_declared_parameters(cls):
    written = [name for name in KERNELS if name in vars(cls)]
    assert written, cls
    for name in written:
        method = inspect.unwrap(getattr(cls, name))
        params = [p for p in inspect.signature(method).parameters if p != "self"]
        assert params == [p for p, _, _ in KERNELS[name].params], f"{cls.__name__}.{name}"


def test_the_python_device_has_every_kernel_but_the_optional_ones():
    missing = [name for name, k in KERNELS.items() if not callable(getattr(PythonBackend, name, None))]
    assert sorted(missing) == sorted(kernels.names(optional=True))


def test_lazy_records_the_compute_kernels_and_runs_the_in_place_ones_at_once():
    assert set(RECORDED) == {n for n, k in KERNELS.items() if k.role == "compute"}
    for name in kernels.names("compute", "in_place"):
        has = callable(getattr(CpuBackend, name, None))
        assert callable(getattr(LazyBackend, name, None)) == has, name
        if has:
            how = "Record" if name in RECORDED else "Run every pending node"
            assert getattr(LazyBackend, name).__doc__.startswith(how), name


def test_each_native_declaration_has_its_c_and_cuda_functions():
    cuda = cuda_build.declarations()
    for k in KERNELS.values():
        if not k.native:
            continue
        for dtype in k.c_dtypes or ("float32", "float64"):
            assert hasattr(lib, f"tg_{k.name}_{ops_header.C_TYPES[dtype][1]}"), (k.name, dtype)
        assert f"tg_cuda_{k.name}(" in cuda, k.name
        named = {name for name, _, _ in k.params} | set(k.returns)
        unnamed = [name for _, name in k.native_args if name not in named]
        assert not unnamed or k.sizes is not None, (k.name, unnamed)


def _view(shape, dtype=float32):
    from stage2_tensor.strides import make_strides
    return View(None, shape, make_strides(shape), 0, dtype)


@pytest.mark.parametrize("call, message", [
    (("softmax", _view((2, 3)), 2, False, float32), "dim 2 is not a dimension"),
    (("layer_norm", _view((2, 3)), _view((4,)), None, 1e-5, float32), "weight has shape"),
    (("mse_loss", _view((2, 3)), _view((3, 2)), "mean", float32), "b has shape"),
    (("mse_loss", _view((2, 3)), _view((2, 3)), "average", float32), "reduction must be one of"),
    (("dropout", _view((2,)), -1, 0.5, float32), "seed must be"),
    (("batch_norm", _view((2,)), None, None, 1e-5, float32), "at least 2 dimensions"),
])
def test_a_declaration_names_the_kernel_and_what_does_not_fit(call, message):
    name, *args = call
    with pytest.raises(ValueError, match=message) as err:
        kernels.check(name, *args)
    assert str(err.value).startswith(name)


def test_a_declaration_gives_one_shape_and_dtype_per_output():
    assert kernels.outputs("layer_norm", (_view((2, 3)), None, None, 1e-5, float32)) == [
        ((2, 3), float32), ((2,), float32), ((2,), float32)]
    assert kernels.outputs("layer_norm_backward", (_view((2, 3)), _view((2, 3)), _view((2,)), _view((2,)), None,
                                                   float32))[1:] == [None, None]
    assert KERNELS["layer_norm"].multiple and not KERNELS["softmax"].multiple
