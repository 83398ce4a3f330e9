"""How stage2_tensor is put together: its modules import one another without a cycle
(tensor.py knows no operation; methods.py binds the operations onto Tensor), and the
methods Tensor has are the functions methods.py wrote, bound without a wrapper."""
import ast
from pathlib import Path

import stage2_tensor
from stage2_tensor.methods import TensorMethods
from stage2_tensor.tensor import Tensor

PACKAGE = Path(stage2_tensor.__file__).parent


def module_names():
    """Each module of the package by its dotted name inside it ("" for the package itself)."""
    names = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def imports(name, path, modules):
    """The package's modules that module ``name`` imports, anywhere in it (a function-level
    import is an edge too: hiding one in a function does not remove a cycle)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.split(".") if package else []
            base = base[:len(base) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:           # `from . import views` names a module
                child = f"{target}.{alias.name}".lstrip(".")
                found.add(child if child in modules else target)
    return found - {name}


def find_cycle(graph):
    """A list of modules that import one another in a circle, or None."""
    state = {}                                 # 1: on the current path, 2: done

    def visit(node, path):
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt, path + [nxt])):
                return cycle
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node, [node])):
            return cycle
    return None


def test_the_package_imports_form_no_cycle():
    modules = module_names()
    graph = {name: imports(name, path, modules) & set(modules) for name, path in modules.items()}
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))
    operations = {"elementwise", "reduce", "views", "matmul", "softmax", "concat", "factories",
                  "interop", "backward", "gradient_function", "methods"}
    assert not graph["tensor"] & operations


def test_find_cycle_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_methods_are_bound_as_written():
    # the same function objects: x + y runs TensorMethods.__add__ itself, no wrapper between
    written = {n: v for n, v in vars(TensorMethods).items() if callable(v) or isinstance(v, property)}
    assert {"__add__", "sum", "view", "backward", "T"} <= set(written)
    assert [n for n, v in written.items() if Tensor.__dict__.get(n) is not v] == []
