"""The modules of stage3_native/lazy form a one-way pipeline (graph, the kernels, plan,
cache, realize, backend on top): each imports only modules before it, at its top. Read from
the source with ast, so a cycle is found without importing anything; an import inside a
function would hide one from Python, so none may name a sibling."""
import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.stage3

LAZY = Path(__file__).resolve().parent.parent / "stage3_native" / "lazy"
PACKAGE = "stage3_native.lazy"


def siblings(node, modules):
    """The lazy modules an import statement names (relative: ``from . import x``, ``from .x
    import y``; or absolute, through stage3_native.lazy)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names if a.name.startswith(PACKAGE + ".")]
        return {n[len(PACKAGE) + 1:].split(".")[0] for n in names} & modules
    if node.level == 1:
        parts = node.module.split(".") if node.module else []
    elif node.level == 0 and node.module and (node.module + ".").startswith(PACKAGE + "."):
        parts = node.module[len(PACKAGE) + 1:].split(".") if node.module != PACKAGE else []
    else:
        return set()            # outside the package: ..cpu.backend, stage2_tensor, ...
    if parts:
        return {parts[0]} & modules
    return {a.name for a in node.names} & modules        # from . import kernels


def imports(modules):
    """{module: {sibling: [(line, inside a function)]}} for every lazy module."""
    found = {}
    for name in modules:
        tree = ast.parse((LAZY / f"{name}.py").read_text())
        found[name] = {}
        in_function = set()
        for f in ast.walk(tree):
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
                in_function.update(id(n) for n in ast.walk(f) if n is not f)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for sibling in siblings(node, modules):
                    found[name].setdefault(sibling, []).append((node.lineno, id(node) in in_function))
    return found


def cycle(graph):
    """One cycle of ``graph`` ({module: modules it imports}) as a list that starts and ends
    with the same module, or None."""
    state, path = {}, []

    def visit(m):
        state[m] = "open"
        path.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == "open":
                return path[path.index(n):] + [n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        path.pop()
        state[m] = "done"
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


MODULES = {p.stem for p in LAZY.glob("*.py")}
IMPORTS = imports(MODULES)


def test_no_function_imports_a_sibling_module():
    hidden = [f"{m}.py:{line} imports {s}" for m, named in sorted(IMPORTS.items())
              for s, where in sorted(named.items()) for line, inside in where if inside]
    assert not hidden, ("imports of lazy modules inside functions (each hides a cycle from Python; "
                        "move the code so the import can be at the top): " + "; ".join(hidden))


def test_the_modules_import_each_other_without_a_cycle():
    found = cycle({m: set(named) for m, named in IMPORTS.items()})
    assert found is None, "lazy/ modules import each other in a cycle: " + " -> ".join(found)


def test_the_checks_see_relative_and_function_imports():
    """The parser finds what it must: an import in a function, a relative import of a
    module, of a name from a module, and a cycle through them."""
    tree = ast.parse("from . import kernels\nfrom .plan import plan\nfrom .. import build\n"
                     "from stage3_native.lazy.graph import Node\nimport stage3_native.lazy.cache\n")
    named = [siblings(node, {"kernels", "plan", "graph", "cache"}) for node in tree.body]
    assert named == [{"kernels"}, {"plan"}, set(), {"graph"}, {"cache"}]
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None
