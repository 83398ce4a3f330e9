"""The one device list (engines.py): its table of missing kernels is the backends' truth,
its params carry the markers conftest.py reads, and no other test module keeps a list of
devices of its own."""
import ast
from pathlib import Path

import pytest

from .engines import DEVICES, ENGINES, LACKS, device_params, has_kernel, kernels

TESTS = Path(__file__).resolve().parent


def backend_class(device):
    """The class whose methods are `device`'s kernels, found without opening a CUDA library."""
    import stage3_native  # noqa: F401
    from stage2_tensor.python_backend import PythonBackend
    from stage3_native.cpu.backend import CpuBackend
    from stage3_native.cuda.backend import CudaBackend
    from stage3_native.lazy.backend import LazyBackend
    return {"python": PythonBackend, "cpu": CpuBackend, "cpu:lazy": LazyBackend,
            "cuda-emu": CudaBackend, "cuda": CudaBackend}[device]


@pytest.mark.parametrize("device", DEVICES)
def test_lacks_says_which_kernels_the_backend_has(device):
    cls = backend_class(device)
    table = kernels()
    assert {"matmul", "attention", "linear_cross_entropy_backward", "conv_bands"} <= set(table)
    wrong = [k for k in table if has_kernel(device, k) != callable(getattr(cls, k, None))]
    assert not wrong, f"engines.LACKS is wrong for {device!r} about {wrong}"
    assert LACKS[device] <= set(table)


def test_device_params_carry_stage_and_device_and_leave_out_those_without_the_kernel():
    params = device_params()
    assert [p.id for p in params] == list(DEVICES)
    for p in params:
        marks = {m.name: m.args for m in p.marks}
        assert marks["device"] == (p.values[0],)
        assert marks.keys() & {"stage2", "stage3"} == {"stage2" if p.id == "python" else "stage3"}
    assert [p.id for p in device_params(kernel="attention")] == ["cpu", "cpu:lazy"]
    assert [p.id for p in device_params(lacking="attention")] == ["python", "cuda-emu", "cuda"]
    assert [p.id for p in device_params("cuda", "python")] == ["python", "cuda"]
    with pytest.raises(AssertionError, match="no such device"):
        device_params("tpu")
    with pytest.raises(AssertionError, match="not a kernel"):
        device_params(kernel="memory_allocated")
    assert [e.device for e in ENGINES[1:]] == list(DEVICES)


def device_lists(source):
    """The lines of `source` where a module-level assignment, or a decorator (a parametrize),
    holds a list, tuple or set literal with two devices or more among its elements (a name,
    or a pytest.param of one)."""
    def device(element):
        if isinstance(element, ast.Call) and element.args:
            element = element.args[0]
        return isinstance(element, ast.Constant) and element.value in DEVICES

    found = []
    for node in ast.parse(source).body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            roots = [node.value]
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            roots = node.decorator_list
        else:
            continue
        for literal in (n for root in roots for n in ast.walk(root)):
            if isinstance(literal, (ast.List, ast.Tuple, ast.Set)) and sum(map(device, literal.elts)) >= 2:
                found.append(literal.lineno)
                break
    return found


def test_the_check_finds_a_list_of_devices():
    assert device_lists('DEVICES = ["python", pytest.param("cpu", marks=m)]\nX = [1, "cpu"]\n') == [1]
    assert device_lists('D = [pytest.param(d) for d in ("cuda-emu", "cuda")]\n') == [1]
    assert device_lists('@pytest.mark.parametrize("device", ["cpu", "cpu:lazy"])\ndef test(device):\n    pass\n') == [1]
    assert device_lists('def f():\n    return ["python", "cpu"]\n') == []          # a test's own pair
    assert device_lists('P = [("cpu:lazy", None), ("cpu", "float16")]\n') == []    # cases, one device each


def test_no_test_module_but_engines_lists_devices():
    offenders = {p.name: lines for p in sorted(TESTS.glob("*.py")) if p.name != "engines.py"
                 and (lines := device_lists(p.read_text()))}
    assert not offenders, f"device lists outside engines.py (use engines.device_params): {offenders}"
