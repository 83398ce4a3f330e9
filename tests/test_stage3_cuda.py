"""Device "cuda" and its CPU emulator "cuda-emu": the build, the error without a GPU, memory,
copies, and every op on strided layouts against device "cpu". The checks of kernels every
device has (copies, conversions, views, broadcasts) run on every device. The gradient
checks and the numpy comparisons of every op run on every device through the shared suite
(engines.py); the kernel families have their own files (test_stage3_cuda_*.py)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import stage2_tensor as tg
from stage2_tensor import backend
from stage3_native import cuda_build
from stage3_native.cuda import backend as cuda_backend

from .engines import CUDA, ENGINES, device_params
from .optable import LAYOUTS, ops_for

# The CUDA checks are make test-slow's: each test on a CUDA device (conftest.py), and those
# of the build and of the errors without a GPU (marked slow)
pytestmark = pytest.mark.stage3

CUDA_REASON = cuda_backend.unavailable_reason("cuda")
LAYOUTS_AND_CONTIGUOUS = {"contiguous": lambda x: x, **LAYOUTS}
CUDA_EMU = next(e for e in ENGINES if e.name == "stage3-cuda-emu")
# every op against device "cpu" in float32 (python against cpu: test_stage3_cpu.py)
LAYOUT_DEVICES = device_params("cpu:lazy", *CUDA)


@pytest.mark.slow
@pytest.mark.skipif(cuda_build.nvcc() is None, reason="nvcc is not installed: nothing to compile the CUDA sources with")
def test_nvcc_compiles_the_cuda_sources(monkeypatch):
    """CI has nvcc and no GPU: this is where a CUDA syntax error fails it. The library is
    rebuilt when a source is newer (the package install builds it first where there is a
    GPU). With no GPU to run it, one architecture is enough to compile every kernel: the
    sources have no code of their own for any one (no __CUDA_ARCH__)."""
    assert not any("__CUDA_ARCH__" in p.read_text() for p in cuda_build.SOURCES.glob("*.cu*"))
    if cuda_build.no_gpu():
        monkeypatch.setenv("TRACEGRAD_CUDA_ARCH", "80")
    library = cuda_build.ensure_built("cuda")
    assert library.exists() and not cuda_build.is_stale("cuda")


@pytest.mark.slow
def test_the_emulator_compiles_the_same_sources():
    library = cuda_build.ensure_built("cuda-emu")
    assert library.exists() and not cuda_build.is_stale("cuda-emu")
    assert sorted(p.name for p in cuda_build.SOURCES.glob("*.cu"))     # the sources both libraries share


@pytest.mark.slow
def test_a_newer_shared_formula_header_makes_the_libraries_stale(tmp_path, monkeypatch):
    """The .cu files include csrc's formula headers (each formula written once): an edit
    there rebuilds the CUDA libraries as an edit to a .cu file does."""
    assert {p.name for p in cuda_build.SHARED} >= {"tg_fn.h", "elementwise_math.h"}
    cuda_build.ensure_built("cuda-emu")
    header = tmp_path / "elementwise_math.h"
    header.write_text("/* edited */")
    later = cuda_build.LIBRARIES["cuda-emu"].stat().st_mtime + 10
    os.utime(header, (later, later))
    monkeypatch.setattr(cuda_build, "SHARED", [header])
    assert cuda_build.is_stale("cuda-emu")


@pytest.mark.slow
def test_only_a_newer_c_or_cuda_source_makes_the_libraries_stale(tmp_path, monkeypatch):
    """The cuda/ folder holds backend.py too: editing the Python that calls the library
    rebuilds nothing; editing a .cu file does."""
    cuda_build.ensure_built("cuda-emu")
    built = cuda_build.LIBRARIES["cuda-emu"].stat().st_mtime
    folder = tmp_path / "cuda"
    folder.mkdir()
    for name, when in (("elementwise.cu", built - 10), ("backend.py", built + 10)):
        (folder / name).write_text("")
        os.utime(folder / name, (when, when))
    monkeypatch.setattr(cuda_build, "SOURCES", folder)
    assert not cuda_build.is_stale("cuda-emu")
    os.utime(folder / "elementwise.cu", (built + 10, built + 10))
    assert cuda_build.is_stale("cuda-emu")


@pytest.mark.parametrize("device", device_params())
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_abs_clears_the_sign_of_zero_as_on_the_cpu(device, dtype):
    """abs is elementwise_math.h's fabs on every device: abs(-0.0) is +0.0, as in PyTorch.
    The CUDA kernels had their own x < 0 ? -x : x, which keeps -0.0."""
    t = tg.from_numpy(np.array([-0.0, -2.0, 3.0], dtype=dtype), device=device)
    got = abs(t).numpy()
    np.testing.assert_array_equal(got, [0.0, 2.0, 3.0])
    assert not np.signbit(got[0])


@pytest.mark.slow
@pytest.mark.skipif(CUDA_REASON is None, reason="a GPU is present: device 'cuda' runs")
def test_without_a_gpu_device_cuda_says_why():
    with pytest.raises(RuntimeError, match=r"device 'cuda' cannot run here: ") as err:
        tg.tensor([1.0], device="cuda")
    assert str(err.value).endswith(CUDA_REASON)
    assert any(why in CUDA_REASON
               for why in ("nvcc was not found", "NVIDIA's driver library", "no CUDA device was found"))


@pytest.mark.slow
def test_without_a_driver_nothing_is_built_to_find_no_gpu(monkeypatch):
    """No NVIDIA driver means no GPU: the quick check says so, and nvcc (minutes) never runs."""
    monkeypatch.setattr(cuda_build, "DRIVER", "libtracegrad-no-such-driver.so.1")
    monkeypatch.setattr(cuda_backend, "_LIBRARIES", {})
    monkeypatch.setattr(cuda_build, "build", lambda device: pytest.fail("built a library on a machine with no GPU"))
    reason = cuda_backend.unavailable_reason("cuda")
    unbuildable = "the CUDA library was not built: nvcc was not found (on the PATH or in $CUDA_HOME/bin)"
    no_driver = "no CUDA GPU: NVIDIA's driver library (libtracegrad-no-such-driver.so.1) was not found"
    assert reason in (unbuildable, no_driver)
    assert cuda_backend.quick_reason("cuda") == reason


@pytest.mark.slow
def test_unknown_devices_list_the_cuda_devices_and_why_they_cannot_run():
    with pytest.raises(ValueError, match=r"unknown device 'tpu'.*'cuda'.*'cuda-emu'") as err:
        tg.tensor([1.0], device="tpu")
    for device in ("cuda", "cuda-emu"):
        reason = cuda_backend.quick_reason(device)
        assert (f"'{device}' (cannot run here: {reason})" in str(err.value)) == (reason is not None)


@pytest.mark.parametrize("device", device_params(*CUDA))
def test_device_name(device):
    name = backend.get(device).device_name()
    assert name and (("emulator" in name) == (device == "cuda-emu"))


@pytest.mark.parametrize("device", device_params(*CUDA))
def test_buffers_are_freed_with_their_tensor_and_reused(device):
    be = backend.get(device)
    before = be.memory_allocated()
    t = tg.ones(1 << 16, device=device)                     # 256 KiB of float32
    assert be.memory_allocated() - before >= (1 << 18)
    reserved = be.memory_reserved()
    del t
    assert be.memory_allocated() == before                   # back to the cache...
    u = tg.ones(1 << 16, device=device)
    assert be.memory_reserved() == reserved                  # ...and reused: no new device memory
    del u
    be.empty_cache()
    assert be.memory_reserved() == be.memory_allocated()     # the cache handed back


NO_CACHING_CHILD = """
import stage2_tensor as tg
from stage2_tensor import backend
be = backend.get({device!r})
before = be.memory_reserved()
t = tg.ones(3, device={device!r})
exact = be.memory_reserved() - before
del t
print(exact, be.memory_reserved() - before)
"""


@pytest.mark.parametrize("device", device_params(*CUDA))
def test_without_the_cache_blocks_are_exact_and_freed_at_once(device):
    """TRACEGRAD_CUDA_NO_CACHING=1, for compute-sanitizer's memcheck: 3 floats take 12 bytes,
    not a 512-byte block, and the block goes back to the driver with its tensor. The library
    reads the variable when it loads: a fresh process."""
    env = {**os.environ, "TRACEGRAD_CUDA_NO_CACHING": "1"}
    result = subprocess.run([sys.executable, "-c", NO_CACHING_CHILD.format(device=device)], env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["12", "0"]


@pytest.mark.parametrize("device", device_params(*CUDA))
def test_runtime_errors_carry_the_runtime_message(device):
    with pytest.raises(cuda_backend.CudaError, match=r"allocating \d+ bytes on device .*: out of memory"):
        backend.get(device).allocate(1 << 60, tg.float32)


@pytest.mark.parametrize("device", device_params())
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool"])
def test_every_dtype_crosses_to_the_device_and_back_bit_exact(device, dtype):
    a = (np.arange(-6, 6).reshape(3, 4) * 1.25).astype(dtype)
    t = tg.from_numpy(a, device=device)
    assert t.device == device and t.dtype.name == dtype
    np.testing.assert_array_equal(t.numpy(), a)
    np.testing.assert_array_equal(t.T.numpy(), a.T)                        # a strided copy
    np.testing.assert_array_equal(t.T.to("cpu").numpy(), a.T)
    assert t.tolist() == a.tolist() and t[1, 2].item() == a[1, 2]
    assert tg.tensor(a.tolist(), dtype=getattr(tg, dtype), device=device).tolist() == a.tolist()


@pytest.mark.parametrize("device", device_params())
@pytest.mark.parametrize("source", ["float32", "float64", "int32", "int64", "bool"])
@pytest.mark.parametrize("target", ["float32", "float64", "int32", "int64", "bool"])
def test_dtype_conversions_match_numpy(device, source, target):
    a = np.array([[-2.75, 0.0, 1.5], [3.0, -0.5, 7.25]]).astype(source)
    t = tg.from_numpy(a, device=device).T                                  # through strides
    converted = t.to(dtype=getattr(tg, target))
    np.testing.assert_array_equal(converted.numpy(), a.T.astype(target))


@pytest.mark.parametrize("device", device_params())
def test_views_and_writes_through_them(device):
    a = np.arange(24.0).reshape(2, 3, 4)
    t = tg.from_numpy(a.copy(), device=device)
    np.testing.assert_array_equal(t[:, 1:, ::2].numpy(), a[:, 1:, ::2])
    np.testing.assert_array_equal(t.permute(2, 0, 1).contiguous().numpy(), a.transpose(2, 0, 1))
    np.testing.assert_array_equal(t[0, :, :1].expand(3, 4).numpy(), np.broadcast_to(a[0, :, :1], (3, 4)))
    t[1, :, 1:3] = tg.tensor([-1.0, -2.0], dtype=tg.float64, device=device)     # broadcast into a view
    a[1, :, 1:3] = [-1.0, -2.0]
    np.testing.assert_array_equal(t.numpy(), a)


@pytest.mark.parametrize("device", LAYOUT_DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS_AND_CONTIGUOUS)
@pytest.mark.parametrize("op", ops_for(CUDA_EMU), ids=lambda op: op.name)
def test_every_op_agrees_with_cpu_on_every_layout(op, layout, device):
    """Each op of the shared table on contiguous, transposed and strided views, float32,
    against device "cpu" (the shared suite checks both against numpy in float64)."""
    rng = np.random.default_rng(7)
    shapes = op.shapes or [(2, 3)] * (3 if op.arity == -1 else op.arity)
    domains = op.domains * len(shapes) if op.arity == -1 else op.domains
    inputs = [d.sample(rng, s).astype(np.float32) for d, s in zip(domains, shapes)]
    results = {}
    for dev in ("cpu", device):
        xs = [LAYOUTS_AND_CONTIGUOUS[layout](t) if t.ndim else t
              for t in (tg.tensor(a.tolist(), device=dev) for a in inputs)]
        results[dev] = op.apply(tg, *xs)
        assert results[dev].device == dev
    np.testing.assert_allclose(results[device].numpy(), results["cpu"].numpy(), rtol=3e-6, atol=2e-6)


@pytest.mark.parametrize("device", device_params())
def test_large_broadcasts_cover_every_element(device):
    """More elements than the grid has threads (the emulator gives every launch 2 blocks of
    256): the grid-stride loop must reach them all, through a broadcast column and row."""
    rng = np.random.default_rng(0)
    a, col, row = rng.normal(size=(300, 7)), rng.normal(size=(300, 1)), rng.normal(size=(7,))
    t = tg.from_numpy(a, device=device) * tg.from_numpy(col, device=device) + tg.from_numpy(row, device=device)
    np.testing.assert_allclose(t.numpy(), a * col + row, rtol=1e-15)
