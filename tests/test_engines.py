"""The one device list (engines.py): its params carry the markers conftest.py reads, leave
out the devices without a test's kernel, and no other test module keeps a list of devices
of its own."""
import ast
from pathlib import Path

import pytest

from .engines import DEVICES, ENGINES, backend_class, device_params, has_kernel, kernels

TESTS = Path(__file__).resolve().parent


@pytest.mark.parametrize("device", DEVICES)
def test_a_device_has_the_kernels_its_backend_class_has(device):
    table = kernels()
    assert {"matmul", "attention", "linear_cross_entropy_backward", "conv_bands"} <= set(table)
    lacks = getattr(backend_class(device), "lacks", frozenset())    # a native device's own word
    assert not [k for k in lacks if has_kernel(device, k)], f"{device!r} has a kernel it says it lacks"
    assert has_kernel(device, "matmul") and has_kernel(device, "layer_norm_backward")


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
