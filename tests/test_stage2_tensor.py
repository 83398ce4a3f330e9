"""stage2's storage, strides, views, dtypes, factories and the backend boundary."""
import logging
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st

import stage2_tensor as tg
from stage2_tensor import backend
from stage2_tensor.broadcast import broadcast_shapes
from stage2_tensor.python_backend import PythonBackend
from stage2_tensor.strides import flat_index, is_contiguous, make_strides, view_strides

from .engines import device_params

pytestmark = pytest.mark.stage2

shapes = st.lists(st.integers(1, 4), min_size=0, max_size=4).map(tuple)


@given(shapes)
def test_make_strides_matches_numpy(shape):
    a = np.zeros(shape, dtype=np.float64)
    assert make_strides(shape) == tuple(s // 8 for s in a.strides)


@given(shapes, st.data())
def test_flat_index_matches_numpy(shape, data):
    a = np.arange(int(np.prod(shape))).reshape(shape)
    index = tuple(data.draw(st.integers(0, n - 1)) for n in shape)
    assert a.reshape(-1)[flat_index(index, make_strides(shape))] == a[index]


@given(shapes, st.data())
def test_view_strides_agrees_with_numpy_on_when_a_copy_is_needed(shape, data):
    """numpy's reshape(copy=False) raises exactly when no strides can show the new shape."""
    order = data.draw(st.permutations(range(len(shape))))
    a = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape).transpose(order)
    n = a.size
    new_shape = data.draw(st.sampled_from([s for s in [(n,), (1, n), (n, 1)] + [
        (d, n // d) for d in range(1, n + 1) if n % d == 0] + [a.shape[::-1]] if int(np.prod(s)) == n]))
    strides = view_strides(a.shape, tuple(s // 8 for s in a.strides), new_shape)
    try:
        b = np.reshape(a, new_shape, copy=False)
    except ValueError:
        assert strides is None
        return
    assert strides is not None
    t = tg.tensor(np.arange(n, dtype=np.float64).reshape(shape).tolist(), dtype=tg.float64).permute(*order)
    np.testing.assert_array_equal(t.view(*new_shape).numpy(), b)


def test_views_share_storage():
    x = tg.arange(12.0).reshape(3, 4)
    t, s, e = x.T, x[1:, ::2], x[0].expand(2, 4)
    assert t.storage is s.storage is e.storage is x.storage
    assert (t.strides, s.strides, s.offset, e.strides) == ((1, 4), (4, 2), 4, (0, 1))
    x[1, 2] = 100.0                                       # write through one view...
    assert t[2, 1].item() == s[0, 1].item() == 100.0      # ...read it through the others
    assert not t.is_contiguous() and x.is_contiguous()


def test_reshape_copies_only_when_it_must():
    x = tg.arange(6.0).reshape(2, 3)
    assert x.reshape(3, 2).storage is x.storage
    assert x.T.reshape(6).storage is not x.storage


@pytest.mark.parametrize("device", device_params("python", "cpu"))
def test_reshape_checks_the_shape_asked_for(device):
    x = tg.arange(16.0, device=device).reshape(4, 4)
    assert x.reshape(2, -1).shape == (2, 8) and x.reshape(-1).tolist() == list(range(16))
    assert x[:, 1:].reshape(-1).tolist() == [v for v in range(16) if v % 4]    # copied: not contiguous
    for shape, message in [((-2, -8), "negative size other than -1"), ((-1, -1), "more than one -1"),
                           ((3, 5), "holds 15 elements, but the tensor has 16"), ((5, -1), "cannot hold 16")]:
        with pytest.raises(ValueError, match=message):
            x.reshape(*shape)


def test_expand_has_stride_zero():
    x = tg.tensor([[1.0], [2.0]])
    e = x.expand(2, 3)
    assert e.strides == (1, 0) and e.tolist() == [[1.0] * 3, [2.0] * 3]


@pytest.mark.parametrize("index", [1, -1, (1, 2), (slice(None), 1), (slice(1, None, 2),), (..., 0),
                                   (None, 1), (0, None, slice(None, None, 3)), (Ellipsis, None)])
def test_basic_indexing_matches_numpy(index):
    a = np.arange(24.0).reshape(2, 3, 4)
    assert tg.tensor(a.tolist())[index].tolist() == a[index].tolist()


def test_integer_tensor_indexing_matches_numpy():
    a = np.arange(12.0).reshape(3, 4)
    t = tg.tensor(a.tolist())
    assert t[tg.tensor([[2, 0], [1, 1]])].tolist() == a[[[2, 0], [1, 1]]].tolist()
    assert t[tg.tensor([0, 2]), tg.tensor([3, 1])].tolist() == a[[0, 2], [3, 1]].tolist()


@pytest.mark.parametrize("index, error", [(5, IndexError), ((0, 0, 0), IndexError), (1.5, TypeError),
                                          (tg.tensor([0.5]), IndexError)])
def test_bad_indices(index, error):
    with pytest.raises(error):
        tg.zeros(3, 4)[index]


@pytest.mark.parametrize("a, b, expected", [
    (tg.bool, tg.int32, tg.int32), (tg.int32, tg.int64, tg.int64), (tg.int64, tg.float32, tg.float32),
    (tg.float32, tg.float64, tg.float64), (tg.bool, tg.float32, tg.float32)])
def test_promotion_between_tensors(a, b, expected):
    assert (tg.ones(2, dtype=a) + tg.ones(2, dtype=b)).dtype is expected
    assert (tg.ones(2, dtype=b) * tg.ones(2, dtype=a)).dtype is expected


@pytest.mark.parametrize("dtype, scalar, expected", [
    (tg.float32, 2.5, tg.float32), (tg.float64, 2, tg.float64), (tg.int32, 2, tg.int32),
    (tg.int32, 2.5, tg.float32), (tg.bool, 1, tg.int64)])
def test_promotion_with_python_numbers(dtype, scalar, expected):
    assert (tg.ones(2, dtype=dtype) * scalar).dtype is expected


def test_true_division_and_comparisons():
    assert (tg.tensor([1, 2]) / 2).dtype is tg.float32
    assert (tg.tensor([1, 2]) > 1).dtype is tg.bool
    assert (tg.tensor([1, 2]) > 1).tolist() == [False, True]


def test_tensor_from_nested_lists():
    assert tg.tensor([[1, 2], [3, 4]]).dtype is tg.int64
    assert tg.tensor([1, 2.5]).dtype is tg.float32
    assert tg.tensor([True, False]).dtype is tg.bool
    assert tg.tensor(3.0).shape == ()
    with pytest.raises(ValueError, match="rectangular"):
        tg.tensor([[1, 2], [3]])
    with pytest.raises(TypeError, match="str"):
        tg.tensor(["a"])


def test_item_and_len():
    assert tg.tensor([[7]]).item() == 7
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        tg.tensor([1, 2]).item()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.bool_])
def test_numpy_round_trip(dtype):
    a = (np.arange(6).reshape(2, 3) % 3).astype(dtype)
    t = tg.from_numpy(a)
    assert t.dtype.name == np.dtype(dtype).name
    np.testing.assert_array_equal(t.numpy(), a)
    assert t.numpy().dtype == a.dtype


@pytest.mark.parametrize("shape", [(0, 3), (2, 0, 4), ()])
def test_from_numpy_keeps_the_shape(shape):
    # a copy keeps the array's shape, also where a dimension is 0 (a nested list would not)
    a = np.zeros(shape, dtype=np.float32)
    assert tg.from_numpy(a).shape == shape and tg.tensor(a).shape == shape
    np.testing.assert_array_equal(tg.from_numpy(a).numpy(), a)


def test_factories_match_numpy():
    np.testing.assert_array_equal(tg.arange(2, 11, 3).numpy(), np.arange(2, 11, 3))
    np.testing.assert_array_equal(tg.full((2, 3), 7.0).numpy(), np.full((2, 3), 7.0, dtype=np.float32))
    assert tg.zeros(2, 3).tolist() == [[0.0] * 3] * 2 and tg.ones((3,)).tolist() == [1.0] * 3
    assert tg.zeros_like(tg.ones(2, dtype=tg.int64)).dtype is tg.int64


def test_random_factories_repeat_after_seed():
    tg.seed(5)
    a = tg.randn(3, 4).tolist(), tg.rand(5).tolist()
    tg.seed(5)
    assert (tg.randn(3, 4).tolist(), tg.rand(5).tolist()) == a
    u = tg.uniform((1000,), -2, 3).numpy()
    assert u.min() >= -2 and u.max() < 3 and abs(u.mean() - 0.5) < 0.2
    n = tg.normal((2000,), 1.0, 2.0).numpy()
    assert abs(n.mean() - 1.0) < 0.2 and abs(n.std() - 2.0) < 0.2


def test_max_with_dim_returns_values_and_indices():
    a = np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 7.0]])
    t = tg.tensor(a.tolist())
    values, indices = t.max(dim=1)
    assert values.tolist() == a.max(1).tolist() and indices.tolist() == a.argmax(1).tolist()
    assert t.argmax().item() == a.argmax() and t.argmin(dim=0).tolist() == a.argmin(0).tolist()


def test_one_hot():
    assert tg.one_hot(tg.tensor([2, 0]), 3).tolist() == [[0, 0, 1], [1, 0, 0]]


@given(st.lists(st.integers(1, 3), min_size=0, max_size=3), st.data())
def test_broadcast_shapes_matches_numpy(shape, data):
    other = tuple(data.draw(st.sampled_from([1, n])) for n in shape[data.draw(st.integers(0, len(shape))):])
    assert broadcast_shapes(tuple(shape), other) == np.broadcast_shapes(tuple(shape), other)


class PartialBackend(PythonBackend):
    """A backend without a unary kernel: the Tensor must fall back to the python one."""
    name = "partial"
    unary = None


def test_missing_kernel_falls_back_to_python_with_one_log_line(caplog):
    backend.register("partial", PartialBackend())
    x = tg.tensor([0.0, 1.0], device="partial")
    with caplog.at_level(logging.WARNING, logger="tracegrad"):
        y = x.exp()
        z = x.tanh()
    assert y.device == "partial" and y.tolist() == pytest.approx([1.0, 2.718281828])
    assert z.tolist() == pytest.approx([0.0, 0.761594156])
    messages = [r.getMessage() for r in caplog.records]
    assert messages == ["op unary not found in backend partial, falling back to python"]


def test_unknown_device():
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        tg.zeros(2, device="tpu")


def test_unknown_device_lists_the_plugins_devices_before_they_are_imported():
    """A fresh program that has imported stage2 only: the list still names stage3's
    devices, because get() loads the plugins (the installed entry points of group
    backend.PLUGIN_GROUP) before it lists."""
    code = "import stage2_tensor as tg\ntry:\n    tg.zeros(1, device='tpu')\nexcept ValueError as err:\n    print(err)"
    printed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    assert printed.startswith("unknown device 'tpu'; devices: ")
    for device in ("'python'", "'cpu'", "'cpu:lazy'", "'cuda'", "'cuda-emu'"):
        assert device in printed


class FakeEntryPoint:
    """What importlib.metadata.entry_points yields, as much as backend.load_plugins uses."""
    def __init__(self, value, register):
        self.value, self.load = value, lambda: register


@pytest.fixture
def plugins(monkeypatch):
    """Installs the entry points a test appends to the list it gets, in a registry that
    has not loaded its plugins yet (and is restored afterwards)."""
    installed = []
    monkeypatch.setattr(backend, "_BACKENDS", dict(backend._BACKENDS))
    monkeypatch.setattr(backend, "_LOADERS", dict(backend._LOADERS))
    monkeypatch.setattr(backend, "_plugin_errors", None)
    monkeypatch.setattr(backend.importlib.metadata, "entry_points",
                        lambda group: [e for e in installed if group == backend.PLUGIN_GROUP])
    return installed


def test_a_plugin_registers_its_device_through_its_entry_point_once(plugins):
    calls = []

    def register():
        calls.append(1)
        backend.register("plugged", PythonBackend())

    plugins.append(FakeEntryPoint("plugged_package:register", register))
    assert tg.zeros(2, device="plugged").device == "plugged"
    with pytest.raises(ValueError, match="unknown device 'tpu'; devices: .*'plugged'"):
        tg.zeros(2, device="tpu")
    assert calls == [1]                     # the second unknown name did not load it again


def test_a_plugin_that_fails_to_load_is_listed_with_its_error_not_raised(plugins):
    from importlib.metadata import EntryPoint
    plugins.append(EntryPoint("broken", "no_such_tracegrad_plugin:register", backend.PLUGIN_GROUP))
    plugins.append(FakeEntryPoint("plugged_package:register",
                                  lambda: backend.register("plugged", PythonBackend())))
    with pytest.raises(ValueError) as err:
        tg.zeros(2, device="tpu")
    assert "'plugged'" in str(err.value)    # the plugins after the broken one still load
    assert ("more from no_such_tracegrad_plugin:register, which failed to load: "
            "ModuleNotFoundError: No module named 'no_such_tracegrad_plugin'") in str(err.value)
    assert tg.zeros(2, device="plugged").tolist() == [0.0, 0.0]


def test_stage2_never_names_the_packages_that_register_devices():
    """Devices come from registration (entry points), so stage2 works, and can be read,
    without stage3: no file of it mentions stage3_native."""
    root = Path(backend.__file__).parent
    naming = [str(p.relative_to(root)) for p in root.rglob("*.py") if "stage3_native" in p.read_text()]
    assert naming == []


def test_to_device_and_dtype():
    x = tg.tensor([1.5, 2.5], requires_grad=True)
    y = x.to(dtype=tg.float64)
    assert y.dtype is tg.float64 and y.tolist() == [1.5, 2.5]
    (y * 2).sum().backward()
    assert x.grad.dtype is tg.float32 and x.grad.tolist() == [2.0, 2.0]
    assert x.to(x.device) is x


def test_contiguity():
    assert is_contiguous((2, 3), (3, 1)) and not is_contiguous((2, 3), (1, 2))
    assert is_contiguous((1, 3), (7, 1))                  # size-1 dims may have any stride


def test_relu_of_negatives_is_positive_zero():
    out = tg.tensor([-0.5, 0.0, 2.0, float("nan")]).relu().tolist()
    assert [str(v) for v in out] == ["0.0", "0.0", "2.0", "nan"]


def test_skip_init_gives_zeros_on_the_device_then_draws_again():
    from stage2_tensor.factories import skip_init
    tg.seed(0)
    first = tg.randn(3).tolist()
    tg.seed(0)
    with skip_init():
        assert tg.randn(2, 3).tolist() == [[0.0] * 3] * 2
        assert tg.nn.Linear(4, 2).weight.abs().sum().item() == 0      # layers' initialisation too
    with skip_init("cpu"):
        assert tg.rand(5, device="python").device == "cpu"            # made on the target device
    assert tg.randn(3).tolist() == first                               # nothing was drawn meanwhile
